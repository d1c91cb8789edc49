package edit

import (
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// keepSpacing gives the new text's lines the file's own spacing between
// their words, as a person editing the file by hand keeps it: where the
// edit matched only with the runs of spaces inside lines squashed (the
// inner-whitespace rule: the model wrote `Age int` for the file's aligned
// `Age     int`), a new line standing for an old one — the same number of
// lines, the same number of words, spaced as the model spaced the old
// line — takes the gaps of the file's line: `Age int64` is written `Age
// int64` aligned as `Age     int64`. Other lines are written as given.
func keepSpacing(nw, old string, region []byte) string {
	ol := textfile.SplitText(old).Lines
	fl := textfile.SplitText(string(region)).Lines
	nt := textfile.SplitText(nw)
	if len(ol) != len(fl) || len(nt.Lines) != len(ol) {
		return nw
	}
	var b strings.Builder
	for i, n := range nt.Lines {
		b.WriteString(respace(n, ol[i], fl[i]))
		b.WriteString(nt.EOLs[i])
	}
	return b.String()
}

// respace is line n with the gaps between its words taken from f, when n
// has as many words as o and o's gaps (the model's spacing of the file's
// line f, which has as many words too).
func respace(n, o, f string) string {
	nInd, nWords, nGaps := words(n)
	_, oWords, oGaps := words(o)
	_, fWords, fGaps := words(f)
	if len(nWords) != len(oWords) || len(fWords) != len(oWords) || len(nWords) < 2 || !slices.Equal(nGaps, oGaps) {
		return n
	}
	var b strings.Builder
	b.WriteString(nInd)
	for i, w := range nWords {
		if i > 0 {
			b.WriteString(fGaps[i-1])
		}
		b.WriteString(w)
	}
	if t := strings.TrimRight(n, " \t"); len(t) < len(n) {
		b.WriteString(n[len(t):]) // its own trailing spaces
	}
	return b.String()
}

// words splits a line into its indentation, its words and the runs of
// spaces and tabs between them.
func words(l string) (ind string, ws, gaps []string) {
	t := strings.TrimRight(l, " \t")
	rest := strings.TrimLeft(t, " \t")
	ind = t[:len(t)-len(rest)]
	for rest != "" {
		k := strings.IndexAny(rest, " \t")
		if k < 0 {
			ws = append(ws, rest)
			break
		}
		ws = append(ws, rest[:k])
		rest = rest[k:]
		g := rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))]
		gaps = append(gaps, g)
		rest = rest[len(g):]
	}
	return ind, ws, gaps
}
