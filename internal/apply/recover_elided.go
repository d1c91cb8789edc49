package apply

// Recovery: a chunk that elides part of the file ("...", "// ... existing
// code ...") between lines it gives.

import "strings"

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
	// Segments of old lines between elisions, and where each elision is.
	var segs [][]string
	var cur []string
	any := false
	for li, l := range p.lines {
		switch {
		case l.op == ' ' && isElision(l.text):
			if li > 0 && p.lines[li-1].op != ' ' || li+1 < len(p.lines) && p.lines[li+1].op != ' ' {
				// Beside the change, the run it stands for could end on
				// either side of it (another line left out there too).
				return nil
			}
			any = true
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
		case l.op != '+':
			cur = append(cur, l.text)
		}
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	if !any || len(segs) == 0 {
		return nil
	}
	for pass := Exact; pass < numPasses; pass++ {
		// Every way to place the runs in order, each elision standing for
		// one line or more; exactly one is wanted (counting stops at two).
		var found [][]int
		var place func(k, from int, at []int)
		place = func(k, from int, at []int) {
			for s := from; s+len(segs[k]) <= len(lc.file) && len(found) < 2; s++ {
				if !matchAt(pass, lc.file, segs[k], s) {
					continue
				}
				next := append(append([]int(nil), at...), s)
				if k == len(segs)-1 {
					found = append(found, next)
					continue
				}
				place(k+1, s+len(segs[k])+1, next)
			}
		}
		place(0, lc.floor(p), nil)
		if len(found) == 0 {
			continue
		}
		if len(found) > 1 {
			return nil // several ways: refused, with the closest place named
		}
		at := found[0]
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
