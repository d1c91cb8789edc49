package patchparse

import (
	"strings"
	"unicode"
)

// SEARCH/REPLACE blocks, as aider's "diff" and "diff-fenced" edit formats
// write them (and the models trained on them):
//
//	path/to/file.py
//	```python
//	<<<<<<< SEARCH
//	lines to find
//	=======
//	lines to put in their place
//	>>>>>>> REPLACE
//	```
//
// The file's path is alone on a line before the block — before its fence
// (diff) or inside it (diff-fenced); a block without one edits the file of
// the block before it. Markers have 5 to 9 characters; a text line that
// reads as a divider makes the block one reading per such line
// (dividers.go). Each block is one chunk of the file's Update: its SEARCH
// lines removed, its REPLACE lines added, found in the file as the engine
// finds any chunk (a unique place, its careful fuzzy passes), the blocks
// in order (each on the file the ones before it left). A block whose
// SEARCH is empty creates the file with its REPLACE lines.
// Text around the blocks (prose, fences) is passed over.

// isSearchReplace recognises aider's formats (formats): SEARCH/REPLACE
// blocks, or whole files (wholefile.go).
func isSearchReplace(in *input) bool {
	if _, ok := wholeFiles(in); ok && !hasSearch(in) {
		return true
	}
	return hasSearch(in)
}

// hasSearch reports a SEARCH marker line with a REPLACE marker after it,
// and no Codex patch begun before them.
func hasSearch(in *input) bool {
	for i := in.tlo; i < in.thi; i++ {
		l := strings.TrimSpace(in.L.at(i))
		if l == "*** Begin Patch" {
			return false
		}
		if searchMarker(l) {
			for j := i + 1; j < in.thi; j++ {
				if replaceMarker(strings.TrimSpace(in.L.at(j))) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// searchMarker, divider and replaceMarker recognise the three marker
// lines (trimmed): "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", with 5
// to 9 characters.
func searchMarker(l string) bool  { return marker(l, '<', " SEARCH") }
func divider(l string) bool       { return marker(l, '=', "") }
func replaceMarker(l string) bool { return marker(l, '>', " REPLACE") }

func marker(l string, c byte, word string) bool {
	n := 0
	for n < len(l) && l[n] == c {
		n++
	}
	return n >= 5 && n <= 9 && l[n:] == word
}

// block is one SEARCH/REPLACE block.
type block struct {
	path  string
	reads []reading // its readings (dividers), the first preferred
	line  int       // 0-based index of its SEARCH marker
}

// blockGrammar is how one kind of block marks its parts: the marker lines
// (trimmed) that start it, divide it and end it, and how a content line is
// read (unescape: Roo's backslash; nil: as it is).
type blockGrammar struct {
	start, divider, end func(string) bool
	unescape            func(string) string
	shape               string // a block as a hint describes it
	endName             string // the end marker, as messages name it
	escape              string // how to write a divider line in a block's text
}

// aider's markers (searchreplace.go) and Cline's and Roo's (blocks.go).
var (
	aiderBlocks = blockGrammar{start: searchMarker, divider: divider, end: replaceMarker,
		shape:   "a block is <<<<<<< SEARCH, the lines to find, =======, the lines to put in their place, >>>>>>> REPLACE",
		endName: ">>>>>>> REPLACE",
		escape:  "write the block's markers with a length none of its text's ======= lines has (nine characters: <<<<<<<<< SEARCH, =========, >>>>>>>>> REPLACE)"}
	clineBlocks = blockGrammar{start: blockStart, divider: func(t string) bool { return isRun(t, '=') }, end: blockEnd, unescape: unescapeMarker,
		shape:   "a block is ------- SEARCH, the lines to find, =======, the lines to put in their place, +++++++ REPLACE",
		endName: "+++++++ REPLACE (or >>>>>>> REPLACE)",
		escape:  `write each ======= line of the block's text with a backslash before it (\=======), as Roo Code escapes a marker in its text`}
)

// body reads the block whose start marker is at line i, its SEARCH lines
// beginning at j (after any header), to its end marker, whose index it
// returns with the block's readings (dividers): the first the one its
// first divider line makes; hi bounds the text.
func (g blockGrammar) body(L lines, i, j, hi int) (reads []reading, end int, err error) {
	first := -1 // the first divider line
	k := j
	for ; k < hi; k++ {
		t := strings.TrimSpace(L.at(k))
		switch {
		case first < 0 && (g.start(t) || g.end(t)):
			return nil, 0, hunkError(k, g.shape, "expected ======= before %q (the block begun on line %d)", t, i+1)
		case g.start(t):
			return nil, 0, hunkError(k, "end the block's REPLACE lines with a "+g.endName+" line", "expected %s before another SEARCH (the block begun on line %d)", g.endName, i+1)
		case g.end(t):
			reads = g.dividers(L, i, j, k)
			if len(reads) > maxReadings {
				return nil, 0, hunkError(i, g.escape, "the block's text holds %d lines that read as its ======= divider; hunk tries at most %d ways of dividing a block", len(reads)-1, maxReadings)
			}
			return reads, k, nil
		case first < 0 && g.divider(t):
			first = k
		}
	}
	if first < 0 {
		return nil, 0, hunkError(i, "end the block's SEARCH lines with a ======= line", "the block has no ======= line")
	}
	return nil, 0, hunkError(i, "end the block's REPLACE lines with a "+g.endName+" line", "the block has no REPLACE line")
}

// blockChunk is the chunk of a block read as reads says: the first
// reading's lines, and every reading as its Splits when there are several.
func blockChunk(reads []reading, line int) *Chunk {
	c := &Chunk{Line: line}
	lines, guessed := BlockLines(reads[0].search, reads[0].replace)
	c.SetLines(lines)
	c.Guessed = guessed
	if len(reads) > 1 {
		for _, r := range reads {
			s := Split{Divider: r.divider + 1, Mark: r.mark}
			s.Lines, s.Guessed = BlockLines(r.search, r.replace)
			c.Splits = append(c.Splits, s)
		}
	}
	return c
}

// emptySearch reports whether a block's SEARCH text is empty or blank.
func emptySearch(search []Line) bool {
	for _, l := range search {
		if !isBlank(l.Text) {
			return false
		}
	}
	return true
}

// parseSearchReplaceInput parses in as SEARCH/REPLACE blocks (formats).
func parseSearchReplaceInput(in *input) (*Patch, error) {
	if files, ok := wholeFiles(in); ok && !hasSearch(in) {
		return wholePatch(files)
	}
	L := in.L
	var blocks []block
	path, last := "", in.tlo-1 // the previous block's path and last line
	for i := in.tlo; i < in.thi; i++ {
		if !searchMarker(strings.TrimSpace(L.at(i))) {
			if t := strings.TrimSpace(L.at(i)); replaceMarker(t) {
				return nil, hunkError(i, aiderBlocks.shape, "%q without a <<<<<<< SEARCH line before it", t)
			}
			continue
		}
		b := block{line: i}
		if p, ok := blockPath(L, last+1, i); ok {
			path = p
		}
		if path == "" {
			return nil, hunkError(i, "put the file's path alone on the line before the block (or before its ``` fence)", "the SEARCH/REPLACE block names no file")
		}
		b.path = path
		var err error
		var k int
		if b.reads, k, err = aiderBlocks.body(L, i, i+1, in.thi); err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
		last, i = k, k
	}
	if len(blocks) == 0 {
		return nil, noFiles("a block is <<<<<<< SEARCH, the lines to find, =======, the lines to put in their place, >>>>>>> REPLACE, after a line naming the file")
	}
	return blocksPatch(blocks)
}

// blockPath finds the path a block at line i names: the nearest line above
// it (within [lo,i), at most three lines up) that is not blank or a fence,
// when it reads as a path — one word, maybe in backticks or bold, maybe
// followed by a colon.
func blockPath(L lines, lo, i int) (string, bool) {
	// The first line above that is neither blank nor a fence decides.
	for j := i - 1; j >= lo; j-- {
		t := strings.TrimSpace(L.at(j))
		if t == "" || isFence(t) {
			continue
		}
		t = strings.TrimLeft(t, "#") // a Markdown heading: ### path/to/file.py
		t = strings.TrimSpace(t)
		t = strings.TrimSuffix(t, ":")
		t = strings.Trim(t, "*`'\"")
		if t == "" || strings.ContainsAny(t, " \t") || len(t) > 4096 || !strings.ContainsFunc(t, isWordChar) {
			return "", false // prose: "...", "…", "---" name no file (aider's own examples)
		}
		return t, true
	}
	return "", false
}

// isFence reports whether t (trimmed) opens or closes a fence: ``` or ~~~
// (with a language after), or aider's other fences, <source>, <code> and
// <pre> (<source>python, </source>).
func isFence(t string) bool {
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		return true
	}
	for _, tag := range []string{"source", "code", "pre"} {
		for _, open := range []string{"<" + tag, "</" + tag} {
			if rest, ok := strings.CutPrefix(t, open); ok && (strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, " ")) && strings.Contains(rest, ">") {
				_, after, _ := strings.Cut(rest, ">")
				return !strings.ContainsAny(after, " \t<") // <source>python: a language, nothing more
			}
		}
	}
	return false
}

// isWordChar reports whether r is a letter or a digit: a path has one.
func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// blocksPatch turns blocks into file operations: the blocks of one path
// (in the order the paths first appear) are the chunks of its Update; a
// single block whose SEARCH is empty is an Add of its REPLACE lines.
func blocksPatch(blocks []block) (*Patch, error) {
	p := &Patch{Format: SearchReplace}
	ops := map[string]*FileOp{}
	for _, b := range blocks {
		f := ops[b.path]
		empty := emptySearch(b.reads[0].search)
		switch {
		case f == nil && empty:
			f = &FileOp{Kind: Add, Path: b.path, Line: b.line + 1}
			for _, l := range b.reads[0].replace {
				f.Content = append(f.Content, l.Text)
			}
			ops[b.path] = f
			p.Files = append(p.Files, f)
			continue
		case f == nil:
			f = &FileOp{Kind: Update, Path: b.path, Line: b.line + 1}
			ops[b.path] = f
			p.Files = append(p.Files, f)
		case f.Kind == Add || empty:
			return nil, hunkError(b.line, "give a new file one block with an empty SEARCH and the whole content as its REPLACE, or edit an existing file with blocks that each SEARCH for lines it has",
				"%s: a block with an empty SEARCH creates the file, and it has another block", b.path)
		}
		f.Chunks = append(f.Chunks, blockChunk(b.reads, b.line+1))
	}
	return p, nil
}

// BlockLines is a block's chunk: the lines its SEARCH and REPLACE texts
// share (a longest common subsequence) are context, the rest removed and
// added lines — so that a line the block only repeats keeps the file's
// own text where it matched loosely (its trailing whitespace, its quotes),
// as a careful person applying the block by hand would keep it. guessed
// reports that another reading as good tells the lines apart otherwise
// (which of two equal lines is removed).
func BlockLines(search, replace []Line) (lines []Line, guessed bool) {
	n, m := len(search), len(replace)
	if n == 0 || m == 0 {
		return append(search, replace...), false
	}
	if n*m > 1<<20 {
		return append(search, replace...), true
	}
	first := align(search, replace, false)
	last := align(search, replace, true)
	if len(first) != len(last) {
		return first, true
	}
	for i := range first {
		if first[i].Op != last[i].Op || first[i].Line != last[i].Line {
			return first, true
		}
	}
	return first, false
}

// align is a longest common subsequence of the two texts as a chunk:
// matched as early as possible, or (late) as late as possible.
func align(search, replace []Line, late bool) []Line {
	n, m := len(search), len(replace)
	at := func(s []Line, i, n int) Line {
		if late {
			return s[n-1-i]
		}
		return s[i]
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case at(search, i, n).Text == at(replace, j, m).Text:
				lcs[i][j] = lcs[i+1][j+1] + 1
			case lcs[i+1][j] >= lcs[i][j+1]:
				lcs[i][j] = lcs[i+1][j]
			default:
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	out := make([]Line, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		s, r := at(search, i, n), at(replace, j, m)
		switch {
		case s.Text == r.Text:
			s.Op = ' '
			out = append(out, s)
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, s)
			i++
		default:
			out = append(out, r)
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, at(search, i, n))
	}
	for ; j < m; j++ {
		out = append(out, at(replace, j, m))
	}
	if late {
		for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
			out[a], out[b] = out[b], out[a]
		}
		// Reversed, removed lines follow added ones: put each run of
		// removed and added lines back in the order -, +.
		for a := 0; a < len(out); {
			if out[a].Op == ' ' {
				a++
				continue
			}
			b := a
			for b < len(out) && out[b].Op != ' ' {
				b++
			}
			run := append([]Line(nil), out[a:b]...)
			k := a
			for _, op := range []byte{'-', '+'} {
				for _, l := range run {
					if l.Op == op {
						out[k] = l
						k++
					}
				}
			}
			a = b
		}
	}
	return out
}
