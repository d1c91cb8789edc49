package patchparse

// A unified diff's hunks: read line by line, their ends checked.

import (
	"fmt"
	"strings"
)

// emptyBlob reports whether an index line's old id is none or names the
// empty blob (SHA-1 e69de29…, SHA-256 473a0f4c…), abbreviated or not.
func emptyBlob(id string) bool {
	id = strings.ToLower(id)
	return id == "" || len(id) >= 7 && (strings.HasPrefix("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", id) ||
		strings.HasPrefix("473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813", id))
}

// chunksAll reports whether every line of chunks is op: a side of the
// file is empty. At least one chunk is needed (an empty file on both sides
// has none, and is no creation or removal).
func chunksAll(chunks []*Chunk, op byte) bool {
	for _, c := range chunks {
		for _, l := range c.Lines() {
			if l.Op != op {
				return false
			}
		}
	}
	return len(chunks) > 0
}

// checkHunkEnd refuses a hunk cut in two by a line that is no hunk line (a
// context line that lost its leading space, say): reading on would apply
// half of it. j is the line after the hunk.
func checkHunkEnd(L lines, j, hi int) error {
	if j+1 >= hi || L.at(j) == "" || isDiffMarker(L.at(j)) || strings.HasPrefix(L.at(j), "@@") || strings.HasPrefix(L.at(j), "diff ") {
		return nil
	}
	if n := L.at(j + 1); n != "" && strings.IndexByte(" +-", n[0]) >= 0 && isHunkLine(L, j+1, hi) {
		return unprefixed(L, j)
	}
	return nil
}

// unprefixed is the error for hunk line j that starts with none of ' ', '-'
// and '+' (Codex's wording), with a hint naming the line: most often a
// context line that lost its leading space.
func unprefixed(L lines, j int) error {
	return hunkError(j, fmt.Sprintf("if line %d is context, prefix it with a space: ' %s' (removed lines start with '-', added ones with '+')", j+1, L.at(j)),
		"Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", L.at(j))
}

// readHunk reads the hunk whose "@@" header is line i (headerless: whose
// first line is line i) and returns it and the index of the line after it.
func readHunk(r *hunkReader, i, hi int, headerless bool) (*Chunk, int) {
	L := r.L
	c := &Chunk{Line: i + 1, NoHeader: headerless}
	hasCounts := false
	start := i + 1
	if headerless {
		start = i
	} else if h := L.at(i); strings.HasPrefix(h, "@@ ") {
		if os, ol, ns, nl, _, ok := parseRange(h[3:]); ok {
			c.OldStart, c.OldLines, c.NewStart, c.NewLines = os, ol, ns, nl
			hasCounts = true
		}
	}
	j := start
	if hasCounts {
		// Read by the counts while the lines agree with them.
		remOld, remNew := c.OldLines, c.NewLines
		for j < hi && (remOld > 0 || remNew > 0) {
			l := L.at(j)
			var op byte = ' '
			if l != "" {
				op = l[0]
			}
			switch op {
			case ' ':
				remOld--
				remNew--
			case '-':
				remOld--
			case '+':
				remNew--
			case '\\':
			default:
				remOld, remNew = -1, -1 // a non-hunk line: the counts were too big
				continue
			}
			if remOld < 0 || remNew < 0 {
				break // the counts were too small
			}
			j++
		}
		for j < hi && len(L.at(j)) > 0 && L.at(j)[0] == '\\' {
			j++
		}
		if remOld == 0 && remNew == 0 && !moreHunkLines(L, j, hi) {
			return c.fill(r, start, j), j
		}
		j = start
	}
	// No counts, or counts that do not fit: read up to the next header or
	// non-diff line; empty lines count only when hunk lines follow them.
	for j < hi {
		if !isHunkLine(L, j, hi) {
			break
		}
		if L.at(j) == "" && !moreHunkLines(L, j, hi) {
			break
		}
		j++
	}
	return c.fill(r, start, j), j
}

// isHunkLine reports whether line j continues a hunk body read without counts.
func isHunkLine(L lines, j, hi int) bool {
	l := L.at(j)
	if l == "" {
		return true
	}
	switch l[0] {
	case ' ', '+', '\\':
		return true
	case '-':
		if strings.HasPrefix(l, "--- ") && j+1 < hi && strings.HasPrefix(L.at(j+1), "+++ ") {
			return false // the next file
		}
		if l == "-- " && (j+1 >= hi || !isDiffMarker(L.at(j+1))) {
			return false // git format-patch's signature separator
		}
		return true
	}
	return false
}

func isDiffMarker(l string) bool {
	return l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\'
}

// moreHunkLines reports whether, after any empty lines from j, a line
// follows that continues the hunk (not the next file's header).
func moreHunkLines(L lines, j, hi int) bool {
	for j < hi && L.at(j) == "" {
		j++
	}
	if j >= hi || L.at(j) == "" {
		return false
	}
	switch L.at(j)[0] {
	case ' ', '+', '-':
		return isHunkLine(L, j, hi)
	}
	return false
}

// hunkReader is what a unified diff's hunks are read with: the patch's
// lines, the cutter of its text, and what the hunks keep to read their
// lines again (text).
type hunkReader struct {
	L    lines
	k    cutter
	text *hunkText
}

// hunkText is what a unified diff's hunk keeps of the patch to read its
// lines when asked (Chunk.Lines, Chunk.All): the patch's text, and whether
// its lines' endings are the lines' own (lines.ownEndings).
type hunkText struct {
	text    string
	endings bool
}

// fill makes c the hunk of patch lines [start,end) ("\" lines mark the
// line before): its "\ No newline" marks and its number of lines now, the
// lines themselves when asked for (hunkText.each) — or now, when the
// patch's text is too long for a line to say where its text lies in it.
func (c *Chunk) fill(r *hunkReader, start, end int) *Chunk {
	L := r.L
	n, last := 0, byte(0)
	for i := start; i < end; i++ {
		switch l := L.at(i); {
		case l == "":
			n, last = n+1, ' '
		case l[0] == '\\':
			switch last {
			case 0:
			case '-':
				c.OldNoNewline = true
			case '+':
				c.NewNoNewline = true
			default:
				c.OldNoNewline, c.NewNoNewline = true, true
			}
		default:
			n, last = n+1, l[0]
		}
	}
	if r.k.src != "" {
		c.from, c.src = r.text, r.k.src
		c.first, c.n = int32(start), int32(n)
		c.off, c.stop = int32(L.start[start]), int32(L.start[end])
		return c
	}
	r.k.cutLines(c, n, func(add func(op byte, line int, text string)) {
		for i := start; i < end; i++ {
			switch l := L.at(i); {
			case l == "":
				add(' ', i+1, "")
			case l[0] != '\\':
				add(l[0], i+1, l[1:])
			}
		}
	})
	for k := range c.lines {
		_, cr := L.line(int(c.lines[k].Line) - 1)
		c.lines[k].EOL = ending(r.text.endings, cr)
	}
	return c
}

// each yields hunk c's lines, read from the patch's text as splitLines
// and fill read them.
func (h *hunkText) each(c *Chunk, yield func(ChunkLine) bool) {
	text := h.text[:c.stop]
	line := c.first
	for p := int(c.off); p < len(text); line++ {
		l, cr, next := cutLine(text, p)
		cl := ChunkLine{Op: ' ', Line: line + 1, EOL: ending(h.endings, cr)}
		switch {
		case l == "":
		case l[0] == '\\':
			p = next
			continue
		default:
			cl.Op, cl.at, cl.n = l[0], int32(p)+1, int32(len(l)-1)
		}
		p = next
		if !yield(cl) {
			return
		}
	}
}
