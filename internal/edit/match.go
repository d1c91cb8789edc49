package edit

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	unorm "golang.org/x/text/unicode/norm"
)

// fuzzyRules are tried in this order, each only when every earlier rule
// (exact included) found nothing. Each rule also applies the normalizations
// of the rules before it.
var fuzzyRules = [...]Rule{LineEndings, TrailingWhitespace, UnicodePunctuation, Indentation, InnerWhitespace}

// match is one place an old text was found: body[start:end].
type match struct {
	start, end int
	line       int // 1-based line of start
	// Indentation rule only: whether the match starts at the start of its
	// line (so the new text's first line is re-indented too), the width to
	// add to every new line's indentation, the tab width that made the
	// shift uniform, and whether the file indents with tabs.
	fullStart bool
	delta     int
	tab       int
	tabs      int // 1: tabs, 0: spaces, -1: keep the new text's own
}

// plan finds edit e (number i of n) in the file and returns its outcome and
// the replacements it makes.
func (f *file) plan(name string, i, n int, e Edit, opt Options) (EditResult, []replacement, error) {
	old := strings.TrimPrefix(e.OldText, textfile.BOM)
	nw := strings.TrimPrefix(e.NewText, textfile.BOM)
	// Identical old and new text is a no-op only where the old text is
	// there: a model that "changes" text the file does not hold has read
	// it wrong, and must hear so (NO_MATCH, with the closest regions).
	identical := old == nw
	if e.Expect > 1 {
		e.ReplaceAll = true
	}
	if identical && bytes.Contains(f.body, []byte(old)) {
		return EditResult{Match: Identical}, nil, nil
	}
	rule := Exact
	var ms []match
	pos := f.findAll([]byte(old))
	if len(pos) == 0 || (len(pos) > 1 && !e.ReplaceAll) {
		// Not the plain unique case: the file must be known to be text
		// before fuzzy matching or explaining a failure.
		if err := f.checked(); err != nil {
			return EditResult{}, nil, err
		}
	}
	if len(pos) > 0 {
		ms = f.exactMatches(pos, len(old))
	} else if !opt.Exact {
		for _, r := range fuzzyRules {
			if ms = f.fuzzy(r, old); len(ms) > 0 {
				rule = r
				break
			}
		}
	}
	if len(ms) == 0 {
		if f.applied(old, nw, e.ReplaceAll) {
			return EditResult{Match: AlreadyApplied}, nil, nil
		}
		return EditResult{}, nil, f.noMatch(name, i, n, old, opt)
	}
	if identical {
		return EditResult{Match: Identical}, nil, nil // found, by a fuzzy rule
	}
	if len(ms) > 1 && !e.ReplaceAll {
		return EditResult{}, nil, f.ambiguous(name, i, n, rule, ms)
	}
	ms = disjoint(ms)
	if e.Expect > 0 && len(ms) != e.Expect {
		code := result.Ambiguous
		if len(ms) < e.Expect {
			code = result.NoMatch
		}
		return EditResult{}, nil, result.Errorf(code, "%s: expected %d occurrences of the old text, found %d", name, e.Expect, len(ms)).
			WithHint(fmt.Sprintf("read the file again, then give the count it holds, or old text that matches exactly the %d places meant", e.Expect))
	}
	er := EditResult{Match: rule, Replacements: len(ms)}
	reps := make([]replacement, 0, len(ms))
	var exactRepl []byte
	for _, m := range ms {
		var repl []byte
		switch rule {
		case InnerWhitespace:
			repl = []byte(f.toEOL(keepSpacing(reindent(nw, m), old, f.body[m.start:m.end])))
		case Indentation:
			repl = []byte(f.toEOL(reindent(nw, m)))
		default:
			if exactRepl == nil {
				exactRepl = []byte(f.toEOL(nw))
			}
			repl = exactRepl
		}
		reps = append(reps, replacement{start: m.start, end: m.end, repl: repl, edit: i, line: m.line})
		if len(er.Lines) < maxListed && !f.brief {
			er.Lines = append(er.Lines, m.line)
		}
	}
	return er, reps, nil
}

// findAll returns the offsets of every occurrence of old, overlapping ones
// included: "aa" occurs twice in "aaa", so it does not name one place.
// (--replace-all then replaces the leftmost non-overlapping ones: disjoint.)
func (f *file) findAll(old []byte) []int {
	var pos []int
	for at := 0; at+len(old) <= len(f.body); {
		k := bytes.Index(f.body[at:], old)
		if k < 0 {
			break
		}
		pos = append(pos, at+k)
		at += k + 1
	}
	return pos
}

func (f *file) exactMatches(pos []int, n int) []match {
	ms := make([]match, len(pos))
	for k, p := range pos {
		ms[k] = match{start: p, end: p + n}
		if !f.brief {
			ms[k].line = f.lineOf(p)
		}
	}
	return ms
}

// disjoint keeps, in order, the matches that do not overlap an earlier kept one.
func disjoint(ms []match) []match {
	out := ms[:0:0]
	end := -1
	for _, m := range ms {
		if m.start >= end {
			out = append(out, m)
			end = m.end
		}
	}
	return out
}

// flags are the normalizations a comparison applies to a line's text:
// trim trailing spaces and tabs, fold Unicode punctuation, strip the
// indentation, squash every run of spaces and tabs after the indentation
// into one space.
type flags struct{ trim, fold, strip, squash bool }

func ruleFlags(r Rule) flags {
	switch r {
	case TrailingWhitespace:
		return flags{trim: true}
	case UnicodePunctuation:
		return flags{trim: true, fold: true}
	case Indentation:
		return flags{trim: true, fold: true, strip: true}
	case InnerWhitespace:
		return flags{trim: true, fold: true, strip: true, squash: true}
	}
	return flags{}
}

// norm is a normalized line with the way back to the original bytes.
type norm struct {
	s    []byte
	lead int   // bytes of indentation stripped
	off  []int // off[i] is the original index (after lead) of s[i]; nil: identity
}

// orig maps an index of n.s (0..len(n.s)) to an index of the original line.
func (n norm) orig(i int) int {
	if n.off == nil {
		return n.lead + i
	}
	return n.lead + n.off[i]
}

func normalize(s []byte, fl flags) norm {
	var n norm
	if fl.strip {
		for n.lead < len(s) && (s[n.lead] == ' ' || s[n.lead] == '\t') {
			n.lead++
		}
		s = s[n.lead:]
	}
	if fl.fold {
		s, n.off = fold(s)
	}
	if fl.squash {
		s, n.off = squash(s, n.off)
	}
	if fl.trim {
		e := len(s)
		for e > 0 && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
		s = s[:e]
	}
	n.s = s
	return n
}

// squash turns every run of spaces and tabs after s's indentation into one
// space. off maps s's bytes (and one past the end) to the original line's
// (nil: identity); it returns s and off themselves when nothing changes,
// else the squashed text and its own map to the original.
func squash(s []byte, off []int) ([]byte, []int) {
	at := func(i int) int {
		if off == nil {
			return i
		}
		return off[i]
	}
	lead := 0
	for lead < len(s) && (s[lead] == ' ' || s[lead] == '\t') {
		lead++
	}
	changed := false
	for i := lead; i < len(s); i++ {
		if s[i] == '\t' || s[i] == ' ' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t') {
			changed = true
			break
		}
	}
	if !changed {
		return s, off
	}
	out := make([]byte, 0, len(s))
	noff := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		if i >= lead && (s[i] == ' ' || s[i] == '\t') {
			out = append(out, ' ')
			noff = append(noff, at(i))
			for i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t') {
				i++
			}
			continue
		}
		out = append(out, s[i])
		noff = append(noff, at(i))
	}
	noff = append(noff, at(len(s)))
	return out, noff
}

// foldRune is textfile.FoldPunct's ASCII byte, 0 for any other rune.
func foldRune(r rune) byte {
	c, _ := textfile.FoldPunct(r)
	return c
}

// fold puts s in Unicode canonical composition (NFC: "e" + U+0301 and "é"
// compare equal) and applies foldRune; it returns s itself and nil when
// nothing changes, else the folded text and, for each of its bytes (and one
// past the end), the offset in s it came from.
func fold(s []byte) ([]byte, []int) {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s, nil
	}
	out := make([]byte, 0, len(s))
	off := make([]int, 0, len(s)+1)
	var it unorm.Iter
	it.Init(unorm.NFC, s)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		same := bytes.Equal(seg, s[start:it.Pos()])
		for q := 0; q < len(seg); {
			r, sz := utf8.DecodeRune(seg[q:])
			at := start // a recomposed segment maps to where it began
			if same {
				at = start + q
			}
			if c := foldRune(r); c != 0 {
				out = append(out, c)
				off = append(off, at)
			} else {
				out = append(out, seg[q:q+sz]...)
				for k := 0; k < sz; k++ {
					if same {
						off = append(off, at+k)
					} else {
						off = append(off, at)
					}
				}
			}
			q += sz
		}
	}
	off = append(off, len(s))
	return out, off
}

// oldLine is one line of an old text under the four comparison modes: the
// whole line, a line the match may start inside (suffix), a line the match
// may end inside (prefix), and a text the match lies inside (sub).
type oldLine struct {
	raw                       []byte
	full, suffix, prefix, sub norm
}

func prepare(text []byte, fl flags) oldLine {
	return oldLine{
		raw:    text,
		full:   normalize(text, fl),
		suffix: normalize(text, flags{trim: fl.trim, fold: fl.fold, squash: fl.squash}),
		prefix: normalize(text, flags{fold: fl.fold, strip: fl.strip, squash: fl.squash}),
		sub:    normalize(text, flags{fold: fl.fold, squash: fl.squash}),
	}
}

// fuzzy finds old in the file under rule r.
func (f *file) fuzzy(r Rule, old string) []match {
	if strings.TrimSpace(old) == "" {
		return nil // whitespace is all there is to compare
	}
	fl := ruleFlags(r)
	ot := textfile.SplitText(old)
	ols := ot.Lines
	if r == LineEndings {
		if len(ols) < 2 && ot.EOLs[0] == "" {
			return nil // no line ending to differ in
		}
		// The common case, a CRLF file and LF old text: one bytes.Index pass.
		if conv := f.toEOL(old); conv != old {
			if pos := f.findAll([]byte(conv)); len(pos) > 0 {
				return f.exactMatches(pos, len(conv))
			}
		}
	}
	olds := make([]oldLine, len(ols))
	for k, l := range ols {
		olds[k] = prepare([]byte(l), fl)
	}
	lastFull := ot.EOLs[len(ols)-1] != ""
	lines := f.lines().Lines
	var ms []match
	if len(olds) == 1 && !lastFull {
		if r == LineEndings {
			return nil
		}
		for k := range lines {
			ms = append(ms, f.inLine(k, olds[0], fl)...)
		}
		return ms
	}
	for k := 0; k+len(olds) <= len(lines); k++ {
		m, ok := f.linesAt(k, olds, lastFull, fl, true)
		if !ok && fl.strip {
			// An old text that starts inside its first line ("x := 1"
			// copied without the tab before it) is not shifted: its
			// first line is a suffix, the others keep their indentation.
			m, ok = f.linesAt(k, olds, lastFull, fl, false)
		}
		if ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// inLine finds a one-line old text (no line ending) inside line k.
func (f *file) inLine(k int, o oldLine, fl flags) []match {
	start := f.lines().Start[k]
	text := f.lineBytes(k)
	var ms []match
	add := func(s, e int, full bool) {
		for _, m := range ms {
			if m.start == start+s {
				return
			}
		}
		m := match{start: start + s, end: start + e, line: k + 1}
		if fl.strip {
			if !full {
				return
			}
			t, delta, ok := uniform([]indentPair{{indent(text), indent(o.raw)}})
			if !ok {
				return
			}
			m.fullStart, m.delta, m.tab, m.tabs = true, delta, t, tabStyle(indent(text))
		}
		ms = append(ms, m)
	}
	if n := normalize(text, fl); len(o.full.s) > 0 && bytes.Equal(n.s, o.full.s) {
		add(0, len(text), true)
	}
	if fl.strip {
		if n := normalize(text, flags{fold: fl.fold, strip: true, squash: fl.squash}); len(o.prefix.s) > 0 && bytes.HasPrefix(n.s, o.prefix.s) {
			add(0, n.orig(len(o.prefix.s)), true)
		}
		return ms
	}
	if fl.trim {
		if n := normalize(text, flags{trim: true, fold: fl.fold, squash: fl.squash}); len(o.suffix.s) > 0 && bytes.HasSuffix(n.s, o.suffix.s) {
			add(n.orig(len(n.s)-len(o.suffix.s)), len(text), false)
		}
	}
	if fl.fold && len(o.sub.s) > 0 {
		n := normalize(text, flags{fold: true, squash: fl.squash})
		for at := 0; at+len(o.sub.s) <= len(n.s); {
			j := bytes.Index(n.s[at:], o.sub.s)
			if j < 0 {
				break
			}
			add(n.orig(at+j), n.orig(at+j+len(o.sub.s)), false)
			at += j + 1
		}
	}
	return ms
}

// linesAt tries a multi-line old text (or one ending with a line break) at
// line k: the first line may match a suffix of its line, the middle lines
// must match whole, the last line (when the old text does not end with a
// line break) may match a prefix.
// With wholeFirst false, the first line is only tried as a suffix.
func (f *file) linesAt(k int, olds []oldLine, lastFull bool, fl flags, wholeFirst bool) (match, bool) {
	lines := f.lines()
	var m match
	var pairs []indentPair
	last := len(olds) - 1
	for j, o := range olds {
		t := f.lineBytes(k + j)
		start := lines.Start[k+j]
		full := bytes.Equal(normalize(t, fl).s, o.full.s)
		switch {
		case j == 0:
			if full && wholeFirst {
				m.start, m.fullStart = start, true
			} else if n := normalize(t, flags{trim: fl.trim, fold: fl.fold, squash: fl.squash}); (j < last || lastFull) && bytes.HasSuffix(n.s, o.suffix.s) {
				m.start = start + n.orig(len(n.s)-len(o.suffix.s))
			} else {
				return match{}, false
			}
		case j < last || lastFull:
			if !full {
				return match{}, false
			}
		default: // the last line, without its line break
			if !full {
				n := normalize(t, flags{fold: fl.fold, strip: fl.strip, squash: fl.squash})
				if len(o.prefix.s) == 0 || !bytes.HasPrefix(n.s, o.prefix.s) {
					return match{}, false
				}
			}
		}
		if j == last {
			switch {
			case lastFull:
				m.end = lines.End(k + j)
			case full && fl.trim:
				// Trailing whitespace past what the old text's last line
				// has is outside the match: it stays in the file.
				tf := len(t) - len(bytes.TrimRight(t, " \t"))
				to := len(o.raw) - len(bytes.TrimRight(o.raw, " \t"))
				m.end = lines.TextEnd(k+j) - max(0, tf-to)
			case full:
				m.end = lines.TextEnd(k + j)
			default:
				n := normalize(t, flags{fold: fl.fold, strip: fl.strip, squash: fl.squash})
				m.end = start + n.orig(len(o.prefix.s))
			}
		}
		if fl.strip && (j > 0 || m.fullStart) && len(o.full.s) > 0 {
			pairs = append(pairs, indentPair{indent(t), indent(o.raw)})
		}
	}
	if m.end < m.start {
		return match{}, false
	}
	m.line = k + 1
	if fl.strip {
		t, delta, ok := uniform(pairs)
		if !ok || !wholeFirst && delta != 0 {
			// A first line taken as a suffix has no indentation to shift
			// by: the other lines must then keep the file's own.
			return match{}, false
		}
		m.delta, m.tab, m.tabs = delta, t, -1
		for _, p := range pairs {
			if p.file != "" {
				m.tabs = tabStyle(p.file)
				break
			}
		}
	}
	return m, true
}

// indentPair is the indentation of a file line and of the old line matched to it.
type indentPair struct{ file, old string }

func indent(b []byte) string {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return string(b[:i])
}

func tabStyle(ind string) int {
	if strings.HasPrefix(ind, "\t") {
		return 1
	}
	return 0
}

// width is the display width of an indentation with tab stops every tab columns.
func width(ind string, tab int) int {
	w := 0
	for _, c := range ind {
		if c == '\t' {
			w += tab - w%tab
		} else {
			w++
		}
	}
	return w
}

// uniform finds a tab width under which every file indentation is the old
// one shifted by the same amount, and returns that amount.
func uniform(pairs []indentPair) (tab, delta int, ok bool) {
	for _, t := range []int{4, 8, 2} {
		d, set, good := 0, false, true
		for _, p := range pairs {
			x := width(p.file, t) - width(p.old, t)
			if !set {
				d, set = x, true
			} else if x != d {
				good = false
				break
			}
		}
		if good {
			return t, d, true
		}
	}
	return 0, 0, false
}

// reindent shifts every line of nw that starts a line in the file by m.delta
// columns, written in the file's indentation style.
func reindent(nw string, m match) string {
	ls := textfile.SplitText(nw)
	var b strings.Builder
	for i, t := range ls.Lines {
		if i > 0 || m.fullStart {
			ind := indent([]byte(t))
			if rest := t[len(ind):]; rest != "" {
				w := max(width(ind, m.tab)+m.delta, 0)
				tabs := m.tabs == 1 || (m.tabs == -1 && strings.Contains(ind, "\t"))
				t = render(w, m.tab, tabs) + rest
			}
		}
		b.WriteString(t)
		b.WriteString(ls.EOLs[i])
	}
	return b.String()
}

func render(w, tab int, tabs bool) string {
	if !tabs {
		return strings.Repeat(" ", w)
	}
	return strings.Repeat("\t", w/tab) + strings.Repeat(" ", w%tab)
}
