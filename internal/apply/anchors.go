package apply

// git's anchors (apply.c's match_beginning and match_end): a unified hunk
// with no trailing context ends the file, one whose header starts at line
// 1 begins it — where it is tried first, and what a place elsewhere must
// not be taken against.

import (
	"slices"

	"github.com/hunk-dev/hunk/internal/result"
)

// anchored is where git apply places a unified hunk first (apply.c's
// match_beginning and match_end): one without trailing context lines at
// the end of the file — its context ends where the file does — and one
// whose header starts at line 1 (or 0) at the beginning, when it fits
// there exactly (else the search goes on as for any chunk). A hunk with no
// context at all (-U0) has neither anchor, as git's --unidiff-zero.
func (lc *locator) anchored(p *prepared, from, to int, taken []span) (int, bool) {
	atEnd, atStart := lc.anchors(p)
	if !atEnd && !atStart {
		return 0, false
	}
	fits := func(at int) bool {
		return at >= from && at < to && matchAt(Exact, lc.file, p.old, at) && !overlaps(taken, span{at, at + len(p.old)})
	}
	switch end := lc.end(p); {
	case atEnd && fits(end):
		return end, true
	case atStart && fits(0):
		return 0, true
	}
	return 0, false
}

// anchors says whether git would hold a unified hunk to the end of the
// file (no trailing context) or to its beginning (a header at line 0 or 1).
func (lc *locator) anchors(p *prepared) (atEnd, atStart bool) {
	_, trailing, ok := lc.contextRuns(p)
	if !ok {
		return false, false
	}
	return trailing == 0, p.src.OldStart <= 1
}

// endsShort says a unified hunk's trailing context is shorter than its
// leading context: a diff tool gives as many lines after a change as
// before it unless the file ends (GNU patch's reading), so the chunk was
// made at the end of the file — though a file may have grown since.
func (lc *locator) endsShort(p *prepared) bool {
	leading, trailing, ok := lc.contextRuns(p)
	return ok && trailing > 0 && trailing < leading
}

// contextRuns is how many context lines a unified hunk has before its
// first change and after its last; ok is false for any other chunk, and a
// hunk with no context at all (-U0).
func (lc *locator) contextRuns(p *prepared) (leading, trailing int, ok bool) {
	unified := p.src.OldLines > 0 || p.src.NewLines > 0 // a "@@ -a,b +c,d @@" header's counts
	if !unified || lc.opt.blocks() || lc.opt.codex() || len(p.old) == 0 || len(p.old) > len(lc.file) {
		return 0, 0, false
	}
	for _, l := range p.lines {
		if l.op != ' ' {
			break
		}
		leading++
	}
	for i := len(p.lines) - 1; i >= 0 && p.lines[i].op == ' '; i-- {
		trailing++
	}
	return leading, trailing, leading > 0 || trailing > 0
}

// end is where a chunk's old lines would start to end the file.
func (lc *locator) end(p *prepared) int {
	return max(0, lc.stop()-len(p.old))
}

// stop is where the file's lines end: its last line break reads as an
// empty last line here, which no chunk's line is.
func (lc *locator) stop() int {
	stop := len(lc.file)
	if stop > 0 && lc.file[stop-1] == "" {
		stop--
	}
	return stop
}

// contextMask says, of each old line of the chunk, whether it is context
// (not removed).
func (p *prepared) contextMask() []bool {
	ctx := make([]bool, 0, len(p.old))
	for _, l := range p.lines {
		if l.op != '+' {
			ctx = append(ctx, l.op == ' ')
		}
	}
	return ctx
}

// nearAnchor says a chunk git holds to an end of the file, which does not
// fit there, nearly does: the file's first or last lines are its old lines
// with one or two context lines lost, changed or gained (fewer than it
// has). Then a place elsewhere, exact as it may be, is a twin as likely as
// the meant place: the file grew past the chunk, or the chunk's context
// drifted where it belongs. It returns each such place.
func (lc *locator) nearAnchor(p *prepared) ([]int, string) {
	atEnd, atStart := lc.anchors(p)
	if !atEnd && !atStart {
		return nil, ""
	}
	ctx := p.contextMask()
	var at []int
	if atEnd {
		stop := lc.stop()
		best := 3
		for k := max(1, len(p.old)-2); k <= len(p.old)+2 && k <= stop; k++ {
			if d := within2(p.old, ctx, lc.file[stop-k:stop]); d > 0 && d < len(p.old) {
				at = append(at, stop-k)
				if d < best { // the nearest reading first
					best, at[0], at[len(at)-1] = d, stop-k, at[0]
				}
			}
		}
		if len(at) > 0 {
			return at, "end"
		}
	}
	if atStart {
		for k := max(1, len(p.old)-2); k <= len(p.old)+2 && k <= len(lc.file); k++ {
			if d := within2(p.old, ctx, lc.file[:k]); d > 0 && d < len(p.old) {
				return []int{0}, "beginning"
			}
		}
	}
	return nil, ""
}

// within2 is the number of context lines lost, changed or gained that
// make old into lines, when at most two do (a removed line must be there
// as it is); 3 for more.
func within2(old []string, ctx []bool, lines []string) int {
	const far = 3
	n, m := len(old), len(lines)
	if abs(n-m) > 2 {
		return far
	}
	// d(i, j) for |i-j| <= 2, row i kept as j-i+2 in 0..4.
	prev, cur := make([]int, 5), make([]int, 5)
	get := func(row []int, i, j int) int {
		if k := j - i + 2; k >= 0 && k <= 4 && j >= 0 {
			return row[k]
		}
		return far
	}
	for i := 0; i <= n; i++ {
		for k := range cur {
			j := i + k - 2
			switch {
			case j < 0 || j > m:
				cur[k] = far
				continue
			case i == 0:
				cur[k] = j // lines gained before the first
				continue
			}
			best := far
			if j > 0 {
				if c := get(prev, i-1, j-1); old[i-1] == lines[j-1] {
					best = min(best, c)
				} else if ctx[i-1] {
					best = min(best, c+1) // changed
				}
				best = min(best, get(cur, i, j-1)+1) // gained
			}
			if ctx[i-1] {
				best = min(best, get(prev, i-1, j)+1) // lost
			}
			cur[k] = min(best, far)
		}
		prev, cur = cur, prev
	}
	return get(prev, n, m)
}

// nearShortEnd is where the end of the file nearly fits a chunk whose
// short trailing context says it was made there (endsShort), when pos, its
// exact match, lies wholly above every such reading: the end then holds
// the chunk with its context drifted, pos another section's copy of its
// lines (found by the drift test). -1 when not.
func (lc *locator) nearShortEnd(p *prepared, pos int) int {
	if atEnd, _ := lc.anchors(p); atEnd || !lc.endsShort(p) || len(p.old) < 3 {
		return -1 // git's own anchor is nearAnchor's
	}
	ctx, stop, at, best := p.contextMask(), lc.stop(), -1, 3
	for k := max(1, len(p.old)-2); k <= len(p.old)+2 && k <= stop; k++ {
		d := within2(p.old, ctx, lc.file[stop-k:stop])
		if d == 0 || d < len(p.old) && stop-k < pos+len(p.old) {
			return -1 // a reading of the end is pos's own place
		}
		if d < best && d < len(p.old) {
			best, at = d, stop-k
		}
	}
	return at
}

// anchorTwin refuses pos, where the chunk matches, when an end of the file
// it belongs to nearly holds it (nearAnchor, nearShortEnd); nil otherwise.
func (lc *locator) anchorTwin(p *prepared, pos int) error {
	if near, where := lc.nearAnchor(p); len(near) > 0 && !slices.Contains(near, pos) {
		return lc.twinOfAnchor(p, pos, near[0], where)
	}
	if at := lc.nearShortEnd(p, pos); at >= 0 {
		return lc.twinOfAnchor(p, pos, at, "end")
	}
	return nil
}

// twinOfAnchor refuses a chunk that matches at pos but nearly fits at the
// end (or the beginning) of the file it is held to.
func (lc *locator) twinOfAnchor(p *prepared, pos, at int, where string) error {
	return result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d) belongs at the %s of the file, where it nearly fits (line %d: a context line or two differ), and matches at line %d; refusing to guess",
		lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, where, at+1, pos+1).
		WithHint("check the file's "+where+" and the chunk's context lines: give the context the file has now, or more of it, so the chunk fits one place").
		At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", []int{min(at, pos) + 1, max(at, pos) + 1})
}

// nearHint is where, at the line a unified header names, the chunk nearly
// fits (one context line lost, changed or gained; never a removed line;
// four old lines at least) in a place apart from pos, where it matches
// whole; -1 when it does not, or pos is the header's line.
func (lc *locator) nearHint(p *prepared, pos int, taken []span) int {
	if p.hint < 0 || p.hint == pos || lc.opt.held || lc.opt.blocks() || lc.opt.codex() || p.src.OldLines == 0 {
		return -1
	}
	if len(p.old) < 4 {
		return -1 // three lines less one say too little
	}
	ctx := p.contextMask()
	// At the header's line, or a line or two from it: the drift that lost
	// a context line may have moved the place too (found by the drift
	// test: two lines gone just above a file's last chunk).
	for _, off := range []int{0, -1, 1, -2, 2} {
		at := p.hint + off
		if at < 0 {
			continue
		}
		for k := len(p.old) - 1; k <= len(p.old)+1; k++ {
			if at+k > len(lc.file) || at+k > pos && at < pos+len(p.old) || overlaps(taken, span{at, at + k}) {
				continue // apart from pos only: one place read twice is no twin
			}
			if within2(p.old, ctx, lc.file[at:at+k]) == 1 {
				return at
			}
		}
	}
	return -1
}
