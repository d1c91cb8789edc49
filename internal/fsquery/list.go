package fsquery

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Entry is one directory entry as the listings show it.
type Entry struct {
	Name string `json:"name" jsonschema:"the entry's name"`
	Type string `json:"type" jsonschema:"file or directory"`
	Size int64  `json:"size,omitempty" jsonschema:"a file's size in bytes"`
	// StatSize is the size stat gives, a directory's too: the reference
	// sorts by it.
	StatSize int64 `json:"-"`
}

// List is a directory's entries (hunk's journal left out of the root's).
func List(ws *workspace.Workspace, p string) (string, []Entry, error) {
	name, err := ws.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	ents, err := ws.ReadDir(name)
	if err != nil {
		return "", nil, ws.DidYouMean(name, err)
	}
	out := make([]Entry, 0, len(ents))
	for _, e := range ents {
		if name == "." && e.Name() == workspace.JournalDir {
			continue
		}
		en := Entry{Name: e.Name(), Type: "file"}
		fi, err := ws.Stat(path.Join(name, e.Name()))
		if err == nil {
			en.StatSize = fi.Size()
		}
		if err == nil && fi.IsDir() {
			en.Type = "directory"
		} else if err == nil {
			en.Size = fi.Size()
		}
		out = append(out, en)
	}
	return name, out, nil
}

// ListText is a listing as "[DIR] name" and "[FILE] name" lines.
func ListText(ents []Entry) string {
	lines := make([]string, len(ents))
	for i, e := range ents {
		tag := "[FILE]"
		if e.Type == "directory" {
			tag = "[DIR]"
		}
		lines[i] = tag + " " + workspace.Quote(e.Name)
	}
	return strings.Join(lines, "\n")
}

// SizesText sorts ents by name or size, as the reference does — by name
// in a locale's order, or by the size stat gives (a directory's too),
// largest first — and lays them out with their sizes and a total.
func SizesText(ents []Entry, sortBy string) (string, error) {
	if sortBy != "" && sortBy != "name" && sortBy != "size" {
		return "", result.Usagef("sortBy must be name or size, not %q", sortBy)
	}
	sort.SliceStable(ents, func(i, j int) bool { return localeLess(ents[i].Name, ents[j].Name) })
	if sortBy == "size" {
		sort.SliceStable(ents, func(i, j int) bool { return ents[i].StatSize > ents[j].StatSize })
	}
	var b strings.Builder
	files, dirs, total := 0, 0, int64(0)
	for _, e := range ents {
		if e.Type == "directory" {
			dirs++
			fmt.Fprintf(&b, "[DIR] %-30s \n", workspace.Quote(e.Name))
			continue
		}
		files++
		total += e.Size
		fmt.Fprintf(&b, "[FILE] %-30s %10s\n", workspace.Quote(e.Name), humanSize(e.Size))
	}
	fmt.Fprintf(&b, "\nTotal: %d files, %d directories\nCombined size: %s", files, dirs, humanSize(total))
	return b.String(), nil
}

// localeLess orders names as JavaScript's localeCompare does for the
// common cases: letters without regard to case, then lower case first.
func localeLess(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	return a > b
}

func humanSize(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	if n == 0 {
		return "0 B"
	}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", f, units[i])
}
