package patchparse

import (
	"slices"
	"strings"
)

// A block's text may hold lines its grammar reads as a divider: a Markdown
// heading underlined with "=", a merge conflict's "=======" being
// resolved. Split at the first such line, the block would edit the wrong
// lines; so every divider line is a possible reading, and the grammar
// drops the readings it can rule out (dividers). Those left are the
// block's Splits, decided by the file (the engine: the one reading whose
// SEARCH text is in the file, or the one of those that resolves whole
// merge conflicts) or refused as undecidable.

// reading is one way to divide a block: its divider's index and the two
// texts it leaves.
type reading struct {
	divider         int    // 0-based line index
	mark            string // its text, trimmed
	search, replace []Line
}

// dividers returns the readings of the block whose start marker is at
// line i, whose SEARCH lines begin at j and whose end marker is at k: one
// per divider line in [j,k), less those its grammar rules out.
func (g blockGrammar) dividers(L lines, i, j, k int) []reading {
	text := func(n int) string {
		if g.unescape != nil {
			return g.unescape(L.at(n))
		}
		return L.at(n)
	}
	var cands []int
	for n := j; n < k; n++ {
		if g.divider(strings.TrimSpace(L.at(n))) {
			cands = append(cands, n)
		}
	}
	switch {
	case len(cands) == 0:
		return nil
	case blankRun(L, j, cands[0]):
		// An empty SEARCH (a new file): no text begins with its divider.
		cands = cands[:1]
	case len(cands) > 1:
		cands = sameLength(L, cands, strings.TrimSpace(L.at(i)), strings.TrimSpace(L.at(k)))
	}
	reads := make([]reading, 0, len(cands))
	for _, d := range cands {
		r := reading{divider: d, mark: strings.TrimSpace(L.at(d))}
		for n := j; n < k; n++ {
			l := Line{Text: text(n), Line: int32(n + 1)}
			switch {
			case n < d:
				l.Op = '-'
				r.search = append(r.search, l)
			case n > d:
				l.Op = '+'
				r.replace = append(r.replace, l)
			}
		}
		reads = append(reads, r)
	}
	return reads
}

// DividerHint says how blocks of format f keep a line of their text from
// reading as their divider.
func DividerHint(f Format) string {
	if f == Cline || f == Roo {
		return clineBlocks.escape
	}
	return aiderBlocks.escape
}

// maxReadings bounds the readings of one block the engine tries.
const maxReadings = 16

// sameLength keeps the divider lines as long as the block's start and end
// markers (a block written <<<<<<< … >>>>>>> is divided by =======, a
// heading underlined ===== is text), when the two markers agree and some
// divider does; otherwise all of them.
func sameLength(L lines, cands []int, start, end string) []int {
	n := runLen(start)
	if n != runLen(end) {
		return cands
	}
	var keep []int
	for _, d := range cands {
		if runLen(strings.TrimSpace(L.at(d))) == n {
			keep = append(keep, d)
		}
	}
	if len(keep) == 0 {
		return cands
	}
	return keep
}

// blankRun reports whether lines [j,k) are all blank.
func blankRun(L lines, j, k int) bool {
	for ; j < k; j++ {
		if !isBlank(L.at(j)) {
			return false
		}
	}
	return true
}

// runLen is the length of the run of one character t starts with.
func runLen(t string) int {
	if t == "" {
		return 0
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	return n
}

// WholeConflicts reports whether a reading's SEARCH holds merge
// conflicts (a "<<<<<<< " line), each closed by a ">>>>>>> " line after
// it, and its REPLACE cuts none: the conflict's own "=======" is then
// text being resolved, not the block's divider.
func WholeConflicts(lines []Line) bool {
	var search, replace []Line
	for _, l := range lines {
		if l.Op != '+' {
			search = append(search, l)
		}
		if l.Op != '-' {
			replace = append(replace, l)
		}
	}
	return slices.ContainsFunc(search, func(l Line) bool { return conflictMarker(l.Text, '<') }) &&
		wholeConflicts(search) && wholeConflicts(replace)
}

func wholeConflicts(lines []Line) bool {
	depth := 0
	for _, l := range lines {
		switch {
		case conflictMarker(l.Text, '<'):
			depth++
		case conflictMarker(l.Text, '>'):
			if depth == 0 {
				return false
			}
			depth--
		}
	}
	return depth == 0
}

// conflictMarker recognises git's conflict markers: seven of c, then the
// end of the line or a space and a name.
func conflictMarker(l string, c byte) bool {
	if len(l) < 7 || strings.Count(l[:7], string(c)) != 7 {
		return false
	}
	return len(l) == 7 || l[7] == ' '
}
