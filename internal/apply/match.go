package apply

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// Pass is one of Codex's four ways of comparing a patch line with a file
// line, from the strictest to the most lenient. The first pass that finds the
// chunk anywhere wins; later passes are not tried.
type Pass int

// The passes, in the order they are tried.
const (
	Exact   Pass = iota // byte for byte
	Rstrip              // trailing whitespace ignored
	Trim                // leading and trailing whitespace ignored
	Unicode             // trimmed, and Unicode dashes, quotes and spaces folded to ASCII
	numPasses
)

var passNames = [...]string{"exact", "trailing-whitespace", "whitespace", "unicode"}

func (p Pass) String() string { return passNames[p] }

// eq compares a file line with a patch line under pass p, without allocating.
func eq(p Pass, file, pat string) bool {
	switch p {
	case Exact:
		return file == pat
	case Rstrip:
		return rstrip(file) == rstrip(pat)
	case Trim:
		return strings.TrimSpace(file) == strings.TrimSpace(pat)
	}
	return foldEq(strings.TrimSpace(file), strings.TrimSpace(pat))
}

func rstrip(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// fold maps the typographic characters Codex folds to their ASCII forms
// (textfile.FoldPunct's Codex subset).
func fold(r rune) rune {
	if c, codex := textfile.FoldPunct(r); codex {
		return rune(c)
	}
	return r
}

// foldEq compares a and b rune by rune after fold.
func foldEq(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb && fold(ra) != fold(rb) || ra == utf8.RuneError && a[:na] != b[:nb] {
			return false // (bytes that are not UTF-8 match only themselves)
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b == ""
}

// matchAt reports whether pat matches file at position i under pass p.
func matchAt(p Pass, file []string, pat []string, i int) bool {
	if i < 0 || i+len(pat) > len(file) {
		return false
	}
	for j, s := range pat {
		if !eq(p, file[i+j], s) {
			return false
		}
	}
	return true
}

// seekFirst is Codex's seek_sequence: the first position at or after start
// where pat matches, trying the passes in order; with eof, only the position
// that ends at the end of the file is tried. It returns -1 when nothing
// matches.
func seekFirst(file, pat []string, start int, eof bool) (int, Pass) {
	if len(pat) == 0 {
		return start, Exact
	}
	if len(pat) > len(file) {
		return -1, Exact
	}
	if eof {
		start = len(file) - len(pat)
	}
	for p := Exact; p < numPasses; p++ {
		for i := start; i+len(pat) <= len(file); i++ {
			if matchAt(p, file, pat, i) {
				return i, p
			}
		}
	}
	return -1, Exact
}

// maxCandidates bounds how many places of an ambiguous chunk a message
// lists (every place is weighed: the one the line number names may be the
// thirtieth of forty).
const maxCandidates = 20

// seekAll returns every position in [from, to) at which pat matches under the
// first pass that matches anywhere there, and that pass; none when no pass
// matches. With eof only the end position is tried.
func seekAll(file, pat []string, from, to int, eof bool) ([]int, Pass) {
	if len(pat) == 0 || len(pat) > len(file) {
		return nil, Exact
	}
	last := len(file) - len(pat)
	if to-1 < last {
		last = to - 1
	}
	if eof {
		if from > len(file)-len(pat) {
			return nil, Exact
		}
		from, last = len(file)-len(pat), len(file)-len(pat)
	}
	var hits []int
	for p := Exact; p < numPasses; p++ {
		for i := from; i <= last; i++ {
			if matchAt(p, file, pat, i) {
				hits = append(hits, i)
			}
		}
		if len(hits) > 0 {
			return hits, p
		}
	}
	return nil, Exact
}
