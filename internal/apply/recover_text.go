package apply

// Recoveries of a chunk read as text rather than lines, for the SEARCH
// texts real sessions send (a model's block, or a Codex patch's chunk;
// never a diff's, whose lines are git's): a SEARCH that quotes the middle
// of a line (partial), and one whose lines the model wrapped where the
// file has one line, or joined where the file has two (wrapped). Each is
// taken only where the text stands in exactly one place of the file; the
// file's lines there become the chunk's old lines, and its new lines the
// change made to them, so that the chunk is then applied as any other.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// minPartial is the fewest non-space characters a partial SEARCH has: a
// shorter one is unique by chance more than by intent.
const minPartial = 6

// maxTextTokens bounds the wrapped recovery's token diff (its table is
// the square of the chunk's tokens).
const maxTextTokens = 1500

// textual reports whether a chunk's text may be read as text: a block's
// or a Codex patch's, outside --strict.
func (lc *locator) textual(p *prepared) bool {
	return !lc.opt.Strict && lc.opt.format != patchparse.Unified && !p.guessed && len(p.old) > 0
}

// chunkTexts are the chunk's old and new lines as texts.
func chunkTexts(p *prepared) (old, nw string) {
	var n []string
	for _, l := range p.lines {
		if l.op != '-' {
			n = append(n, l.text)
		}
	}
	return strings.Join(p.old, "\n"), strings.Join(n, "\n")
}

// lineStarts are the byte offsets of each line of text joined by "\n".
func lineStarts(lines []string) []int {
	at := make([]int, len(lines)+1)
	for i, l := range lines {
		at[i+1] = at[i] + len(l) + 1
	}
	return at
}

// lineOf is the line an offset of the joined text is on.
func lineOf(starts []int, off int) int { return sort.SearchInts(starts, off+1) - 1 }

// recoverPartial places a chunk whose old text stands, once in the whole
// file, inside its lines but not at their edges: the model quoted part of
// a line (or of the lines at either end). The file's lines there are the
// old lines, the new ones the same with the text replaced.
func (lc *locator) recoverPartial(p *prepared, taken []span) (*placed, string) {
	old, nw := chunkTexts(p)
	if countNonSpace(old) < minPartial || strings.TrimSpace(p.old[0]) == "" || strings.TrimSpace(p.old[len(p.old)-1]) == "" {
		return nil, "" // (a blank line first or last: lines, not a part of one)
	}
	text := strings.Join(lc.file, "\n")
	at := strings.Index(text, old)
	if at < 0 {
		return nil, ""
	}
	if again := strings.Index(text[at+1:], old); again >= 0 {
		starts := lineStarts(lc.file)
		return nil, fmt.Sprintf("the SEARCH text stands inside lines %d and %d (and maybe more), not as whole lines: quote whole lines, enough of them to name one place",
			lineOf(starts, at)+1, lineOf(starts, at+1+again)+1)
	}
	if standsInside(text, nw, at, at+len(old)) {
		return nil, "" // its REPLACE already stands there: applied before
	}
	starts := lineStarts(lc.file)
	first, last := lineOf(starts, at), lineOf(starts, at+len(old)-1)
	if at == starts[first] && at+len(old) == starts[last]+len(lc.file[last]) {
		return nil, "" // whole lines: the line passes' to find
	}
	end := starts[last] + len(lc.file[last])
	cut := p.old[len(p.old)-1]
	if at+len(old) < end && (last > first || strings.TrimSpace(text[starts[first]:at]) == "") && slices.Contains(strings.Split(nw, "\n"), lc.file[last]) {
		// The REPLACE keeps the file's whole line where the SEARCH has its
		// start: the model's output cut off ("use std::threa" for "use
		// std::thread;", which its REPLACE repeats whole) — the line meant
		// is the file's.
		old += text[at+len(old) : end]
	}
	if keeps := strings.HasSuffix(nw, "\n"+cut) && last > first; at+len(old) < end && !keeps && (last > first || strings.TrimSpace(text[starts[first]:at]) == "") {
		// A line cut short — the last of several, or one quoted from its
		// start: a model abbreviating the line ("// Build tree spheres"
		// for the comment that goes on) as likely as one quoting its
		// start, and its REPLACE then stands for the whole line or for
		// the start: no telling — unless the REPLACE ends with that line
		// as it is (the line kept, its rest with it). (Quoted from inside
		// the line, the text is what the model meant to change.)
		return nil, fmt.Sprintf("the SEARCH's last line %q is only the start of line %d (%q): quote whole lines", cut, last+1, lc.file[last])
	}
	region := text[starts[first]:end]
	changed := region[:at-starts[first]] + nw + region[at-starts[first]+len(old):]
	if changed == region {
		return nil, "" // a change of nothing: not a place found
	}
	return lc.placeText(p, first, last+1, changed, "partial-line", taken), ""
}

// placeText is the chunk that turns the file's lines [from, to) into the
// text changed: the lines both keep are its context (as a block's are).
func (lc *locator) placeText(p *prepared, from, to int, changed, rule string, taken []span) *placed {
	if overlaps(taken, span{from, to}) {
		return nil
	}
	var search, replace []patchparse.Line
	for i := from; i < to; i++ {
		search = append(search, patchparse.Line{Op: '-', Text: lc.file[i], Line: int32(i - from + 1)})
	}
	for i, l := range strings.Split(changed, "\n") {
		replace = append(replace, patchparse.Line{Op: '+', Text: l, Line: int32(to - from + i + 1)})
	}
	lines, guessed := patchparse.BlockLines(search, replace)
	if guessed {
		return nil
	}
	q := *p
	q.lines, q.old = nil, nil
	for _, l := range lines {
		q.lines = append(q.lines, cline{op: l.Op, text: l.Text, filled: l.Op == ' '})
		if l.Op != '+' {
			q.old = append(q.old, l.Text)
		}
	}
	return &placed{pos: from, pass: Exact, skipFile: -1, skipPat: -1, rule: rule, chunk: &q}
}

// standsInside reports whether the text nw stands in text around the
// span [from, to): a SEARCH found inside its own REPLACE, as the file has
// it once the change is made.
func standsInside(text, nw string, from, to int) bool {
	for q := max(0, to-len(nw)); q <= from && q+len(nw) <= len(text); {
		i := strings.Index(text[q:], nw)
		if i < 0 || q+i > from {
			return false
		}
		if q+i+len(nw) >= to {
			return true
		}
		q += i + 1
	}
	return false
}

func countNonSpace(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// token is a run of non-space characters of a text, and where it is.
type token struct {
	text       string
	start, end int
}

func tokens(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r) && start >= 0:
			out = append(out, token{s[start:i], start, i})
			start = -1
		case !unicode.IsSpace(r) && start < 0:
			start = i
		}
	}
	if start >= 0 {
		out = append(out, token{s[start:], start, len(s)})
	}
	return out
}

// recoverWrapped places a chunk whose old lines are the file's lines
// wrapped otherwise — a long line split in two, two lines joined — their
// words the same, in the same order, in exactly one run of whole lines of
// the file. The chunk's change is made word by word to the file's lines,
// which keep their own wrapping.
func (lc *locator) recoverWrapped(p *prepared, taken []span) (*placed, string) {
	old, nw := chunkTexts(p)
	ot, nt := tokens(old), tokens(nw)
	if len(ot) < 2 || len(ot)+len(nt) > maxTextTokens {
		return nil, ""
	}
	text := strings.Join(lc.file, "\n")
	ft := tokens(text)
	// The tokens joined by NUL (which no text line holds), to find the
	// run with one search of the file's.
	join := func(ts []token) string {
		var b strings.Builder
		for _, t := range ts {
			b.WriteString("\x00")
			b.WriteString(t.text)
		}
		return b.String() + "\x00"
	}
	hay, needle := join(ft), join(ot)
	starts := lineStarts(lc.file)
	var found []int // first token index of each run of whole lines
	for from, tries := 0, 0; len(found) < 2 && tries < maxCandidates; tries++ {
		k := strings.Index(hay[from:], needle)
		if k < 0 {
			break
		}
		from += k + 1
		i := strings.Count(hay[:from-1], "\x00")
		a, b := ft[i], ft[i+len(ot)-1]
		if strings.TrimSpace(text[starts[lineOf(starts, a.start)]:a.start]) == "" && strings.TrimSpace(text[b.end:starts[lineOf(starts, b.end)+1]-1]) == "" {
			found = append(found, i)
		}
	}
	if len(found) != 1 {
		if len(found) > 1 {
			return nil, "the SEARCH lines' words stand in more than one place, wrapped otherwise than the file has them: copy the lines as the file wraps them"
		}
		return nil, ""
	}
	i := found[0]
	first, last := lineOf(starts, ft[i].start), lineOf(starts, ft[i+len(ot)-1].end)
	if blanks(lc.file[first:last+1]) != blanks(p.old) || last-first+1 == len(p.old) {
		// Wrapped the same (the whitespace passes' to find), or blank
		// lines left out or added: a line dropped, not a wrap.
		return nil, ""
	}
	base := starts[first]
	region := text[base : starts[last]+len(lc.file[last])]
	var rt []token
	for _, t := range ft[i : i+len(ot)] {
		rt = append(rt, token{t.text, t.start - base, t.end - base})
	}
	return lc.placeText(p, first, last+1, rewrap(region, rt, nw, nt), "rewrapped", taken), ""
}

// rewrap makes the change from the old words to the new ones (nw's nt) in
// region, whose words are rt: a kept word keeps the file's space before
// it, a new word takes the model's.
func rewrap(region string, rt []token, nw string, nt []token) string {
	n, m := len(rt), len(nt)
	lcs := make([][]int32, n+1)
	for a := range lcs {
		lcs[a] = make([]int32, m+1)
	}
	for a := n - 1; a >= 0; a-- {
		for b := m - 1; b >= 0; b-- {
			if rt[a].text == nt[b].text {
				lcs[a][b] = lcs[a+1][b+1] + 1
			} else {
				lcs[a][b] = max(lcs[a+1][b], lcs[a][b+1])
			}
		}
	}
	var out strings.Builder
	out.WriteString(region[:rt[0].start])
	space := func(b int) string { return nw[nt[b-1].end:nt[b].start] }
	gapBefore := func(a int) string { return region[rt[a-1].end:rt[a].start] }
	// The space written before a word: the file's between two words it
	// keeps, and before a word that takes a removed word's place (the
	// place the file breaks its line); the model's beside a word it adds.
	const none, kept, removed, added = 0, 1, 2, 3
	prev, runGap, wrote := none, "", false
	put := func(ws, word string) {
		if wrote {
			out.WriteString(ws)
		}
		out.WriteString(word)
		wrote = true
	}
	for a, b := 0, 0; a < n || b < m; {
		switch {
		case a < n && b < m && rt[a].text == nt[b].text:
			ws := ""
			switch prev {
			case kept:
				ws = gapBefore(a)
			case removed:
				ws = runGap
			case added:
				ws = space(b)
			}
			put(ws, rt[a].text)
			prev = kept
			a, b = a+1, b+1
		case b < m && (a == n || lcs[a][b+1] > lcs[a+1][b]):
			ws := ""
			switch {
			case prev == removed:
				ws = runGap
			case b > 0:
				ws = space(b)
			}
			put(ws, nt[b].text)
			prev = added
			b++
		default:
			if prev != removed {
				runGap = ""
				if a > 0 && wrote {
					runGap = gapBefore(a)
				}
			}
			prev = removed
			a++
		}
	}
	out.WriteString(region[rt[n-1].end:])
	return out.String()
}

// blanks counts the blank lines.
func blanks(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			n++
		}
	}
	return n
}

// guessMatters reports whether the guess of a block's alignment (which of
// its equal lines is kept, patchparse.BlockLines) decides the result of
// the chunk placed leniently at m: the lines a block keeps take the
// file's text, so another alignment keeps another file line's text where
// two equal lines of the block stand for file lines that differ, or where
// a kept line, equal to an added one, stands for a file line that differs
// from it. Where none does, every alignment gives the same file.
func (lc *locator) guessMatters(m *placed) bool {
	if m.skipFile >= 0 || m.skipPat >= 0 {
		return true
	}
	p := m.chunk
	for _, l := range p.lines {
		if l.filled {
			// A line the recovery took from the file stands between the
			// block's lines: which of two equal ones goes decides on
			// which side of it the other stays.
			return true
		}
	}
	at := map[string][]int{} // old lines by text: their file lines
	ops := map[string]string{}
	added := map[string]bool{}
	k := 0
	for _, l := range p.lines {
		if l.op == '+' {
			added[l.text] = true
			continue
		}
		at[l.text] = append(at[l.text], m.pos+k)
		ops[l.text] += string(l.op)
		k++
	}
	for text, lines := range at {
		for _, i := range lines {
			if lc.file[i] != lc.file[lines[0]] && strings.Contains(ops[text], "-") && strings.Contains(ops[text], " ") {
				return true
			}
			if added[text] && strings.Contains(ops[text], " ") && lc.file[i] != text {
				return true
			}
		}
	}
	return false
}
