package search

import (
	"bytes"
	"testing"
)

// FuzzSearch: for any pattern and text, the prefilter never drops a line
// the regexp matches (the literal it extracted is in every match), and
// nothing panics.
func FuzzSearch(f *testing.F) {
	for _, s := range [][3]string{
		{"Command", "a Command here\nnone\n", ""},
		{`func \(\w+\) [A-Z]\w*`, "func (c) Run(\n", ""},
		{`(?i)hello`, "HeLLo\n", "i"},
		{`ab+c|xyz`, "abbbc\nxyz\n", ""},
		{`\bk\b`, "\u212a\n", "i"},
		{`s+`, "ſ\n", "i"},
		{`foo(bar)?baz`, "foobaz\n", "w"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, text, flags string) {
		o := &Options{Pattern: pattern}
		for _, c := range flags {
			switch c {
			case 'i':
				o.IgnoreCase = true
			case 'F':
				o.Fixed = true
			case 'w':
				o.Word = true
			case 'S':
				o.SmartCase = true
			}
		}
		m, err := compile(o)
		if err != nil {
			return
		}
		b := []byte(text)
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			if _, ok := m.matchLine(line); !ok {
				continue
			}
			if !m.mayMatch(line) || !m.mayMatch(b) {
				t.Fatalf("pattern %q matches %q but the prefilter (%q, fold %v) drops it", pattern, line, m.lit, m.fold)
			}
			if c := m.nextCandidate(b, 0); c < 0 {
				t.Fatalf("pattern %q matches %q but no candidate line is found", pattern, line)
			}
		}
	})
}
