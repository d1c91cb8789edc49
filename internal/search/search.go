// Package search finds text in the workspace's files, and files by name:
// ripgrep's model — RE2 patterns, fixed strings, case and word options,
// .gitignore/.ignore/.git/info/exclude honoured, hidden and binary files
// skipped, --glob and --type filters, context lines — inside hunk's door:
// every directory listed and every file opened through the workspace, so
// a read-denied file is never opened nor named and hunk's own state never
// searched. Results come in a stable order (path, then line), bounded
// (Limit, Offset, MaxColumns).
package search

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// Mode is what a search reports.
type Mode int

const (
	Lines Mode = iota // matching lines (and context)
	Files             // the files with a match (-l)
	Count             // matching lines per file (-c)
)

// Options are one search.
type Options struct {
	Pattern                                string
	Paths                                  []string // workspace names; none: the workspace
	Fixed                                  bool     // the pattern is a literal string (-F)
	IgnoreCase, SmartCase, Word, Multiline bool
	Globs                                  []string // gitignore-style globs a file must match; "!" excludes (-g)
	Types                                  []string // --type names
	TypesNot                               []string // --type-not names
	Before                                 int      // context lines before a match (-B)
	After                                  int      // and after (-A)
	Mode                                   Mode
	NoIgnore                               bool  // ignore files not honoured
	Hidden                                 bool  // hidden files and directories searched too
	Follow                                 bool  // symbolic links followed (within the workspace)
	Limit                                  int   // matches (Files, Count: files) shown; 0 all
	Offset                                 int   // matches (files) skipped first
	MaxColumns                             int   // bytes of a line shown; 0 all
	MaxFilesize                            int64 // larger files are not searched (skipped, said); 0 no bound
}

// Match is one line of a result: a matching line, or a context line.
type Match struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty" jsonschema:"1-based byte offset of the first match in the line (0 for a context line)"`
	Text    string `json:"text"`
	Context bool   `json:"context,omitempty" jsonschema:"a line around a match (-A, -B, -C), not a match"`
	Cut     int    `json:"cut,omitempty" jsonschema:"bytes of the line left out (longer than maxColumns)"`
}

// FileCount is a file with matches and how many lines matched.
type FileCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// Result is what a search found: the window Offset/Limit asked for, and
// the totals.
type Result struct {
	Matches      []Match     `json:"matches,omitempty"`
	Files        []FileCount `json:"files,omitempty"`
	TotalMatches int         `json:"totalMatches" jsonschema:"matching lines in all"`
	TotalFiles   int         `json:"totalFiles" jsonschema:"files with a match"`
	Searched     int         `json:"filesSearched"`
	Truncated    bool        `json:"truncated" jsonschema:"more matched than shown: page with offset, or narrow the search"`
	Skipped      []string    `json:"skipped,omitempty" jsonschema:"files that could not be searched, and why"`
	Limits       []string    `json:"limits,omitempty" jsonschema:"what a bound left out: an ignore file's rules past its first 4 MiB or 10,000 rules, a file over the size searched (1 GiB)"`
}

// Search runs o over the workspace.
func Search(ctx context.Context, ws *workspace.Workspace, o Options) (*Result, error) {
	m, err := compile(&o)
	if err != nil {
		return nil, &PatternError{Pattern: o.Pattern, Err: err}
	}
	b := ws.Batch() // each directory walked once, each file opened by one call
	defer b.Close()
	files, results, skipped, limits, err := scanAll(ctx, ws, b, m, &o)
	if err != nil {
		return nil, err
	}
	res := &Result{Searched: len(files), Skipped: skipped, Limits: limits}
	want := o.Offset + o.Limit // matches (or files) kept; beyond, only counted
	if o.Limit <= 0 {
		want = -1
	}
	for i, fr := range results {
		if fr.err != nil {
			if _, ok := fr.err.(tooBig); ok {
				res.Limits = append(res.Limits, fmt.Sprintf("%s: %v", files[i], fr.err))
			} else {
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", files[i], fr.err))
			}
			continue
		}
		if fr.count == 0 {
			continue
		}
		res.TotalFiles++
		res.TotalMatches += fr.count
		switch o.Mode {
		case Lines:
			res.Matches = window(res.Matches, fr.lines, res.TotalMatches-fr.count, &o, want)
		default:
			if n := res.TotalFiles - 1; n >= o.Offset && (want < 0 || n < want) {
				res.Files = append(res.Files, FileCount{Path: files[i], Count: fr.count})
			}
		}
	}
	total := res.TotalMatches
	if o.Mode != Lines {
		total = res.TotalFiles
	}
	res.Truncated = want >= 0 && total > want
	return res, ctx.Err()
}

// window adds a file's lines to shown: its matches numbered (from
// before: the matches of the files before it) within [o.Offset, want),
// and the context lines around those. A match outside the window but in
// the context of one inside is shown as context.
func window(shown, lines []Match, before int, o *Options, want int) []Match {
	var kept []int // line numbers of the matches in the window
	n := before
	for _, l := range lines {
		if !l.Context {
			if n >= o.Offset && (want < 0 || n < want) {
				kept = append(kept, l.Line)
			}
			n++
		}
	}
	if len(kept) == 0 {
		return shown
	}
	isKept := map[int]bool{}
	for _, n := range kept {
		isKept[n] = true
	}
	k := 0
	for _, l := range lines {
		for k < len(kept) && kept[k]+o.After < l.Line {
			k++
		}
		switch {
		case k == len(kept):
			return shown
		case !l.Context && isKept[l.Line]:
			shown = append(shown, l)
		case l.Line >= kept[k]-o.Before:
			l.Context, l.Column = true, 0
			shown = append(shown, l)
		}
	}
	return shown
}

// fileResult is one file's scan.
type fileResult struct {
	lines []Match // its matching lines and their context (Lines)
	count int     // matching lines
	err   error
}

// scanAll walks the tree and scans each file as the walk finds it, on as
// many goroutines as there are CPUs: the files in path order, each one's
// result at its index, and what the walk could not list.
func scanAll(ctx context.Context, ws *workspace.Workspace, b *workspace.Batch, m *matcher, o *Options) (files []string, out []fileResult, skipped, limits []string, err error) {
	found := make(chan string, 256)
	var mu sync.Mutex
	byName := map[string]fileResult{}
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range found {
				if ctx.Err() != nil {
					continue
				}
				r := scanFile(b, name, m, o)
				mu.Lock()
				byName[name] = r
				mu.Unlock()
			}
		}()
	}
	seen := map[string]bool{}
	skipped, limits, err = walk(ws, b, o, func(name string) {
		if !seen[name] { // a file named twice is searched once
			seen[name] = true
			found <- name
		}
	})
	close(found)
	wg.Wait()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	files = make([]string, 0, len(byName))
	for name := range byName {
		files = append(files, name)
	}
	sort.Strings(files)
	out = make([]fileResult, len(files))
	for i, name := range files {
		out[i] = byName[name]
	}
	return files, out, skipped, limits, nil
}

// PatternError is a pattern that does not compile.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("pattern %q: %v", e.Pattern, e.Err)
}
