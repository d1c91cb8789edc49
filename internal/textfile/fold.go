package textfile

// FoldPunct maps the Unicode punctuation that models and editors swap for
// ASCII — curly quotes, primes, dashes, minus signs, non-breaking and other
// spaces — to its ASCII character, or returns 0 for any other rune. codex
// reports whether Codex's apply_patch folds it too: its table is a subset,
// which `apply-patch --compat codex` keeps to. This is the one fold table of
// apply-patch's and edit's punctuation-insensitive matching.
func FoldPunct(r rune) (ascii byte, codex bool) {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\'', true
	case '\u2032', '\u2035':
		return '\'', false
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"', true
	case '\u2033', '\u2036':
		return '"', false
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-', true
	case '\uFE58', '\uFE63', '\uFF0D':
		return '-', false
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
		'\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' ', true
	case '\u2000', '\u2001':
		return ' ', false
	}
	return 0, false
}
