// Package glob matches slash paths segment by segment, "**" standing for
// any number of segments: the one matcher under the path policy's rules and
// the filesystem tools' minimatch patterns, which differ only in how one
// segment matches.
package glob

import (
	"path"
	"strings"
)

// Segments reports whether segs matches pat, each pattern segment against
// one path segment by seg, a "**" segment against any number of them (none
// included). It is polynomial however many "**" the pattern holds.
func Segments(pat, segs []string, seg func(pattern, name string) bool) bool {
	// ok[j] reports whether pat[i:] matches segs[j:], for i from the end back.
	ok := make([]bool, len(segs)+1)
	ok[len(segs)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		next := make([]bool, len(segs)+1)
		for j := len(segs); j >= 0; j-- {
			switch {
			case pat[i] == "**":
				next[j] = ok[j] || (j < len(segs) && next[j+1])
			case j < len(segs):
				next[j] = seg(pat[i], segs[j]) && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}

// maxBraceExpansions bounds what one pattern's braces expand to.
const maxBraceExpansions = 256

// Minimatch matches a slash path against a glob pattern as minimatch does with
// {dot: true} (the reference MCP filesystem server's matcher): the whole
// path, segment by segment — *, ? and [...] ([!...] and [^...] negated)
// inside one segment, a ** segment for any number of segments (none
// included), {a,b} alternatives, and a leading ! negating the pattern. So
// "*.go" matches x.go and not sub/x.go; "**/*.go" matches both.
func Minimatch(pattern, rel string) bool {
	negate := false
	for strings.HasPrefix(pattern, "!") {
		negate, pattern = !negate, pattern[1:]
	}
	if pattern == "" {
		return negate
	}
	segs := strings.Split(rel, "/")
	for _, alt := range expandBraces(pattern, maxBraceExpansions) {
		if Segments(strings.Split(alt, "/"), segs, segMatch) {
			return !negate
		}
	}
	return negate
}

// Braces expands a pattern's {a,b} alternatives (nested ones too) into
// the patterns they stand for, at most 256.
func Braces(p string) []string { return expandBraces(p, maxBraceExpansions) }

// expandBraces expands the first {a,b,...} group of p (recursively, nested
// groups too) into at most limit patterns; a brace without a matching close
// or comma is literal.
func expandBraces(p string, limit int) []string {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			alts := splitAlternatives(p[open+1 : i])
			if len(alts) < 2 {
				open = -1
				continue
			}
			var out []string
			for _, a := range alts {
				for _, e := range expandBraces(p[:open]+a+p[i+1:], limit) {
					if len(out) >= limit {
						return out
					}
					out = append(out, e)
				}
			}
			return out
		}
	}
	return []string{p}
}

// splitAlternatives splits a brace group's inside at its top-level commas.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// segMatch matches one path segment: path.Match with minimatch's [!...].
func segMatch(pat, seg string) bool {
	if strings.Contains(pat, "[!") {
		pat = strings.ReplaceAll(pat, "[!", "[^")
	}
	ok, _ := path.Match(pat, seg)
	return ok
}
