package patchparse

import (
	"slices"
	"strings"
)

// DotPieces splits a SEARCH/REPLACE block at aider's "..." lines: where
// both its SEARCH and its REPLACE hold the same number of lines that are
// "..." alone (aider's "^\s*\.\.\.$"), each stands for lines the model left
// out, and the pieces between them are blocks of their own, paired in
// order — aider's try_dotdotdots. Nil when the block has none, when the
// counts differ (aider's "Unpaired ..."), when a piece pairs an empty
// SEARCH with text (aider appends it to the file; hunk does not guess
// where), when two pieces are the same block (which of them is which
// place is not known), or when the block's divider is not decided yet.
func DotPieces(c *Chunk) []*Chunk {
	if len(c.Splits) > 1 {
		return nil
	}
	var search, replace [][]Line
	ns, nr := 0, 0
	cut := func(sides *[][]Line, n *int, l Line, op byte) {
		for len(*sides) <= *n {
			*sides = append(*sides, nil)
		}
		if IsDots(l.Text) {
			*n++
			return
		}
		l.Op = op
		(*sides)[*n] = append((*sides)[*n], l)
	}
	for _, l := range c.TextLines() {
		if l.Op != '+' {
			cut(&search, &ns, l, '-')
		}
		if l.Op != '-' {
			cut(&replace, &nr, l, '+')
		}
	}
	if ns == 0 || ns != nr {
		return nil
	}
	for len(search) <= ns {
		search = append(search, nil)
	}
	for len(replace) <= nr {
		replace = append(replace, nil)
	}
	var pieces []*Chunk
	var texts [][]Line
	for k := range search {
		s, r := search[k], replace[k]
		if len(s) == 0 && len(r) == 0 {
			continue
		}
		if emptySearch(s) {
			return nil
		}
		lines, guessed := BlockLines(s, r)
		for _, q := range texts {
			if SameLines(q, lines) {
				return nil
			}
		}
		texts = append(texts, lines)
		p := &Chunk{Line: c.Line, Guessed: guessed, DotsBefore: k > 0, DotsAfter: k < len(search)-1}
		p.SetLines(lines)
		pieces = append(pieces, p)
	}
	return pieces
}

// SameLines reports whether two runs of lines are the same lines, each
// with the same op and text.
func SameLines(a, b []Line) bool {
	return slices.EqualFunc(a, b, func(x, y Line) bool { return x.Op == y.Op && x.Text == y.Text })
}

// IsDots reports whether a line is aider's "..." alone (any indentation).
func IsDots(text string) bool { return strings.TrimSpace(text) == "..." }
