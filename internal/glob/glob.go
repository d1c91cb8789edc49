// Package glob matches slash paths segment by segment, "**" standing for
// any number of segments: the one matcher under the path policy's rules and
// the filesystem tools' minimatch patterns, which differ only in how one
// segment matches.
package glob

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
