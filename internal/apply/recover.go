package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// recover tries, after Codex's passes found nothing, the mistakes models
// make that leave the place and the result still uniquely determined: one
// context line dropped from the patch, or one context line written twice.
// Lines are compared pass by pass as Codex does (exact, then trailing
// whitespace, then surrounding whitespace, then Unicode punctuation), so
// these combine with whitespace drift; the first pass that allows any
// recovery decides, and within it the recovery must be unique — one place
// (after the cursor, or else anywhere) and one way of aligning the lines
// (several that give the same result count as one). Otherwise the chunk is
// AMBIGUOUS. It returns nil, nil when no recovery fits.
func (lc *locator) recover(p *prepared, cursor int, taken []span) (*placed, error) {
	for pass := Exact; pass < numPasses; pass++ {
		for round, from := range []int{cursor, 0} {
			to := len(lc.file)
			if round == 1 {
				if cursor == 0 {
					break
				}
				to = cursor
			}
			var found []*placed
			for s := from; s < to && len(found) < maxCandidates; s++ {
				for _, m := range lc.alignDropped(p, s, pass) {
					found = append(found, m)
				}
				for _, m := range lc.alignDuplicated(p, s, pass) {
					found = append(found, m)
				}
			}
			kept := found[:0]
			for _, m := range found {
				if overlaps(taken, span{m.pos, m.pos + m.matchLen()}) {
					continue
				}
				if p.src.EndOfFile && m.pos+m.matchLen() != len(lc.file) {
					continue
				}
				kept = append(kept, m)
			}
			found = lc.distinct(kept)
			switch {
			case len(found) == 1 && found[0].blocked:
				// The only way the chunk fits leaves the kept line's place
				// (or whether it is kept) open: no recovery.
				return nil, nil
			case len(found) == 1:
				if round == 1 {
					found[0].rule += ",out-of-order"
				}
				return found[0], nil
			case len(found) > 1:
				cands := make([]int, 0, len(found))
				for _, m := range found {
					if len(cands) == 0 || cands[len(cands)-1] != m.pos {
						cands = append(cands, m.pos)
					}
				}
				if len(cands) == 1 {
					return nil, result.Errorf(result.Ambiguous,
						"%s: chunk %d (patch line %d) fits line %d only if a line of the file the patch leaves out is kept, and that fits more than one way; refusing to guess",
						lc.opt.display(lc.name), p.n, p.src.Line, cands[0]+1).
						WithHint("copy the context lines exactly as the file has them, without leaving any out").
						At(lc.name).InChunk(p.n, p.src.Line).WithDetail("candidates", []int{cands[0] + 1})
				}
				return nil, lc.ambiguous(p, cands)
			}
		}
	}
	return nil, nil
}

// distinct drops recoveries whose result (the lines replaced and the lines
// put in their place) equals an earlier one's.
func (lc *locator) distinct(ms []*placed) []*placed {
	if len(ms) < 2 {
		return ms
	}
	var out []*placed
	var keys []string
	for _, m := range ms {
		r, err := lc.build(m)
		if err != nil {
			out = append(out, m)
			keys = append(keys, "")
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d-%d:", r.start, r.end)
		for _, l := range r.lines {
			b.WriteString(l.text)
			b.WriteByte(0)
		}
		k := b.String()
		dup := false
		for _, o := range keys {
			if o == k {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, m)
			keys = append(keys, k)
		}
	}
	return out
}

// alignDropped returns every way the chunk matches at s under pass with
// exactly one file line, strictly inside the match, that the patch left
// out. Such a match is usable only if the left-out line borders a context
// line of the patch and no added line sits at the gap after a context line
// (so the kept line's place is certain); the others are returned marked
// blocked, because they still compete: a chunk that fits one place usably
// and another place only unusably is as ambiguous as one that fits two.
func (lc *locator) alignDropped(p *prepared, s int, pass Pass) []*placed {
	file, old := lc.file, p.old
	m := len(old)
	if m < 2 || s+m+1 > len(file) {
		return nil
	}
	pre := 0
	for pre < m && eq(pass, file[s+pre], old[pre]) {
		pre++
	}
	if pre == m || pre == 0 {
		return nil // a plain match (found before) or none
	}
	var out []*placed
	for k := 1; k <= pre; k++ {
		// file line s+k is the one left out; old[k:] follows it.
		ok := true
		for j := k; j < m; j++ {
			if !eq(pass, file[s+j+1], old[j]) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, &placed{pos: s, pass: pass, skipFile: s + k, skipPat: -1, rule: "dropped-context", chunk: p, blocked: !gapAllowed(p, k)})
		}
	}
	return out
}

// gapAllowed reports whether a file line may be kept between old lines k-1
// and k of the chunk: a context line must be beside it, and added lines at
// the gap are allowed only right after a removed line (they replace it; the
// kept line follows them) — after a context line they could go on either
// side of the kept line.
func gapAllowed(p *prepared, k int) bool {
	n, before, after := 0, -1, -1
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		if n == k-1 {
			before = li
		}
		if n == k {
			after = li
		}
		n++
	}
	if before < 0 || after < 0 {
		return false
	}
	if after > before+1 && p.lines[before].op != '-' {
		return false
	}
	return p.lines[before].op == ' ' || p.lines[after].op == ' '
}

// alignDuplicated matches the chunk at s under pass with one of its context
// lines, one that repeats the line before it, left out (it is not in the
// file).
func (lc *locator) alignDuplicated(p *prepared, s int, pass Pass) []*placed {
	var out []*placed
	for li := 1; li < len(p.lines); li++ {
		l := p.lines[li]
		if l.op != ' ' {
			continue
		}
		prev := p.lines[li-1]
		if prev.op == '+' || strings.TrimSpace(prev.text) != strings.TrimSpace(l.text) {
			continue
		}
		fi := s
		ok := true
		for lj, m := range p.lines {
			if lj == li || m.op == '+' {
				continue
			}
			if fi >= len(lc.file) || !eq(pass, lc.file[fi], m.text) {
				ok = false
				break
			}
			fi++
		}
		if ok {
			out = append(out, &placed{pos: s, pass: pass, skipFile: -1, skipPat: li, rule: "duplicated-context", chunk: p})
		}
	}
	return out
}

// indentShift works out how the chunk's indentation relates to the file's
// over the lines it matched, and returns the function that shifts an added
// line the same way. Understood shifts: the file's indent is the patch's
// with a fixed prefix added or removed, after (optionally) turning each tab
// into w spaces or each w spaces into a tab (w = 8, 4 or 2). ok is false when
// no single shift explains every matched line.
func (lc *locator) indentShift(m *placed) (shiftFn func(string) (string, bool), ok, identity bool) {
	type pair struct{ pat, file string }
	var pairs []pair
	fi := m.pos
	for j, l := range m.chunk.lines {
		if j == m.skipPat || l.op == '+' {
			continue
		}
		if fi == m.skipFile {
			fi++
		}
		f := lc.file[fi]
		fi++
		if strings.TrimSpace(f) == "" || strings.TrimSpace(l.text) == "" {
			continue
		}
		pairs = append(pairs, pair{indentOf(l.text), indentOf(f)})
	}
	same := true
	for _, pr := range pairs {
		if pr.pat != pr.file {
			same = false
			break
		}
	}
	if same {
		return func(s string) (string, bool) { return s, true }, true, true
	}
	convs := []func(string) string{func(s string) string { return s }}
	for _, w := range []int{8, 4, 2} {
		convs = append(convs, tabsToSpaces(w), spacesToTabs(w))
	}
	for _, conv := range convs {
		q0, f0 := conv(pairs[0].pat), pairs[0].file
		var add, del string
		switch {
		case strings.HasSuffix(f0, q0):
			add = f0[:len(f0)-len(q0)]
		case strings.HasSuffix(q0, f0):
			del = q0[:len(q0)-len(f0)]
		default:
			continue
		}
		ok := true
		for _, pr := range pairs[1:] {
			if shift(conv(pr.pat), add, del) != pr.file {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		conv := conv
		return func(s string) (string, bool) {
			if strings.TrimSpace(s) == "" {
				return s, true
			}
			ind := indentOf(s)
			q := conv(ind)
			if del != "" && !strings.HasPrefix(q, del) {
				return "", false
			}
			return shift(q, add, del) + s[len(ind):], true
		}, true, false
	}
	return nil, false, false
}

func shift(ind, add, del string) string {
	if del != "" {
		if !strings.HasPrefix(ind, del) {
			return "\x00" // never equals a real indent
		}
		return ind[len(del):]
	}
	return add + ind
}

func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

func tabsToSpaces(w int) func(string) string {
	sp := strings.Repeat(" ", w)
	return func(s string) string { return strings.ReplaceAll(s, "\t", sp) }
}

func spacesToTabs(w int) func(string) string {
	sp := strings.Repeat(" ", w)
	return func(s string) string { return strings.ReplaceAll(s, sp, "\t") }
}

// noMatch is Codex's "Failed to find expected lines" with a hint naming the
// region of the file that comes closest.
func (lc *locator) noMatch(p *prepared) *result.Error {
	e := result.Errorf(result.NoMatch, "Failed to find expected lines in %s:\n%s", lc.opt.display(lc.name), strings.Join(p.old, "\n")).
		At(lc.name).InChunk(p.n, p.src.Line)
	if c, ok := closest(lc.file, p.old); ok {
		h := fmt.Sprintf("closest match at line %d (%d%% similar)", c.line+1, c.percent)
		if c.diffAt >= 0 {
			h += fmt.Sprintf(": line %d has %q where the patch expects %q", c.line+c.diffAt+1, lc.file[c.line+c.diffAt], p.old[c.diffAt])
		}
		e.WithHint(h)
		e.WithDetail("closest", map[string]any{"line": c.line + 1, "similarity": c.percent})
	} else {
		e.WithHint("no region of the file resembles these lines; read the file again before patching it")
	}
	return e
}
