package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// recover tries, after Codex's passes found nothing, the mistakes models
// make that leave the place and the result still uniquely determined: one
// context line dropped from the patch, or one context line written twice.
// Lines are compared under the most lenient pass (whitespace and Unicode
// punctuation), so these combine with indentation drift. A recovery must fit
// exactly one place (after the cursor, or else anywhere); several are
// AMBIGUOUS. It returns nil, nil when no recovery fits.
func (lc *locator) recover(p *prepared, cursor int, taken []span) (*placed, error) {
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
			if p.src.EndOfFile && s+len(p.old) > len(lc.file)+1 {
				break
			}
			if m := lc.alignDropped(p, s); m != nil && !overlaps(taken, span{s, s + m.matchLen()}) {
				found = append(found, m)
			}
			for _, m := range lc.alignDuplicated(p, s) {
				if !overlaps(taken, span{s, s + m.matchLen()}) {
					found = append(found, m)
				}
			}
		}
		if p.src.EndOfFile {
			kept := found[:0]
			for _, m := range found {
				if m.pos+m.matchLen() == len(lc.file) {
					kept = append(kept, m)
				}
			}
			found = kept
		}
		switch {
		case len(found) == 1:
			if round == 1 {
				found[0].rule += ",out-of-order"
			}
			return found[0], nil
		case len(found) > 1:
			cands := make([]int, len(found))
			for i, m := range found {
				cands[i] = m.pos
			}
			return nil, lc.ambiguous(p, cands)
		}
	}
	return nil, nil
}

// alignDropped matches the chunk at s with exactly one file line, between
// two of the patch's old lines, that the patch left out. The left-out line
// must border a context line and no added line may sit at the gap (so the
// kept line's place is certain).
func (lc *locator) alignDropped(p *prepared, s int) *placed {
	file, old := lc.file, p.old
	i, skip, skipJ := s, -1, -1
	for j := 0; j < len(old); j++ {
		if i >= len(file) {
			return nil
		}
		if eq(Unicode, file[i], old[j]) {
			i++
			continue
		}
		if skip < 0 && j > 0 && i+1 < len(file) && eq(Unicode, file[i+1], old[j]) {
			skip, skipJ = i, j
			i += 2
			continue
		}
		return nil
	}
	if skip < 0 {
		return nil
	}
	// Find the chunk lines around the gap: old line skipJ-1 and skipJ.
	k, before, after := 0, -1, -1
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		if k == skipJ-1 {
			before = li
		}
		if k == skipJ {
			after = li
		}
		k++
	}
	for li := before + 1; li < after; li++ {
		if p.lines[li].op == '+' {
			return nil
		}
	}
	if p.lines[before].op != ' ' && p.lines[after].op != ' ' {
		return nil
	}
	return &placed{pos: s, pass: Unicode, skipFile: skip, skipPat: -1, rule: "dropped-context", chunk: p}
}

// alignDuplicated matches the chunk at s with one of its context lines, one
// that repeats the line before it, left out (it is not in the file).
func (lc *locator) alignDuplicated(p *prepared, s int) []*placed {
	var out []*placed
	for li := 1; li < len(p.lines); li++ {
		l := p.lines[li]
		if l.op != ' ' {
			continue
		}
		prev := li - 1
		for prev >= 0 && p.lines[prev].op == '+' {
			prev--
		}
		if prev < 0 || prev != li-1 || strings.TrimSpace(p.lines[prev].text) != strings.TrimSpace(l.text) {
			continue
		}
		fi := s
		ok := true
		for lj, m := range p.lines {
			if lj == li || m.op == '+' {
				continue
			}
			if fi >= len(lc.file) || !eq(Unicode, lc.file[fi], m.text) {
				ok = false
				break
			}
			fi++
		}
		if ok {
			out = append(out, &placed{pos: s, pass: Unicode, skipFile: -1, skipPat: li, rule: "duplicated-context", chunk: p})
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
func (lc *locator) indentShift(m *placed) (func(string) (string, bool), bool) {
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
		return func(s string) (string, bool) { return s, true }, true
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
		}, true
	}
	return nil, false
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
func (lc *locator) noMatch(p *prepared) error {
	e := result.Errorf(result.NoMatch, "Failed to find expected lines in %s:\n%s", lc.opt.display(lc.name), strings.Join(p.old, "\n")).
		WithDetail("path", lc.name).WithDetail("chunk", p.n).WithDetail("patchLine", p.src.Line)
	if c, ok := closest(lc.file, p.old); ok {
		h := fmt.Sprintf("closest match at line %d (%d%% similar)", c.line+1, c.percent)
		if c.diffAt >= 0 {
			h += fmt.Sprintf("; line %d differs: the file has %q where the patch expects %q", c.line+c.diffAt+1, lc.file[c.line+c.diffAt], p.old[c.diffAt])
		}
		e.WithHint(h)
		e.WithDetail("closest", map[string]any{"line": c.line + 1, "similarity": c.percent})
	} else {
		e.WithHint("no region of the file resembles these lines; read the file again before patching it")
	}
	return e
}
