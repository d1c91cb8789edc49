package execrun

import (
	"path/filepath"
	"strings"
)

// namedAt pairs each real --ro path with where it was named (absolute, its
// last link not followed), dropping repeats.
func namedAt(given, real []string, home string) (ro, at []string) {
	seen := map[string]bool{}
	for i, p := range real {
		named := p
		if i < len(given) {
			if rest, ok := strings.CutPrefix(given[i], "~/"); ok && home != "" {
				named = filepath.Join(home, rest)
			} else if a, err := filepath.Abs(given[i]); err == nil {
				named = a
			}
			if d, err := filepath.EvalSymlinks(filepath.Dir(named)); err == nil {
				named = filepath.Join(d, filepath.Base(named))
			}
		}
		if seen[p+"\x00"+named] {
			continue
		}
		seen[p+"\x00"+named] = true
		ro, at = append(ro, p), append(at, named)
	}
	return ro, at
}

// dedupe drops repeated paths.
func dedupe(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
