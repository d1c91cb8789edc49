package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
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
	return lc.recoverBelow(p, cursor, taken, numPasses)
}

// recoverBelow is recover with the passes before below only.
func (lc *locator) recoverBelow(p *prepared, cursor int, taken []span, below Pass) (*placed, error) {
	floor := lc.floor(p)
	if p.src.Context != "" {
		// The chunk says where it goes (its @@ line),
		// which the plain passes could not use: a recovery after the
		// cursor may be in another function than the one meant (chunks
		// out of order), so it must be unique in the whole file (after
		// the first line that reads as the @@ line).
		cursor = floor
	}
	for pass := Exact; pass < below; pass++ {
		for round, from := range []int{cursor, floor} {
			to := len(lc.file)
			if round == 1 {
				if cursor == floor {
					break
				}
				to = cursor
			}
			var found []*placed
			for s := from; s < to && len(found) < maxCandidates; s++ {
				found = append(found, lc.alignDropped(p, s, pass)...)
				found = append(found, lc.alignDuplicated(p, s, pass)...)
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
						"%s: %s %d (patch line %d) fits line %d only if a line of the file the patch leaves out is kept, and that fits more than one way; refusing to guess",
						lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, cands[0]+1).
						WithHint("copy the context lines exactly as the file has them, without leaving any out").
						At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", []int{cands[0] + 1})
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
// the gap only right after a removed line — read as its replacement, the
// kept line after them ("-a +b [kept] c"; a diff that kept the line
// between, "-a [kept] +b c", with that line dropped, is read so too) —
// after a context line they could go on either side of the kept line.
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
	return before >= 0 && after >= 0 && gapBetween(p, before, after)
}

// gapBetween is gapAllowed for the gap between lines before and after of the
// chunk (old lines, with only added lines between them).
func gapBetween(p *prepared, before, after int) bool {
	if after > before+1 {
		// Added lines at the gap: after a context line the kept line
		// could go on either side of them; after a removed line they
		// are read as its replacement, and the kept line follows them.
		if p.lines[before].op != '-' {
			return false
		}
	}
	return p.lines[before].op == ' ' || p.lines[after].op == ' '
}

// alignDuplicated matches the chunk at s under pass with one of its context
// lines, one that repeats the context line before it, left out (it is not
// in the file).
func (lc *locator) alignDuplicated(p *prepared, s int, pass Pass) []*placed {
	var out []*placed
	for li := 1; li < len(p.lines); li++ {
		l := p.lines[li]
		if l.op != ' ' {
			continue
		}
		prev := p.lines[li-1]
		if prev.op != ' ' || strings.TrimSpace(prev.text) != strings.TrimSpace(l.text) {
			continue // (a context line like the removed line before it is not a copy of it: "-x x" keeps one x)
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
func (lc *locator) indentShift(m *placed, only byte) (shiftFn func(string) (string, bool), ok, identity bool) {
	type pair struct{ pat, file string }
	var pairs []pair
	lc.eachOld(m, func(l cline, fi int) bool {
		if only != 0 && l.op != only {
			return true
		}
		if f := lc.file[fi]; !l.filled && strings.TrimSpace(f) != "" && strings.TrimSpace(l.text) != "" {
			pairs = append(pairs, pair{indentOf(l.text), indentOf(f)})
		}
		return true
	})
	if len(pairs) == 0 {
		return nil, false, false
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
	// Every shift that explains the matched lines is a candidate; they
	// must agree on every added line, or the indentation is undecided (a
	// context of tabs written as six spaces fits more than one rule).
	var fns []func(string) (string, bool)
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
	if len(fns) == 0 {
		return nil, false, false
	}
	// The other order explains some drifts too: a prefix of the patch's
	// indent dropped first, then converted (six spaces for a tab: two of
	// drift, then four for a tab). Never used, only a rival: where it
	// indents an added line otherwise, nothing decides.
	for _, conv := range convs[1:] {
		p0 := pairs[0].pat
		for k := 1; k < len(p0); k++ {
			drop := p0[:k]
			ok := true
			for _, pr := range pairs {
				if !strings.HasPrefix(pr.pat, drop) || conv(pr.pat[k:]) != pr.file {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			conv, k := conv, k
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
	if lc.removedIndents(m) {
		f, ok, identity := lc.indentShift(m, '-')
		if !ok {
			return nil, false, "nor do its removed lines' alone"
		}
		return f, identity, ""
	}
	ok, why := lc.asGiven(m)
	if !ok {
		return nil, false, why
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

// fitsFile reports whether every added line of the placed chunk, indented
// by shift, takes an indentation the file has around the chunk (two lines
// either side included).
func (lc *locator) fitsFile(m *placed, shift func(string) (string, bool)) bool {
	have := map[string]bool{}
	for i := max(0, m.pos-2); i < min(len(lc.file), m.pos+m.matchLen()+2); i++ {
		if strings.TrimSpace(lc.file[i]) != "" {
			have[indentOf(lc.file[i])] = true
		}
	}
	for _, l := range m.chunk.lines {
		if l.op != '+' || strings.TrimSpace(l.text) == "" {
			continue
		}
		if t, ok := shift(l.text); !ok || !have[indentOf(t)] {
			return false
		}
	}
	return true
}

// asGiven is addedFrame's rule for a chunk whose removed lines say nothing
// of indentation.
func (lc *locator) asGiven(m *placed) (ok bool, why string) {
	var removed []string
	asWritten := lc.eachOld(m, func(l cline, fi int) bool {
		if l.op == '-' {
			removed = append(removed, l.text)
			return fi < len(lc.file) && eq(Rstrip, lc.file[fi], l.text)
		}
		return true
	})
	switch {
	case !asWritten:
		return false, "its removed lines' indentation differs from the file's too"
	case len(removed) == 0:
		return false, "it removes no line, so nothing shows whether the added lines drifted with the context"
	}
	// The added lines indent with characters the file uses there (tabs,
	// spaces), when it indents at all.
	var chars string
	lc.eachOld(m, func(_ cline, fi int) bool {
		if strings.TrimSpace(lc.file[fi]) != "" {
			for _, c := range indentOf(lc.file[fi]) {
				if !strings.ContainsRune(chars, c) {
					chars += string(c)
				}
			}
		}
		return true
	})
	for _, l := range m.chunk.lines {
		if l.op == '+' && chars != "" && strings.Trim(indentOf(l.text), chars) != "" {
			return false, "its added lines indent with other characters than the file's"
		}
	}
	shift, ok, _ := lc.indentShift(m, ' ')
	if !ok {
		return false, "its removed lines are not indented, so nothing shows whether the added lines drifted with the context"
	}
	differ := false
	for _, l := range m.chunk.lines {
		if l.op != '+' {
			continue
		}
		got, ok := shift(l.text)
		if !ok {
			return true, "" // the context's shift cannot apply to the added lines
		}
		differ = differ || got != l.text
	}
	if !differ {
		return true, ""
	}
	for _, r := range removed {
		if got, ok := shift(r); strings.TrimSpace(r) != "" && (!ok || got != r) {
			return true, "" // a removed line the shift would have moved did not move
		}
	}
	return false, "its removed lines are blank or unindented, so nothing shows whether the added lines drifted with the context"
}

// minSubstituted is the fewest old lines a chunk needs for one of its
// context lines to be taken as misremembered — one line in four at most —
// and, less one, the fewest with text (blank lines place nothing).
const minSubstituted = 4

// recoverSubstituted places a chunk whose old lines all match but one
// context line — a line the model misremembered; never a removed line, nor
// a context line beside the change — when that is true of one place in the
// file and no other place comes close (differs in two lines at most, the
// same lines fixed). The file
// keeps its own text for that line, as for any context line. Tried after
// every other way, pass by pass; nil when it does not apply.
func (lc *locator) recoverSubstituted(p *prepared, taken []span) *placed {
	old := p.old
	if len(old) < minSubstituted || len(old) > len(lc.file) {
		return nil
	}
	nonBlank := 0
	for _, l := range old {
		if strings.TrimSpace(l) != "" {
			nonBlank++
		}
	}
	if nonBlank-1 < minSubstituted-1 {
		return nil // the place would rest on too few lines with text
	}
	// fixed[j]: old line j may not be the substituted one — a removed
	// line, or a context line beside an added or removed line (where a
	// misaligned chunk would put the change on the wrong side of it).
	fixed := make([]bool, 0, len(old))
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		f := l.op == '-'
		if li > 0 && p.lines[li-1].op != ' ' || li+1 < len(p.lines) && p.lines[li+1].op != ' ' {
			f = true
		}
		fixed = append(fixed, f)
	}
	for pass := Exact; pass < numPasses; pass++ {
		var one, at []int
		close := 0
		for s := lc.floor(p); s+len(old) <= len(lc.file); s++ {
			if p.src.EndOfFile && s+len(old) != len(lc.file) {
				continue
			}
			miss, bad, missAt := 0, false, -1
			for j := range old {
				if eq(pass, lc.file[s+j], old[j]) {
					continue
				}
				// A fixed line that differs rules the place out, but a
				// place that close (the file changed beside the change
				// since the model read it) is still a rival.
				bad = bad || fixed[j]
				if miss++; miss > 2 {
					break
				}
				missAt = s + j
			}
			if miss == 0 || miss > 2 || overlaps(taken, span{s, s + len(old)}) {
				continue
			}
			if miss == 1 && !bad {
				one, at = append(one, s), append(at, missAt)
			} else {
				close++
			}
		}
		switch {
		case len(one) == 1 && close == 0 && !lc.otherReading(p, pass):
			// The line is the file's: filled, so that its indentation says
			// nothing of the chunk's.
			q := *p
			q.lines = append([]cline(nil), p.lines...)
			j := at[0] - one[0]
			for li := range q.lines {
				if q.lines[li].op == '+' {
					continue
				}
				if j == 0 {
					q.lines[li] = lc.filledLine(at[0])
					break
				}
				j--
			}
			q.old = append([]string(nil), p.old...)
			q.old[at[0]-one[0]] = lc.file[at[0]]
			return &placed{pos: one[0], pass: pass, skipFile: -1, skipPat: -1, chunk: &q,
				rule: fmt.Sprintf("%s,substituted-context(line %d kept)", pass, at[0]+1)}
		case len(one) > 0 || close > 0:
			return nil // near several places: refused with the closest one named
		}
	}
	return nil
}

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

// endingOf is the patch Ending of a file line's ending.
func endingOf(eol string) patchparse.Ending {
	switch eol {
	case "\n":
		return patchparse.LF
	case "\r\n":
		return patchparse.CRLF
	}
	return patchparse.Unknown
}

// floor is the first line a recovery of the chunk may start at: after the
// first line of the file that reads as its @@ context line (a place above
// that line cannot be below it), or 0.
func (lc *locator) floor(p *prepared) int {
	if p.src.Context == "" {
		return 0
	}
	if i, _ := seekFirst(lc.file, []string{strings.TrimSuffix(p.src.Context, "\r")}, 0, false); i >= 0 {
		return i + 1
	}
	return 0
}

// otherReading reports whether the chunk fits somewhere, under pass or a
// stricter one, with a line of the file left out or a line of its own
// written twice — a reading that rivals a misremembered line (the same
// chunk shifted by a line can differ from the file in one line only).
func (lc *locator) otherReading(p *prepared, pass Pass) bool {
	for q := Exact; q <= pass; q++ {
		for s := 0; s < len(lc.file); s++ {
			if len(lc.alignDropped(p, s, q)) > 0 || len(lc.alignDuplicated(p, s, q)) > 0 {
				return true
			}
		}
	}
	return false
}

// eachOld calls f with each old line (context or removed) of the placed
// chunk and the index of the file line it matched, skipping the file line
// the chunk left out and the patch line it wrote twice; it stops, and
// returns false, when f does.
func (lc *locator) eachOld(m *placed, f func(l cline, fi int) bool) bool {
	fi := m.pos
	for j, l := range m.chunk.lines {
		if j == m.skipPat || l.op == '+' {
			continue
		}
		if fi == m.skipFile {
			fi++
		}
		if !f(l, fi) {
			return false
		}
		fi++
	}
	return true
}
