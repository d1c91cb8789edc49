// Package merge is git's three-way merge of text, as git apply --3way runs
// it: xdiff's Myers diff (with its pruning of lines that cannot match and its
// cut-offs on expensive inputs, so that the same inputs give the same
// differences), the change compaction git runs after it, and xdiff's merge
// at git's "zealous" level with its conflict markers. The code follows
// git's xdiff/xprepare.c, xdiffi.c and xmerge.c function by function, so a
// reader can hold the two side by side; where it differs, it says so.
package merge

// A line is one record: its bytes with its "\n" (the last line of a file
// without a final newline has none). Lines are equal when their bytes are.

// side is one file of a two-way diff (xdiff's xdfile_t).
type side struct {
	recs    [][]byte
	class   []int  // per line: equal lines have equal classes
	changed []bool // per line: not in the common subsequence
	// ref are the lines the diff looks at (xdiff's reference_index): those
	// left after the ends common to both files are trimmed and the lines
	// that cannot match are discarded.
	ref          []int
	dstart, dend int
}

func (s *side) n() int { return len(s.recs) }

// isChanged is changed[i], false outside the file (xdiff's sentinels).
func (s *side) isChanged(i int) bool { return i >= 0 && i < len(s.changed) && s.changed[i] }

// classes numbers equal lines alike across both files and counts each
// class's lines in either (xdiff's classifier).
type classes struct {
	ids        map[string]int
	len1, len2 []int
}

func (c *classes) classify(line []byte, pass int) int {
	id, ok := c.ids[string(line)]
	if !ok {
		id = len(c.len1)
		c.ids[string(line)] = id
		c.len1 = append(c.len1, 0)
		c.len2 = append(c.len2, 0)
	}
	if pass == 1 {
		c.len1[id]++
	} else {
		c.len2[id]++
	}
	return id
}

// lines splits text into lines, each with its "\n".
func lines(text []byte) [][]byte {
	var recs [][]byte
	for len(text) > 0 {
		i := 0
		for i < len(text) && text[i] != '\n' {
			i++
		}
		if i < len(text) {
			i++
		}
		recs = append(recs, text[:i:i])
		text = text[i:]
	}
	return recs
}

// change is one difference: lines [i1, i1+chg1) of the first file became
// lines [i2, i2+chg2) of the second (xdiff's xdchange_t).
type change struct {
	i1, i2, chg1, chg2 int
}

// diff is xdiff's Myers diff of a and b with the compaction git runs after
// it (xdl_do_diff, xdl_change_compact both ways, xdl_build_script): the
// changes in order, and both sides for the merge to read.
func diff(a, b [][]byte) ([]change, *side, *side) {
	x1, x2 := prepare(a, b)
	doDiff(x1, x2)
	compact(x1, x2)
	compact(x2, x1)
	return buildScript(x1, x2), x1, x2
}

// prepare classifies both files' lines and leaves out of the diff what
// need not be in it (xdl_prepare_env, without the histogram and patience
// branches).
func prepare(a, b [][]byte) (*side, *side) {
	c := &classes{ids: make(map[string]int, len(a)+len(b))}
	mk := func(recs [][]byte, pass int) *side {
		s := &side{recs: recs, class: make([]int, len(recs)), changed: make([]bool, len(recs))}
		for i, r := range recs {
			s.class[i] = c.classify(r, pass)
		}
		return s
	}
	x1, x2 := mk(a, 1), mk(b, 2)
	trimEnds(x1, x2)
	cleanupRecords(c, x1, x2)
	return x1, x2
}

// trimEnds finds the lines both files begin and end with (xdl_trim_ends).
func trimEnds(x1, x2 *side) {
	lim := min(x1.n(), x2.n())
	i := 0
	for i < lim && x1.class[i] == x2.class[i] {
		i++
	}
	x1.dstart, x2.dstart = i, i
	lim -= i
	j := 0
	for j < lim && x1.class[x1.n()-1-j] == x2.class[x2.n()-1-j] {
		j++
	}
	x1.dend = x1.n() - j - 1
	x2.dend = x2.n() - j - 1
}

const (
	discard = iota
	keep
	investigate
)

const (
	maxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	simscanWindow = 100  // XDL_SIMSCAN_WINDOW
	kpdisRun      = 4    // XDL_KPDIS_RUN
)

// bogosqrt is xdiff's integer square root approximation.
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// cleanupRecords discards lines that have no match in the other file, and
// lines with many matches amid such lines; they are changed whatever the
// diff finds (xdl_cleanup_records).
func cleanupRecords(c *classes, x1, x2 *side) {
	off := x1.dstart
	mark := func(x *side, length int, other []int) {
		mlim := min(bogosqrt(x.n()), maxEqLimit)
		action := make([]uint8, length)
		for i := range action {
			switch nm := other[x.class[i+off]]; {
			case nm == 0:
				action[i] = discard
			case nm < mlim:
				action[i] = keep
			default:
				action[i] = investigate
			}
		}
		x.ref = make([]int, 0, length)
		for i, a := range action {
			if a == investigate {
				a = keep
				if cleanMultimatch(action, i, length) {
					a = discard
				}
			}
			if a == keep {
				x.ref = append(x.ref, i+off)
			} else {
				x.changed[i+off] = true
			}
		}
	}
	mark(x1, x1.dend-off+1, c.len2)
	mark(x2, x2.dend-off+1, c.len1)
}

// cleanMultimatch reports whether the many-times-matched line i sits in a
// run of lines without a match, so that it is better discarded with them
// (xdl_clean_mmatch).
func cleanMultimatch(action []uint8, i, length int) bool {
	s, e := 0, length-1
	if i-s > simscanWindow {
		s = i - simscanWindow
	}
	if e-i > simscanWindow {
		e = i + simscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if action[i-r] == discard {
			rdis0++
		} else if action[i-r] == investigate {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if action[i+r] == discard {
			rdis1++
		} else if action[i+r] == investigate {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*kpdisRun < rpdis1+rdis1
}
