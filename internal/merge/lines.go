package merge

// Change is one difference of a two-way line diff: lines [Old, Old+OldN)
// of the first file became lines [New, New+NewN) of the second.
type Change struct {
	Old, OldN, New, NewN int
}

// Lines is git's own line diff of a and b, each a line with its "\n" (the
// last may lack it): xdiff's Myers, with its pruning of lines that cannot
// match and its cut-offs on expensive inputs — so a rewrite of thousands
// of lines costs what git diff's does, not the square of its length — and
// the compaction git runs after it. The changes come in order.
func Lines(a, b [][]byte) []Change {
	script, _, _ := diff(a, b)
	out := make([]Change, len(script))
	for i, c := range script {
		out[i] = Change{Old: c.i1, OldN: c.chg1, New: c.i2, NewN: c.chg2}
	}
	return out
}
