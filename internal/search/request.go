package search

import (
	"context"
	"fmt"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Request is one search as a tool call or the command line asks for it:
// text in the workspace's files, or files by name.
type Request struct {
	Pattern    string   `json:"pattern" jsonschema:"a regular expression (Go's RE2 syntax: no look-around, no backreferences), or with fixedStrings a literal string; with outputMode names, a glob of file paths (*.go, src/**/*.ts)"`
	Paths      []string `json:"paths,omitempty" jsonschema:"files or directories to search, relative to the workspace root (default: all of it)"`
	Glob       []string `json:"glob,omitempty" jsonschema:"only files whose path matches one of these gitignore-style globs (*.go, src/**); a leading ! leaves matching files out"`
	Type       []string `json:"type,omitempty" jsonschema:"only files of these types: go, py, js, ts, rust, java, c, cpp, md, json, yaml, sh, html, css, ruby, php, toml, txt, ..."`
	OutputMode string   `json:"outputMode,omitempty" jsonschema:"content: matching lines as path:line:text (default); files_with_matches: the paths; count: path:count; names: the files whose path matches pattern as a glob"`
	IgnoreCase bool     `json:"ignoreCase,omitempty" jsonschema:"match without regard to case"`
	Fixed      bool     `json:"fixedStrings,omitempty" jsonschema:"the pattern is a literal string, not a regular expression"`
	Word       bool     `json:"word,omitempty" jsonschema:"match whole words only"`
	Multiline  bool     `json:"multiline,omitempty" jsonschema:"let a match span lines (. still stops at a newline; use \\n or [\\s\\S])"`
	Before     int      `json:"before,omitempty" jsonschema:"lines of context before each match"`
	After      int      `json:"after,omitempty" jsonschema:"lines of context after each match"`
	Context    int      `json:"context,omitempty" jsonschema:"lines of context before and after each match"`
	Limit      int      `json:"limit,omitempty" jsonschema:"most matches (files, for files_with_matches, count and names) shown (default 200)"`
	Offset     int      `json:"offset,omitempty" jsonschema:"matches (files) to skip first: the next page"`
	Hidden     bool     `json:"hidden,omitempty" jsonschema:"search hidden files and directories too"`
	NoIgnore   bool     `json:"noIgnore,omitempty" jsonschema:"search files .gitignore, .ignore and .git/info/exclude leave out"`
	Newest     bool     `json:"newest,omitempty" jsonschema:"with outputMode names: the most recently modified first"`

	// The command line's only.
	SmartCase  bool     `json:"-"`
	TypesNot   []string `json:"-"`
	Follow     bool     `json:"-"`
	MaxColumns int      `json:"-"`
	// MaxFilesize: files larger are not searched, and said so (0: the
	// default, DefaultMaxFilesize; -1: no bound).
	MaxFilesize int64 `json:"-"`
	// Page says how to ask for the next window in the words of the
	// surface that shows it (nil: the tool's offset argument).
	Page Page `json:"-"`
	// Notes, when set, takes what was left out apart from the text.
	Notes Notes `json:"-"`
}

// DefaultLimit is how many matches (files) a search shows unless
// asked for another number.
const DefaultLimit = 200

// DefaultMaxFilesize is the largest file searched unless asked otherwise:
// reading a bigger one (a 20 GB sparse file, a disk image) takes minutes
// and is not what a search of code means. What it leaves out is said
// (skipped), as ripgrep's --max-filesize does.
const DefaultMaxFilesize = 1 << 30

// defaultMaxColumns is how much of a matching line is shown by default.
const defaultMaxColumns = 300

// Run runs req: its text (Text, NamesText), its details (*Result, or
// *NameResult for names) and how many files it found.
func Run(ctx context.Context, ws *workspace.Workspace, req Request) (string, any, int, error) {
	o, err := req.options()
	if err != nil {
		return "", nil, 0, err
	}
	page := req.Page
	if page == nil {
		page = func(n int) string { return fmt.Sprintf(`"offset": %d`, n) }
	}
	if req.OutputMode == "names" {
		no := NameOptions{Glob: req.Pattern, Newest: req.Newest, Options: o}
		r, err := Names(ctx, ws, no)
		if err != nil {
			return "", nil, 0, err
		}
		return NamesText(r, &no, page, req.Notes), r, r.Total, nil
	}
	r, err := Search(ctx, ws, o)
	if err != nil {
		if pe, ok := err.(*PatternError); ok {
			err = result.Usagef("%v", pe).WithHint("patterns are Go's RE2 syntax (no look-around or backreferences); fixedStrings (-F) searches a literal string")
		}
		return "", nil, 0, err
	}
	return Text(r, &o, page, req.Notes), r, r.TotalFiles, nil
}

// options are the request as the engine takes it.
func (req Request) options() (Options, error) {
	o := Options{Pattern: req.Pattern, Paths: req.Paths, Fixed: req.Fixed, IgnoreCase: req.IgnoreCase, SmartCase: req.SmartCase,
		Word: req.Word, Multiline: req.Multiline, Globs: req.Glob, Types: req.Type, TypesNot: req.TypesNot, Before: req.Before,
		After: req.After, NoIgnore: req.NoIgnore, Hidden: req.Hidden, Follow: req.Follow, Limit: req.Limit, Offset: req.Offset, MaxColumns: req.MaxColumns}
	if req.Context > 0 {
		o.Before, o.After = max(o.Before, req.Context), max(o.After, req.Context)
	}
	switch {
	case o.Limit == 0:
		o.Limit = DefaultLimit
	case o.Limit < 0:
		o.Limit = 0 // all (the command line's --limit 0)
	}
	if o.MaxColumns == 0 {
		o.MaxColumns = defaultMaxColumns
	}
	switch o.MaxFilesize = req.MaxFilesize; {
	case o.MaxFilesize == 0:
		o.MaxFilesize = DefaultMaxFilesize
	case o.MaxFilesize < 0:
		o.MaxFilesize = 0 // no bound
	}
	switch req.OutputMode {
	case "", "content":
	case "files_with_matches":
		o.Mode = Files
	case "count":
		o.Mode = Count
	case "names":
	default:
		return o, result.Usagef("outputMode must be content, files_with_matches, count or names, not %q", req.OutputMode)
	}
	switch {
	case req.Pattern == "" && req.OutputMode != "names":
		return o, result.Usagef("search needs a pattern")
	case o.Offset < 0 || o.Before < 0 || o.After < 0:
		return o, result.Usagef("offset and context lines must not be negative")
	}
	return o, nil
}
