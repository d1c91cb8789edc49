package merge

import "bytes"

// Level is how hard the merge works to make conflicts small (xdiff's
// XDL_MERGE_* levels from ZEALOUS up).
type Level int

const (
	// Zealous refines each conflict by a diff of its two sides and joins
	// conflicts three lines or fewer apart: git's ll_merge, so git apply
	// --3way, git merge and git cherry-pick.
	Zealous Level = iota
	// ZealousAlnum also joins conflicts separated only by lines without a
	// letter or digit: git merge-file's.
	ZealousAlnum
)

// Favor resolves what would conflict without markers (xdiff's
// XDL_MERGE_FAVOR_*: git apply --3way --ours, --theirs, --union).
type Favor int

const (
	Conflict Favor = iota // markers: git's default
	Ours                  // our side's lines
	Theirs                // their side's lines
	Union                 // ours, then theirs
)

// Options name the sides in the conflict markers.
type Options struct {
	Ours, Theirs string // the labels after <<<<<<< and >>>>>>> (git apply: "ours", "theirs")
	Level        Level
	MarkerSize   int   // 0: 7, git's default
	Favor        Favor // what a conflict becomes (Conflict: markers)
}

// Result is a merge's text and its number of conflicts.
type Result struct {
	Text      []byte
	Conflicts int
}

// region is one piece of the merge (xdiff's xdmerge_t): a conflict (mode
// 0), a change from one side (1: ours, 2: theirs), or a conflict found to
// be the same change on both sides (4). i1/chg1 are lines of ours, i2/chg2
// of theirs, i0/chg0 of the base.
type region struct {
	mode               int
	i0, chg0, i1, chg1 int
	i2, chg2           int
}

// Merge merges ours and theirs, both made from base, as git's xdl_merge
// does: the two diffs from base, their changes taken where they do not
// overlap, the same change made by both taken once, and the rest a
// conflict between <<<<<<<, ======= and >>>>>>> lines.
func Merge(base, ours, theirs []byte, opt Options) Result {
	b, o, t := lines(base), lines(ours), lines(theirs)
	s1, e1o, e1n := diff(b, o)
	s2, e2o, e2n := diff(b, t)
	switch {
	case len(s1) == 0:
		return Result{Text: theirs}
	case len(s2) == 0:
		return Result{Text: ours}
	}
	e1 := &env{base: e1o, post: e1n}
	e2 := &env{base: e2o, post: e2n}
	regions := doMerge(e1, s1, e2, s2)
	regions = refineConflicts(e1, e2, regions)
	regions = simplifyNonConflicts(e1, regions, opt.Level > Zealous)
	var out bytes.Buffer
	conflicts := fill(&out, e1, e2, regions, opt)
	return Result{Text: out.Bytes(), Conflicts: conflicts}
}

// env is one side's diff from the base (xdiff's xdfenv_t): the base and
// the side's lines.
type env struct{ base, post *side }

// appendMerge adds a region, joined with the last one when they touch
// (xdl_append_merge).
func appendMerge(rs []region, mode, i0, chg0, i1, chg1, i2, chg2 int) []region {
	if n := len(rs); n > 0 {
		m := &rs[n-1]
		if i1 <= m.i1+m.chg1 || i2 <= m.i2+m.chg2 {
			if mode != m.mode {
				m.mode = 0
			}
			m.chg0 = i0 + chg0 - m.i0
			m.chg1 = i1 + chg1 - m.i1
			m.chg2 = i2 + chg2 - m.i2
			return rs
		}
	}
	return append(rs, region{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2})
}

// doMerge walks both scripts over the base (xdl_do_merge, up to its
// refinement).
func doMerge(e1 *env, s1 []change, e2 *env, s2 []change) []region {
	var rs []region
	for len(s1) > 0 && len(s2) > 0 {
		x1, x2 := s1[0], s2[0]
		if x1.i1+x1.chg1 < x2.i1 {
			rs = appendMerge(rs, 1, x1.i1, x1.chg1, x1.i2, x1.chg2, x2.i2-x2.i1+x1.i1, x1.chg1)
			s1 = s1[1:]
			continue
		}
		if x2.i1+x2.chg1 < x1.i1 {
			rs = appendMerge(rs, 2, x2.i1, x2.chg1, x1.i2-x1.i1+x2.i1, x2.chg1, x2.i2, x2.chg2)
			s2 = s2[1:]
			continue
		}
		if x1.i1 != x2.i1 || x1.chg1 != x2.chg1 || x1.chg2 != x2.chg2 || !sameLines(e1.post, x1.i2, e2.post, x2.i2, x1.chg2) {
			off := x1.i1 - x2.i1
			ffo := off + x1.chg1 - x2.chg1
			i0, i1, i2 := x1.i1, x1.i2, x2.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x1.i1 + x1.chg1 - i0
			chg1 := x1.i2 + x1.chg2 - i1
			chg2 := x2.i2 + x2.chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			rs = appendMerge(rs, 0, i0, chg0, i1, chg1, i2, chg2)
		}
		end1, end2 := x1.i1+x1.chg1, x2.i1+x2.chg1
		if end1 >= end2 {
			s2 = s2[1:]
		}
		if end2 >= end1 {
			s1 = s1[1:]
		}
	}
	for _, x1 := range s1 {
		rs = appendMerge(rs, 1, x1.i1, x1.chg1, x1.i2, x1.chg2, x1.i1+e2.post.n()-e2.base.n(), x1.chg1)
	}
	for _, x2 := range s2 {
		rs = appendMerge(rs, 2, x2.i1, x2.chg1, x2.i1+e1.post.n()-e1.base.n(), x2.chg1, x2.i2, x2.chg2)
	}
	return rs
}

// sameLines reports whether n lines of a from i equal n lines of b from j
// (xdl_merge_cmp_lines).
func sameLines(a *side, i int, b *side, j, n int) bool {
	for k := 0; k < n; k++ {
		if !bytes.Equal(a.recs[i+k], b.recs[j+k]) {
			return false
		}
	}
	return true
}

// refineConflicts narrows each conflict to the lines where its two sides
// differ, by a diff of the one against the other; a conflict whose sides
// are equal is the same change made twice (xdl_refine_conflicts).
func refineConflicts(e1, e2 *env, rs []region) []region {
	out := make([]region, 0, len(rs))
	for _, m := range rs {
		if m.mode != 0 || m.chg1 == 0 || m.chg2 == 0 {
			out = append(out, m)
			continue
		}
		script, _, _ := diff(e1.post.recs[m.i1:m.i1+m.chg1], e2.post.recs[m.i2:m.i2+m.chg2])
		if len(script) == 0 {
			m.mode = 4
			out = append(out, m)
			continue
		}
		// The refined conflicts keep the first's base lines; xdiff leaves
		// the others' unset (only diff3 output shows them).
		for k, x := range script {
			r := region{mode: 0, i1: x.i1 + m.i1, chg1: x.chg1, i2: x.i2 + m.i2, chg2: x.chg2}
			if k == 0 {
				r.i0, r.chg0 = m.i0, m.chg0
			}
			out = append(out, r)
		}
	}
	return out
}

// simplifyNonConflicts joins two conflicts with three lines of ours or
// fewer between them (or, with noAlnum, only lines without a letter or a
// digit): one conflict reads more simply than two so close
// (xdl_simplify_non_conflicts).
func simplifyNonConflicts(e1 *env, rs []region, noAlnum bool) []region {
	if len(rs) == 0 {
		return rs
	}
	out := []region{rs[0]}
	for _, next := range rs[1:] {
		m := &out[len(out)-1]
		begin, end := m.i1+m.chg1, next.i1
		if m.mode != 0 || next.mode != 0 || (end-begin > 3 && (!noAlnum || hasAlnum(e1.post.recs[begin:end]))) {
			out = append(out, next)
			continue
		}
		m.chg1 = next.i1 + next.chg1 - m.i1
		m.chg2 = next.i2 + next.chg2 - m.i2
	}
	return out
}

// hasAlnum reports whether a line holds an ASCII letter or digit (git's
// isalnum, which knows no locale).
func hasAlnum(lines [][]byte) bool {
	for _, l := range lines {
		for _, c := range l {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}
