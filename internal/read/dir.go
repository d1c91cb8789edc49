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
	TotalEntries int     `json:"totalEntries" jsonschema:"entries in the directory"`
	StartEntry   int     `json:"startEntry" jsonschema:"first entry shown (1-based)"`
	EndEntry     int     `json:"endEntry" jsonschema:"last entry shown"`
	NextOffset   int     `json:"nextOffset"`
	Truncated    bool    `json:"truncated"`
	Entries      []Entry `json:"entries" jsonschema:"the page's entries"`
}

// Entry is one directory entry.
type Entry struct {
	Name string `json:"name" jsonschema:"the entry's name"`
	// Type is file, dir, symlink, fifo, socket, char-device, device or other.
	Type string `json:"type" jsonschema:"file, dir, symlink, fifo, socket, char-device, device or other"`
	// Size is the size in bytes of a file (0 for other types).
	Size int64 `json:"size" jsonschema:"a file's size in bytes"`
	// Target is where a symlink points, as stored.
	Target string `json:"target,omitempty" jsonschema:"where a symlink points"`
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
	if ws.Restricted() {
		// What the path policy denies reading is not listed.
		kept := names[:0]
		for _, n := range names {
			if !ws.Hidden(name, n) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	total := len(names)
	if opt.Offset > total && !(opt.Offset == 1 && total == 0) {
		e := result.Errorf(result.InvalidArgument, "%s: offset %d is past the end of the directory (it has %s)", disp, opt.Offset, plural(total, "entry", "entries"))
		if total > 0 {
			e.WithHint(opt.offsetHint(total))
		}
		return nil, e.WithDetail("totalEntries", total).At(disp)
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
			e.Type = workspace.TypeName(fi.Mode())
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
		dn := workspace.Quote(displayName(e))
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
		fmt.Fprintf(&b, "\n[%s in directory. Use %s to continue.]\n", plural(total-d.EndEntry, "more entry", "more entries"), opt.next(d.NextOffset, 0))
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
	return ws.DidYouMean(name, ws.Error(name, err))
}
