package apply

// Recovery: a chunk that elides part of the file ("...", "// ... existing
// code ...") between lines it gives.

import (
	"slices"
	"strings"
)

// isElision reports whether a context line stands for lines the model left
// out: "...", "…", or a comment holding only that (and words such as
// "existing code"): "// ...", "# … rest unchanged …", "/* ... */".
func isElision(t string) bool {
	t = strings.TrimSpace(t)
	if t == "..." || t == "…" {
		return true
	}
	body := ""
	for _, c := range []string{"//", "#", "--", ";", "/*", "<!--", "*"} {
		if strings.HasPrefix(t, c) {
			body = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t[len(c):], "*/"), "-->"))
			break
		}
	}
	return strings.HasPrefix(body, "...") || strings.HasPrefix(body, "…") ||
		strings.HasSuffix(body, "...") || strings.HasSuffix(body, "…")
}

// recoverElided places a chunk some of whose context lines are elisions
// (isElision): each stands for a run of one file line or more. The runs of
// old lines between elisions must be found in order in exactly one way in
// the whole file; the chunk is then the file's lines there, with the runs
// kept as they are. An elision first or last in the chunk is dropped; one
// beside an added or removed line is not recovered. Nil when it does not
// apply.
func (lc *locator) recoverElided(p *prepared, taken []span) *placed {
	segs, changed := elisionSegments(p)
	if segs == nil {
		return nil
	}
	for pass := Exact; pass < numPasses; pass++ {
		// Every way to place the runs in order, each elision standing for
		// one line or more; exactly one is wanted (counting stops at two).
		// Segments of context alone before the first changed one, or after
		// the last, change nothing wherever they stand: the changed ones
		// (the core) must be placed one way, these only somewhere in order
		// around them (each the nearest: every such place gives one file).
		lo, hi := slices.Index(changed, true), len(changed)-1
		for hi > lo && !changed[hi] {
			hi--
		}
		if lo < 0 {
			lo, hi = 0, len(segs)-1
		}
		var found [][]int
		var place func(k, from int, at []int)
		place = func(k, from int, at []int) {
			for s := from; s+len(segs[k]) <= len(lc.file) && len(found) < 2; s++ {
				if !matchAt(pass, lc.file, segs[k], s) {
					continue
				}
				next := append(append([]int(nil), at...), s)
				if k == hi {
					found = append(found, next)
					continue
				}
				place(k+1, s+len(segs[k])+1, next)
			}
		}
		place(lo, lc.floor(p), nil)
		if len(found) == 0 {
			continue
		}
		if len(found) > 1 {
			return nil // several ways: refused, with the closest place named
		}
		at := lc.aroundCore(pass, segs, lo, found[0], lc.floor(p))
		if at == nil {
			continue
		}
		last := at[len(at)-1] + len(segs[len(segs)-1])
		if overlaps(taken, span{at[0], last}) || p.src.EndOfFile && last != len(lc.file) {
			return nil
		}
		// The chunk as the file has it: each inner elision replaced by
		// the lines it stands for, as context.
		q := *p
		q.lines, q.old = nil, nil
		seg, inSeg, started := 0, 0, false
		for _, l := range p.lines {
			if l.op == ' ' && isElision(l.text) {
				if !started || seg >= len(segs)-1 && inSeg == len(segs[seg]) {
					continue // first or last: dropped
				}
				if inSeg == len(segs[seg]) {
					for fi := at[seg] + len(segs[seg]); fi < at[seg+1]; fi++ {
						q.lines = append(q.lines, lc.filledLine(fi))
						q.old = append(q.old, lc.file[fi])
					}
					seg, inSeg = seg+1, 0
				}
				continue
			}
			if l.op != '+' {
				if inSeg == len(segs[seg]) && seg+1 < len(segs) {
					seg, inSeg = seg+1, 0
				}
				started = true
				inSeg++
				q.old = append(q.old, l.text)
			}
			q.lines = append(q.lines, l)
		}
		if len(q.old) != last-at[0] {
			return nil // (cannot happen: the segments were matched in order)
		}
		return &placed{pos: at[0], pass: pass, skipFile: -1, skipPat: -1, chunk: &q, rule: pass.String() + ",elided-context"}
	}
	return nil
}

// aroundCore places the context-only segments before segs[lo] and after
// the core's last (core: the places of segs[lo:]'s changed run), each as
// near the core as it fits in order, no earlier than floor; nil when one
// does not fit.
func (lc *locator) aroundCore(pass Pass, segs [][]string, lo int, core []int, floor int) []int {
	at := make([]int, len(segs))
	copy(at[lo:], core)
	for k := lo - 1; k >= 0; k-- {
		s := at[k+1] - 1 - len(segs[k]) // (an elision stands for a line or more)
		for s >= floor && !matchAt(pass, lc.file, segs[k], s) {
			s--
		}
		if s < floor {
			return nil
		}
		at[k] = s
	}
	for k := lo + len(core); k < len(segs); k++ {
		s := at[k-1] + len(segs[k-1]) + 1
		for s+len(segs[k]) <= len(lc.file) && !matchAt(pass, lc.file, segs[k], s) {
			s++
		}
		if s+len(segs[k]) > len(lc.file) {
			return nil
		}
		at[k] = s
	}
	return at
}

// elisionSegments are the runs of a chunk's old lines between its
// elisions, each with whether a line of the change is among its lines;
// nil when it has no elision, or one beside the change.
func elisionSegments(p *prepared) (segs [][]string, changed []bool) {
	var cur []string
	any, change := false, false
	for li, l := range p.lines {
		switch {
		case l.op == ' ' && isElision(l.text):
			if li > 0 && p.lines[li-1].op != ' ' || li+1 < len(p.lines) && p.lines[li+1].op != ' ' {
				// Beside the change, the run it stands for could end on
				// either side of it (another line left out there too).
				return nil, nil
			}
			any = true
			if len(cur) > 0 {
				segs, cur, changed, change = append(segs, cur), nil, append(changed, change), false
			}
		case l.op != '+':
			cur = append(cur, l.text)
			change = change || l.op == '-'
		default:
			change = true
		}
	}
	if len(cur) > 0 {
		segs, changed = append(segs, cur), append(changed, change)
	}
	if !any || len(segs) == 0 {
		return nil, nil
	}
	return segs, changed
}
