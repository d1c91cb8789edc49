package policy

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/hunk-dev/hunk/internal/glob"
)

// SplitList splits a list of patterns as every surface gives one (a flag,
// a HUNK_* variable, a config entry): at commas outside braces, so that
// ".env,*.pem" is two patterns; "\," is a comma of the pattern. Blank items
// are left out, the rest trimmed, and braces expanded: "*.{pem,key}" is
// *.pem and *.key (a rule matches a name's segments one by one, and has no
// braces of its own).
func SplitList(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			for _, alt := range glob.Braces(t) {
				if alt = strings.TrimSpace(alt); alt != "" { // "{,}" expands to nothing
					out = append(out, alt)
				}
			}
		}
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == ',':
			cur.WriteByte(',')
			i++
		case c == '{':
			depth++
			cur.WriteByte(c)
		case c == '}' && depth > 0:
			depth--
			cur.WriteByte(c)
		case c == ',' && depth == 0:
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// maxUnmatchedWalk bounds the entries Unmatched looks at.
const maxUnmatchedWalk = 200000

// Unmatched are the rules that match no path of the workspace at dir (a
// typo, a list given as one pattern), looked for by a walk of at most
// maxUnmatchedWalk entries; complete is false when the walk stopped there
// (then nothing is said of the rest). A write rule naming a path to keep
// from being made (/ci/deploy/) matches nothing yet by design: only read
// rules and write rules of existing-looking patterns are asked about by
// the caller's wording.
func (p *Policy) Unmatched(dir string) (rules []*Rule, complete bool) {
	left := map[*Rule]bool{}
	for _, r := range p.Rules() {
		left[r] = true
	}
	seen := 0
	complete = true
	_ = filepath.WalkDir(dir, func(host string, d fs.DirEntry, err error) error {
		if err != nil || host == dir {
			return nil
		}
		if seen++; seen > maxUnmatchedWalk {
			complete = false
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, host)
		segs := p.segments(filepath.ToSlash(rel))
		for r := range left {
			if r.matches(segs) {
				delete(left, r)
			}
		}
		if len(left) == 0 {
			return filepath.SkipAll
		}
		return nil
	})
	for _, r := range p.Rules() {
		if left[r] {
			rules = append(rules, r)
		}
	}
	return rules, complete
}
