package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode"
)

// matcher finds the lines a pattern matches: Go's regexp (RE2 syntax), after
// a literal every match must contain is looked for with bytes.Index — the
// prefilter that lets most lines, and most files, skip the regexp.
type matcher struct {
	re        *regexp.Regexp
	lit       []byte // required in every match (nil: none); lower case when fold
	fold      bool   // lit compared without case (ASCII)
	multiline bool
}

// compile reads the options' pattern into a matcher.
func compile(o *Options) (*matcher, error) {
	pat := o.Pattern
	if o.Fixed {
		pat = regexp.QuoteMeta(pat)
	}
	if o.Word {
		pat = `\b(?:` + pat + `)\b`
	}
	if _, err := regexp.Compile(pat); err != nil {
		return nil, err // said of the pattern as given, without hunk's flags
	}
	fold := o.IgnoreCase || (o.SmartCase && !hasUpper(o.Pattern, o.Fixed))
	flags := "m" // ^ and $ at each line's ends, as ripgrep
	if fold {
		flags += "i"
	}
	re, err := regexp.Compile("(?" + flags + ")" + pat)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re, multiline: o.Multiline}
	if tree, err := syntax.Parse("(?"+flags+")"+pat, syntax.Perl); err == nil {
		lit, litFold := required(tree.Simplify())
		switch {
		case len(lit) < 2: // too short to be worth a pass of its own
		case litFold && !foldSafe(lit):
		default:
			m.lit, m.fold = []byte(lit), litFold
			if litFold {
				m.lit = bytes.ToLower(m.lit)
			}
		}
	}
	return m, nil
}

// hasUpper reports whether the pattern has an upper-case letter of its
// own (not one of an escape like \W or \S): smart case then searches
// with case.
func hasUpper(p string, fixed bool) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && !fixed {
			i++
			continue
		}
		if unicode.IsUpper(rune(c)) {
			return true
		}
	}
	for _, r := range p {
		if r > unicode.MaxASCII && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// required finds a literal every match of re contains: the longest literal
// among the parts of a concatenation, or the whole literal.
func required(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, s := range re.Sub {
			if l, f := required(s); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	case syntax.OpPlus, syntax.OpRepeat:
		if re.Op == syntax.OpRepeat && re.Min < 1 {
			return "", false
		}
		return required(re.Sub[0])
	}
	return "", false
}

// foldSafe reports whether a literal matched without case is found by
// lower-casing: ASCII, and no letter Unicode folds beyond ASCII (k: the
// Kelvin sign, s: the long s).
func foldSafe(lit string) bool {
	for i := 0; i < len(lit); i++ {
		c := lit[i] | 0x20
		if lit[i] >= 0x80 || c == 'k' || c == 's' {
			return false
		}
	}
	return true
}

// index is the offset of the literal in b (without regard to ASCII case
// when fold), or -1.
func (m *matcher) index(b []byte) int {
	if !m.fold {
		return bytes.Index(b, m.lit)
	}
	return indexFold(b, m.lit)
}

// indexFold is bytes.Index of lit (lower-case ASCII, at least one byte)
// in b without regard to ASCII case, with no copy of b: each case of the
// first byte is looked for once per occurrence.
func indexFold(b, lit []byte) int {
	lo, up := lit[0], lit[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	next := func(c byte, from int) int {
		if from >= len(b) {
			return -1
		}
		if i := bytes.IndexByte(b[from:], c); i >= 0 {
			return from + i
		}
		return -1
	}
	nl, nu := next(lo, 0), -1
	if up != lo {
		nu = next(up, 0)
	}
	for {
		i := nl
		if i < 0 || (nu >= 0 && nu < i) {
			i = nu
		}
		if i < 0 || i+len(lit) > len(b) {
			return -1
		}
		if bytes.EqualFold(b[i:i+len(lit)], lit) {
			return i
		}
		if i == nl {
			nl = next(lo, i+1)
		} else {
			nu = next(up, i+1)
		}
	}
}

// mayMatch reports whether b can hold a match (the prefilter).
func (m *matcher) mayMatch(b []byte) bool {
	return m.lit == nil || m.index(b) >= 0
}

// nextCandidate is the offset in b of the start of the first line at or
// after from that holds the literal (every line when there is none), or -1.
func (m *matcher) nextCandidate(b []byte, from int) int {
	if m.lit == nil {
		return from
	}
	i := m.index(b[from:])
	if i < 0 {
		return -1
	}
	i += from
	return bytes.LastIndexByte(b[:i], '\n') + 1
}

// matchLine reports whether a line (without its newline) matches, and the
// byte offset of the first match.
func (m *matcher) matchLine(line []byte) (int, bool) {
	loc := m.re.FindIndex(line)
	if loc == nil {
		return 0, false
	}
	return loc[0], true
}
