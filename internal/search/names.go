package search

import (
	"context"
	"sort"

	"github.com/hunk-dev/hunk/internal/glob"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// NameOptions are a search by name (hunk search --files, Claude's Glob).
type NameOptions struct {
	Glob   string // minimatch-style; "" every file
	Newest bool   // newest first, as Claude Code's Glob lists (else path order)
	Options
}

// NamedFile is a file a name search found.
type NamedFile struct {
	Path     string `json:"path"`
	Modified int64  `json:"modifiedUnix,omitempty" jsonschema:"modification time, seconds since 1970 (with newest first)"`
}

// NameResult are the files found, the window asked for, and their total.
type NameResult struct {
	Files     []NamedFile `json:"names" jsonschema:"the files found, in path order or newest first"`
	Total     int         `json:"total"`
	Truncated bool        `json:"truncated" jsonschema:"more files matched than shown: page with offset, or narrow the glob"`
	Limits    []string    `json:"limits,omitempty" jsonschema:"what a bound left out (an ignore file's rules past its first 4 MiB or 10,000 rules)"`
}

// Names lists the files under o.Paths that the filters keep (ignore
// files, hidden, --glob, --type) and whose path matches Glob.
func Names(ctx context.Context, ws *workspace.Workspace, o NameOptions) (*NameResult, error) {
	b := ws.Batch()
	defer b.Close()
	files, _, limits, err := list(ws, b, &o.Options)
	if err != nil {
		return nil, err
	}
	var found []NamedFile
	for _, f := range files {
		if o.Glob != "" && !glob.Minimatch(o.Glob, f) && !glob.Minimatch("**/"+o.Glob, f) {
			continue
		}
		nf := NamedFile{Path: f}
		if o.Newest {
			if fi, err := ws.Stat(f); err == nil {
				nf.Modified = fi.ModTime().Unix()
			}
		}
		found = append(found, nf)
	}
	if o.Newest {
		sort.SliceStable(found, func(i, j int) bool { return found[i].Modified > found[j].Modified })
	}
	r := &NameResult{Total: len(found), Limits: limits}
	lo := min(o.Offset, len(found))
	hi := len(found)
	if o.Limit > 0 && lo+o.Limit < hi {
		hi, r.Truncated = lo+o.Limit, true
	}
	r.Files = found[lo:hi]
	if r.Files == nil {
		r.Files = []NamedFile{}
	}
	return r, ctx.Err()
}
