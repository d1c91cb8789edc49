package merge

import (
	"bytes"
	"strings"
)

// fill writes the merge: ours where neither side changed, each side's
// changes, and each conflict between markers (xdl_fill_merge_buffer); it
// returns the number of conflicts.
func fill(out *bytes.Buffer, e1, e2 *env, rs []region, opt Options) int {
	conflicts, i := 0, 0
	for _, m := range rs {
		if m.mode == 0 && opt.Favor != Conflict {
			m.mode = int(opt.Favor) // ours 1, theirs 2, union 3: no conflict left
		}
		switch {
		case m.mode == 0:
			conflicts++
			fillConflict(out, e1, e2, i, m, opt)
		case m.mode&3 != 0:
			copyLines(out, e1.post, i, m.i1-i, false, false)
			if m.mode&1 != 0 {
				copyLines(out, e1.post, m.i1, m.chg1, crNeeded(e1, e2, m), m.mode&2 != 0)
			}
			if m.mode&2 != 0 {
				copyLines(out, e2.post, m.i2, m.chg2, false, false)
			}
		default: // the same change on both sides: ours, copied with what follows
			continue
		}
		i = m.i1 + m.chg1
	}
	copyLines(out, e1.post, i, e1.post.n()-i, false, false)
	return conflicts
}

// fillConflict writes ours up to the conflict, then the conflict
// (fill_conflict_hunk, in git's "merge" style: no base section).
func fillConflict(out *bytes.Buffer, e1, e2 *env, i int, m region, opt Options) {
	size := opt.MarkerSize
	if size <= 0 {
		size = 7
	}
	cr := crNeeded(e1, e2, m)
	marker := func(c byte, label string) {
		out.WriteString(strings.Repeat(string(c), size))
		if label != "" {
			out.WriteByte(' ')
			out.WriteString(label)
		}
		if cr {
			out.WriteByte('\r')
		}
		out.WriteByte('\n')
	}
	copyLines(out, e1.post, i, m.i1-i, false, false)
	marker('<', opt.Ours)
	copyLines(out, e1.post, m.i1, m.chg1, cr, true)
	marker('=', "")
	copyLines(out, e2.post, m.i2, m.chg2, cr, true)
	marker('>', opt.Theirs)
}

// copyLines writes count lines of s from i; with addNL a last line
// without its newline gets one (CRLF when cr), so a marker that follows
// starts a line of its own (xdl_recs_copy_0).
func copyLines(out *bytes.Buffer, s *side, i, count int, cr, addNL bool) {
	if count < 1 {
		return
	}
	for _, r := range s.recs[i : i+count] {
		out.Write(r)
	}
	if last := s.recs[i+count-1]; addNL && (len(last) == 0 || last[len(last)-1] != '\n') {
		if cr {
			out.WriteByte('\r')
		}
		out.WriteByte('\n')
	}
}

// eolCRLF tells whether line i of s ends in CRLF: 1 yes, 0 no, -1 cannot
// tell (an empty file, a one-line file without a newline); a last line
// without a newline goes by the line before it (is_eol_crlf).
func eolCRLF(s *side, i int) int {
	crlf := func(r []byte) int {
		if len(r) > 1 && r[len(r)-2] == '\r' {
			return 1
		}
		return 0
	}
	switch {
	case i < s.n()-1:
		return crlf(s.recs[i])
	case s.n() == 0:
		return -1
	}
	if r := s.recs[i]; len(r) > 0 && r[len(r)-1] == '\n' {
		return crlf(r)
	}
	if i == 0 {
		return -1
	}
	return crlf(s.recs[i-1])
}

// crNeeded tells whether lines added around a conflict end in CRLF: when
// both sides' lines before it do, and the base's first line does or cannot
// tell (is_cr_needed).
func crNeeded(e1, e2 *env, m region) bool {
	before := func(i int) int {
		if i > 0 {
			return i - 1
		}
		return 0
	}
	need := eolCRLF(e1.post, before(m.i1))
	if need != 0 {
		need = eolCRLF(e2.post, before(m.i2))
	}
	if need != 0 {
		need = eolCRLF(e1.base, 0)
	}
	return need > 0
}
