package workspace

import (
	"path"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// DidYouMean adds "Did you mean" suggestions (Suggest) to err when it is a
// NOT_FOUND error on name, a resolved name; other errors pass unchanged.
func (ws *Workspace) DidYouMean(name string, err error) error {
	re := result.As(err)
	if re == nil || re.Code != result.NotFound {
		return err
	}
	re.At(ws.Display(name))
	if s := ws.Suggest(name); len(s) > 0 {
		re.WithHint("Did you mean: " + strings.Join(s, ", ") + "?")
		re.WithDetail("suggestions", s)
	}
	return re
}

// maxSuggestions is how many near names Suggest returns at most.
const maxSuggestions = 3

// maxScan bounds how many entries of a directory Suggest looks at.
const maxScan = 20000

// Suggest returns up to three existing paths near name, a resolved name that
// does not exist: the first missing component is compared with its
// siblings (same name but for case, same stem with another extension,
// small edit distance) and the rest of the path is kept where it exists.
func (ws *Workspace) Suggest(name string) []string {
	if path.IsAbs(name) {
		return nil // host mode outside the root: not ours to search
	}
	parts := strings.Split(name, "/")
	parent := "."
	i := 0
	for ; i < len(parts); i++ {
		p := path.Join(parent, parts[i])
		if _, err := ws.Lstat(p); err != nil {
			break
		}
		parent = p
	}
	if i == len(parts) {
		return nil
	}
	ents, err := ws.ReadDir(parent)
	if err != nil {
		return nil
	}
	if len(ents) > maxScan {
		ents = ents[:maxScan]
	}
	want := parts[i]
	rest := parts[i+1:]
	type cand struct {
		path string
		rank int
	}
	var cands []cand
	for _, e := range ents {
		rank, ok := nearness(want, e.Name())
		if !ok {
			continue
		}
		p := path.Join(append([]string{parent, e.Name()}, rest...)...)
		if len(rest) > 0 {
			if _, err := ws.Lstat(p); err != nil {
				continue
			}
		}
		cands = append(cands, cand{p, rank})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.rank - b.rank })
	var out []string
	for _, c := range cands {
		if len(out) == maxSuggestions {
			break
		}
		out = append(out, ws.Display(c.path))
	}
	return out
}

// nearness ranks how close name is to want (lower is closer) and whether it
// is close enough to suggest at all.
func nearness(want, name string) (int, bool) {
	lw, ln := strings.ToLower(want), strings.ToLower(name)
	switch {
	case lw == ln:
		return 0, true
	case stem(lw) == stem(ln) && stem(lw) != "":
		return 10, true
	}
	d := EditDistance(lw, ln)
	limit := max(1, min(3, len([]rune(want))/3))
	if d <= limit {
		return 20 + d, true
	}
	// A name that contains the wanted one or the other way round (main.go
	// for main, or cmd/read.go when read_test.go was asked) only if the
	// contained stem is long: "a" of a.go is in every name.
	sw, sn := stem(lw), stem(ln)
	if (len(sw) >= 4 && strings.Contains(ln, sw)) || (len(sn) >= 4 && strings.Contains(lw, sn)) {
		return 40, true
	}
	return 0, false
}

// stem is a file name without its last extension (".bashrc" keeps its name).
func stem(s string) string {
	if i := strings.LastIndexByte(s, '.'); i > 0 {
		return s[:i]
	}
	return s
}

// EditDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and transpositions of neighbours
// cost 1), over runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 || len(rb) > 256 {
		return 1 << 30
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
