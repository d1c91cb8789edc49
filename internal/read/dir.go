package read

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// DirDetails describe one page of a directory listing. Offset and limit
// count entries, as they count lines for a file.
type DirDetails struct {
	Path         string  `json:"path"`
	Type         string  `json:"type"` // "directory"
	TotalEntries int     `json:"totalEntries"`
	StartEntry   int     `json:"startEntry"`
	EndEntry     int     `json:"endEntry"`
	NextOffset   int     `json:"nextOffset"`
	Truncated    bool    `json:"truncated"`
	Entries      []Entry `json:"entries"`
}

// Entry is one directory entry.
type Entry struct {
	Name string `json:"name"`
	// Type is file, dir, symlink, fifo, socket, char-device, device or other.
	Type string `json:"type"`
	// Size is the size in bytes of a file (0 for other types).
	Size int64 `json:"size"`
	// Target is where a symlink points, as stored.
	Target string `json:"target,omitempty"`
}

// readDir lists the page of entries opt selects, sorted by name (byte
// order, as ls in the C locale). Only the entries of the page are stat'ed,
// so paging a huge directory costs one read of its names.
func readDir(ws *workspace.Workspace, name string, f *os.File, opt Options) (*Result, error) {
	disp := ws.Display(name)
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, ws.Error(name, err)
	}
	slices.Sort(names)
	total := len(names)
	if opt.Offset > total && !(opt.Offset == 1 && total == 0) {
		e := result.Errorf(result.InvalidArgument, "%s: offset %d is past the end of the directory (it has %s)", disp, opt.Offset, plural(total, "entry", "entries"))
		if total > 0 {
			e.WithHint(fmt.Sprintf("use an --offset from 1 to %d", total))
		}
		return nil, e.WithDetail("totalEntries", total).WithDetail("path", disp)
	}
	page := names[min(opt.Offset-1, total):min(opt.Offset-1+opt.Limit, total)]
	d := &DirDetails{Path: disp, Type: "directory", TotalEntries: total, Entries: make([]Entry, 0, len(page))}
	if len(page) > 0 {
		d.StartEntry = opt.Offset
		d.EndEntry = opt.Offset + len(page) - 1
	}
	if d.EndEntry < total {
		d.NextOffset = d.EndEntry + 1
		d.Truncated = true
	}
	width := 0
	for _, n := range page {
		child := n
		if name != "." {
			child = path.Join(name, n)
		}
		e := Entry{Name: n, Type: "other"}
		if fi, err := ws.Lstat(child); err == nil {
			e.Type = typeName(fi.Mode())
			if fi.Mode().IsRegular() {
				e.Size = fi.Size()
			}
			if e.Type == "symlink" {
				e.Target, _ = ws.Readlink(child)
			}
		}
		d.Entries = append(d.Entries, e)
		if e.Type != "dir" && e.Type != "symlink" {
			width = max(width, utf8.RuneCountInString(e.Name)) // fmt pads by runes
		}
	}
	width = min(width, 40)
	var b strings.Builder
	for _, e := range d.Entries {
		dn := displayName(e)
		switch e.Type {
		case "file":
			fmt.Fprintf(&b, "%-*s  %d\n", width, dn, e.Size)
		case "dir", "symlink":
			fmt.Fprintf(&b, "%s\n", dn)
		default:
			fmt.Fprintf(&b, "%-*s  (%s)\n", width, dn, e.Type)
		}
	}
	switch {
	case total == 0:
		fmt.Fprintf(&b, "[%s is an empty directory.]\n", disp)
	case d.Truncated:
		fmt.Fprintf(&b, "\n[%s in directory. Use --offset %d to continue.]\n", plural(total-d.EndEntry, "more entry", "more entries"), d.NextOffset)
	}
	return &Result{Text: b.String(), Details: d}, nil
}

// displayName is how an entry is listed: directories end in "/", symlinks
// show their target.
func displayName(e Entry) string {
	switch e.Type {
	case "dir":
		return e.Name + "/"
	case "symlink":
		return e.Name + " -> " + e.Target
	}
	return e.Name
}

// notFound adds "Did you mean" suggestions to a NOT_FOUND error.
func notFound(ws *workspace.Workspace, name string, err error) error {
	re := result.As(ws.Error(name, err))
	if re.Code != result.NotFound {
		return re
	}
	re.WithDetail("path", ws.Display(name))
	if s := Suggest(ws, name); len(s) > 0 {
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
func Suggest(ws *workspace.Workspace, name string) []string {
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
	d := editDistance(lw, ln)
	limit := max(1, min(3, len([]rune(want))/3))
	if d <= limit {
		return 20 + d, true
	}
	// A name that contains the wanted one or the other way round (main.go
	// for main, or cmd/read.go when read_test.go was asked) only if long.
	if len(lw) >= 4 && len(ln) >= 4 && (strings.Contains(ln, stem(lw)) || strings.Contains(lw, stem(ln))) {
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

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and transpositions of neighbours
// cost 1), over runes.
func editDistance(a, b string) int {
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
