package apply

// Recovery: a chunk whose indentation differs from the file's by one
// consistent shift (a prefix added or removed, tabs for spaces).

import "strings"

// indentShift works out how the chunk's indentation relates to the file's
// over the lines it matched, and returns the function that shifts an added
// line the same way. Understood shifts: the file's indent is the patch's
// with a fixed prefix added or removed, after (optionally) turning each tab
// into w spaces or each w spaces into a tab (w = 8, 4 or 2). ok is false when
// no single shift explains every matched line.
func (lc *locator) indentShift(m *placed, only byte) (shiftFn func(string) (string, bool), ok, identity bool) {
	pairs := lc.indentPairs(m, only)
	if len(pairs) == 0 {
		return nil, false, false
	}
	same := true
	for _, pr := range pairs {
		same = same && pr.pat == pr.file
	}
	if same {
		return func(s string) (string, bool) { return s, true }, true, true
	}
	convs := []func(string) string{func(s string) string { return s }}
	for _, w := range []int{8, 4, 2} {
		convs = append(convs, tabsToSpaces(w), spacesToTabs(w))
	}
	// Every shift that explains the matched lines is a candidate; they
	// must agree on every added line, or the indentation is undecided (a
	// context of tabs written as six spaces fits more than one rule).
	fns := shiftRules(pairs, convs)
	if len(fns) == 0 {
		return nil, false, false
	}
	fns = append(fns, dropRules(pairs, convs[1:])...)
	for _, l := range m.chunk.lines {
		if l.op != '+' {
			continue
		}
		want, wok := fns[0](l.text)
		for _, f := range fns[1:] {
			if got, ok := f(l.text); ok != wok || got != want {
				return nil, false, false
			}
		}
	}
	return fns[0], true, false
}

// indentPair is a matched line's indent in the patch and in the file.
type indentPair struct{ pat, file string }

// indentPairs are the indents of the lines m matched (only: of that op),
// blank lines and filled-in ones left out.
func (lc *locator) indentPairs(m *placed, only byte) []indentPair {
	var pairs []indentPair
	lc.eachOld(m, func(l cline, fi int) bool {
		if only != 0 && l.op != only {
			return true
		}
		if f := lc.file[fi]; !l.filled && strings.TrimSpace(f) != "" && strings.TrimSpace(l.text) != "" {
			pairs = append(pairs, indentPair{indentOf(l.text), indentOf(f)})
		}
		return true
	})
	return pairs
}

// shiftRules are the shifts that explain every pair: a conversion, then a
// fixed prefix added or removed.
func shiftRules(pairs []indentPair, convs []func(string) string) []func(string) (string, bool) {
	var fns []func(string) (string, bool)
	for i, conv := range convs {
		if i > 0 && !converts(pairs, conv) {
			continue // no line shows it: not a rival of the plain shift
		}
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
			ok = ok && shift(conv(pr.pat), add, del) == pr.file
		}
		if !ok {
			continue
		}
		fns = append(fns, func(s string) (string, bool) {
			if strings.TrimSpace(s) == "" {
				return s, true
			}
			ind := indentOf(s)
			q := conv(ind)
			if del != "" && !strings.HasPrefix(q, del) {
				return "", false
			}
			return shift(q, add, del) + s[len(ind):], true
		})
	}
	return fns
}

// dropRules are the shifts of the other order that explain every pair: a
// prefix of the patch's indent dropped first, then converted (six spaces
// for a tab: two of drift, then four for a tab). Never used, only rivals:
// where one indents an added line otherwise, nothing decides.
func dropRules(pairs []indentPair, convs []func(string) string) []func(string) (string, bool) {
	var fns []func(string) (string, bool)
	for _, conv := range convs {
		if !converts(pairs, conv) {
			continue
		}
		p0 := pairs[0].pat
		for k := 1; k < len(p0); k++ {
			drop := p0[:k]
			ok := true
			for _, pr := range pairs {
				ok = ok && strings.HasPrefix(pr.pat, drop) && conv(pr.pat[k:]) == pr.file
			}
			if !ok {
				continue
			}
			fns = append(fns, func(s string) (string, bool) {
				if strings.TrimSpace(s) == "" {
					return s, true
				}
				ind := indentOf(s)
				if !strings.HasPrefix(ind, drop) {
					return "", false
				}
				return conv(ind[k:]) + s[len(ind):], true
			})
		}
	}
	return fns
}

// converts reports whether conv changes the patch's indent of some
// matched line: a tab width that no line shows (a spaces-to-tabs rule for
// lines indented with one space) is no rival of the plain shift — only a
// guess that would indent added lines otherwise.
func converts(pairs []indentPair, conv func(string) string) bool {
	for _, pr := range pairs {
		if conv(pr.pat) != pr.pat {
			return true
		}
	}
	return false
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

// addedFrame decides, for a placed chunk whose indentation differs from
// the file's in no consistent way, how its added lines are indented: as
// its removed lines are — the model wrote the change in one frame; only
// its context drifted. When the removed lines indent (in the patch or the
// file), the shift that explains them, if one does, is the added lines'
// (none at all when they are in the file as written: asGiven). When they
// do not (unindented or blank), the added lines are written as given if
// every removed line is in the file as written and the context's own shift
// cannot be what the added lines need: it does not apply to them, leaves
// them as they are, or would have moved a removed line that did not move.
// Otherwise why says what leaves it undecided.
func (lc *locator) addedFrame(m *placed) (shift func(string) (string, bool), asGiven bool, why string) {
	const broken = "its added lines are indented off its removed lines by as much as its context is off the file's: they were written for the context the patch believes, not the file's"
	if lc.removedIndents(m) {
		f, ok, identity := lc.indentShift(m, '-')
		if !ok {
			return nil, false, "nor do its removed lines' alone"
		}
		if identity && lc.framesConflict(m) {
			return nil, false, broken
		}
		return f, identity, ""
	}
	ok, why := lc.asGiven(m)
	if !ok {
		return nil, false, why
	}
	if lc.framesConflict(m) {
		return nil, false, broken
	}
	return func(s string) (string, bool) { return s, true }, true, ""
}

// removedIndents reports whether a removed line of the placed chunk shows
// how the chunk indents: one with text, indented in the patch or the file.
func (lc *locator) removedIndents(m *placed) bool {
	return !lc.eachOld(m, func(l cline, fi int) bool {
		return !(l.op == '-' && !l.filled && strings.TrimSpace(l.text) != "" && (indentOf(l.text) != "" || indentOf(lc.file[fi]) != ""))
	})
}
