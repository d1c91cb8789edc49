package edit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// Candidate is a region of the file that resembles an old text that was
// not found, reported in NO_MATCH hints and details.
type Candidate struct {
	Line       int     `json:"line"`    // first line of the region (1-based)
	EndLine    int     `json:"endLine"` // last line of the region
	Similarity float64 `json:"similarity"`
	// DiffLine and DiffColumn (1-based, in characters) locate the first
	// difference; FileText and OldText are what each side has there.
	DiffLine   int    `json:"diffLine"`
	DiffColumn int    `json:"diffColumn"`
	FileText   string `json:"fileText"`
	OldText    string `json:"oldText"`
}

const (
	maxCandidates  = 3
	smallFileBytes = 4096
	shownLines     = 8   // lines of a candidate region shown in a hint
	shownLineLen   = 160 // characters of a shown line
	snippetLen     = 24  // characters quoted at a difference
	fallbackLines  = 50000
	maxScored      = 200 // old lines compared per candidate region
)

// noMatch builds the NO_MATCH error for edit i of n.
func (f *file) noMatch(name string, i, n int, old string, opt Options) error {
	e := result.Errorf(result.NoMatch, "%s: %sold text not found", name, editLabel(i, n)).
		At(name)
	if n > 1 {
		e.WithDetail("edit", i+1)
	}
	if len(f.body) == 0 {
		return e.WithHint("the file is empty; use 'hunk write' to give it content")
	}
	if opt.Exact {
		for _, r := range fuzzyRules {
			if ms := f.fuzzy(r, old); len(ms) > 0 {
				if ms[0].line == 0 {
					ms[0].line = f.lineOf(ms[0].start)
				}
				e.WithHint(fmt.Sprintf("it matches at line %d %s; --exact refuses that", ms[0].line, r.describeShort()))
				break
			}
		}
	}
	cands := f.closest(old)
	if len(cands) > 0 {
		e.WithDetail("candidates", cands)
	}
	for k, c := range cands {
		if k == 0 {
			e.WithHint(fmt.Sprintf("closest match at %s (%s similar); %s%s", lineRange(c), pct(c.Similarity), c.difference(), f.show(c.Line, c.EndLine)))
			continue
		}
		e.WithHint(fmt.Sprintf("also similar: %s (%s similar); %s", lineRange(c), pct(c.Similarity), c.difference()))
	}
	if len(f.body) <= smallFileBytes && (len(cands) == 0 || cands[0].Line > 1) {
		last := min(len(f.lines().Lines), 10)
		e.WithHint("start of the file:" + f.show(1, last))
	}
	if len(cands) == 0 && len(f.body) > smallFileBytes {
		e.WithHint("no similar region found; read the file again and copy the text to replace exactly")
	}
	return e
}

func (r Rule) describeShort() string {
	switch r {
	case LineEndings:
		return "with different line endings"
	case TrailingWhitespace:
		return "with different trailing whitespace"
	case UnicodePunctuation:
		return "with different Unicode punctuation (quotes, dashes, spaces)"
	case Indentation:
		return "with different indentation"
	case InnerWhitespace:
		return "with different runs of spaces inside lines"
	}
	return ""
}

func lineRange(c Candidate) string {
	if c.EndLine > c.Line {
		return fmt.Sprintf("lines %d-%d", c.Line, c.EndLine)
	}
	return fmt.Sprintf("line %d", c.Line)
}

func pct(x float64) string { return strconv.Itoa(int(x*100)) + "%" }

func (c Candidate) difference() string {
	return fmt.Sprintf("first difference at line %d, column %d: the file has %s where the old text has %s",
		c.DiffLine, c.DiffColumn, c.FileText, c.OldText)
}

// show renders lines from..to of the file, numbered, each on its own line.
func (f *file) show(from, to int) string {
	to = min(to, len(f.lines().Lines), from+shownLines-1)
	var b strings.Builder
	for k := from; k <= to; k++ {
		t := f.lineText(k - 1)
		if utf8.RuneCountInString(t) > shownLineLen {
			t = string([]rune(t)[:shownLineLen]) + "…"
		}
		fmt.Fprintf(&b, "\n%6d | %s", k, t)
	}
	return b.String()
}

// ambiguous builds the AMBIGUOUS error: every matching line is listed.
func (f *file) ambiguous(name string, i, n int, r Rule, ms []match) error {
	var nums []string
	var lines []int
	for k, m := range ms {
		if m.line == 0 {
			m.line = f.lineOf(m.start)
		}
		if k < 100 {
			nums = append(nums, strconv.Itoa(m.line))
		}
		if k < maxListed {
			lines = append(lines, m.line)
		}
	}
	list := strings.Join(nums, ", ")
	if len(ms) > 100 {
		list += fmt.Sprintf(" and %d more", len(ms)-100)
	}
	how := ""
	if r != Exact {
		how = " " + r.describe()
	}
	e := result.Errorf(result.Ambiguous, "%s: %sold text matches %d places%s (lines %s); it must match exactly once", name, editLabel(i, n), len(ms), how, list).
		WithHint(`add surrounding lines to the old text so that it matches one place only, or replace every match with --replace-all ("replaceAll": true in --edits)`).
		At(name).WithDetail("lines", lines).WithDetail("count", len(ms)).WithDetail("rule", r)
	if n > 1 {
		e.WithDetail("edit", i+1)
	}
	return e
}

// closest finds up to maxCandidates regions that resemble old: regions whose
// lines equal old lines once whitespace and punctuation are normalized vote
// for their start; without any vote (small enough files only) the lines most
// like the first old line do. The best starts are then scored line by line.
func (f *file) closest(old string) []Candidate {
	ot := textfile.SplitText(old)
	ols := ot.Lines
	lines := f.lines().Lines
	if len(ols) == 0 || len(lines) == 0 {
		return nil
	}
	key := func(b []byte) []byte { return normalize(b, flags{trim: true, fold: true, strip: true}).s }
	keys := map[string][]int{}
	for j, l := range ols {
		if k := key([]byte(l)); len(k) > 0 {
			keys[string(k)] = append(keys[string(k)], j)
		}
	}
	for k, js := range keys {
		if len(js) > 8 {
			delete(keys, k) // too common in the old text to locate anything
		}
	}
	votes := map[int]int{}
	for k := range lines {
		kb := key(f.lineBytes(k))
		if len(kb) == 0 {
			continue
		}
		for _, j := range keys[string(kb)] {
			votes[k-j] += len(kb) + 1
		}
	}
	if len(votes) == 0 && len(lines) <= fallbackLines {
		j0 := 0
		for j0 < len(ols)-1 && strings.TrimSpace(ols[j0]) == "" {
			j0++
		}
		wantText := ols[j0]
		want := textfile.Bigrams(wantText)
		for k := range lines {
			line := f.lineText(k)
			if s := textfile.Similarity(wantText, line, want, textfile.Bigrams(line)); s > 0 {
				votes[k-j0] = int(s * 1000)
			}
		}
	}
	starts := make([]int, 0, len(votes))
	for s := range votes {
		starts = append(starts, s)
	}
	sort.Slice(starts, func(a, b int) bool {
		if votes[starts[a]] != votes[starts[b]] {
			return votes[starts[a]] > votes[starts[b]]
		}
		return starts[a] < starts[b]
	})
	if len(starts) > 10 {
		starts = starts[:10]
	}
	var cands []Candidate
	for _, s := range starts {
		if c, ok := f.score(s, ot); ok {
			cands = append(cands, c)
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].Similarity != cands[b].Similarity {
			return cands[a].Similarity > cands[b].Similarity
		}
		return cands[a].Line < cands[b].Line
	})
	var out []Candidate
	for _, c := range cands {
		overlaps := false
		for _, o := range out {
			if c.Line <= o.EndLine && o.Line <= c.EndLine {
				overlaps = true
			}
		}
		if !overlaps && c.Similarity >= 0.25 {
			out = append(out, c)
		}
		if len(out) == maxCandidates {
			break
		}
	}
	return out
}

// score compares old's lines with the file's from line index s on.
func (f *file) score(s int, old *textfile.Text) (Candidate, bool) {
	ols := old.Lines
	t := f.lines()
	s = max(0, min(s, len(t.Lines)-1))
	end := min(s+len(ols), len(t.Lines))
	var num, den float64
	c := Candidate{Line: s + 1, EndLine: end}
	found := false
	for j, ol := range ols {
		if j == maxScored {
			break
		}
		var ft, feol string
		if s+j < end {
			ft, feol = f.lineText(s+j), t.EOLs[s+j]
		}
		w := float64(max(len(ft), len(ol)) + 1)
		num += w * lineSimilarity(ft, ol)
		den += w
		if found {
			continue
		}
		oeol := old.EOLs[j]
		last := j == len(ols)-1 && oeol == ""
		col, fs, os, ok := firstDiff(ft, feol, ol, oeol, last, s+j < end)
		if j == 0 && ok && s+j < end {
			// The old text may start inside its first line (its
			// indentation left out): the difference that matters is the
			// first one past the indentation, when there is one.
			lf, lo := leadWidth(ft), leadWidth(ol)
			if c2, fs2, os2, ok2 := firstDiff(ft[lf:], feol, ol[lo:], oeol, last, true); ok2 {
				col, fs, os = c2+utf8.RuneCountInString(ft[:lf]), fs2, os2
			}
		}
		if ok {
			found = true
			c.DiffLine, c.DiffColumn, c.FileText, c.OldText = s+j+1, col, fs, os
		}
	}
	if den == 0 {
		return c, false
	}
	c.Similarity = float64(int(num/den*100)) / 100
	if found && c.Similarity >= 1 {
		c.Similarity = 0.99 // a difference was found: never "100% similar" beside "not found"
	}
	if !found { // equal line by line: the old text starts or ends inside a line
		c.DiffLine, c.DiffColumn, c.FileText, c.OldText = s+1, 1, "(a longer line)", "(part of a line)"
	}
	return c, true
}

// firstDiff compares a file line and an old line (texts and endings) and
// returns the 1-based column of the first difference and what each side has
// there. last: the old line is the old text's last and may end inside the
// file line. exists: the file has this line at all.
func firstDiff(ft, feol, ot, oeol string, last, exists bool) (int, string, string, bool) {
	if !exists {
		return 1, "(end of file)", snippet(ot+oeol, strconv.Quote), true
	}
	a, b := ft+feol, ot+oeol
	if last {
		if strings.HasPrefix(ft, ot) {
			return 0, "", "", false
		}
		a = ft
	}
	if a == b {
		return 0, "", "", false
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) { // back to a rune start
		i--
	}
	col := utf8.RuneCountInString(a[:i]) + 1
	// Combining marks make two different texts look the same ("é" and
	// "e" + U+0301): then both are shown with every non-ASCII character
	// escaped.
	quote := strconv.Quote
	if hasMark(a[i:]) || hasMark(b[i:]) {
		quote = strconv.QuoteToASCII
	}
	return col, snippet(a[i:], quote), snippet(b[i:], quote), true
}

// leadWidth is the length of s's indentation (spaces and tabs).
func leadWidth(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// hasMark reports whether the start of s (what a snippet shows) holds a
// combining mark.
func hasMark(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			return true
		}
		if n++; n > snippetLen {
			break
		}
	}
	return false
}

// snippet quotes the start of s with Go escapes, so invisible characters show.
func snippet(s string, quote func(string) string) string {
	if s == "" {
		return "(end of line)"
	}
	if utf8.RuneCountInString(s) > snippetLen {
		s = string([]rune(s)[:snippetLen])
		return quote(s) + "…"
	}
	return quote(s)
}

// lineSimilarity is similarity, raised to at least 90% for a file line that
// holds the old line whole once runs of spaces and tabs are collapsed: the
// line with a realigned "=" and a trailing comment is the one meant, not a
// shorter line that shares fewer characters (MethodPatch = "PATCH" is in
// `MethodPatch   = "PATCH" // RFC 5789`, not in `MethodPut     = "PUT"`).
func lineSimilarity(file, old string) float64 {
	sim := textfile.Similarity(file, old, textfile.Bigrams(file), textfile.Bigrams(old))
	if cf, co := collapseSpace(file), collapseSpace(old); len(co) > 0 && strings.Contains(cf, co) {
		sim = max(sim, 0.9+0.1*float64(len(co))/float64(len(cf)))
	}
	return sim
}

// collapseSpace trims s and turns every run of spaces and tabs into one space.
func collapseSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' }), " ")
}
