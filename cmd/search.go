package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/search"
)

// SearchOptions is what `hunk search` was asked to do.
type SearchOptions struct {
	ops.SearchRequest
	FilesWithMatches, Count, Names bool
	MaxFilesizeText                string
}

// newSearchCmd builds the command; runF is its action (nil: searchRun;
// tests pass one that records the parsed options).
func newSearchCmd(app *App, runF func(*App, *SearchOptions) error) *cobra.Command {
	if runF == nil {
		runF = searchRun
	}
	o := &SearchOptions{}
	c := &cobra.Command{
		Use:   "search [flags] PATTERN [PATH...] | --files [GLOB] [PATH...]",
		Short: "Find text in the workspace's files, or files by name",
		Long: `Find the lines of the workspace's files that match PATTERN, a regular
expression in Go's RE2 syntax (no look-around, no backreferences; -F for a
literal string), printed as path:line:text in path and line order. Like
ripgrep: .gitignore (in a git repository), .ignore and .git/info/exclude are
honoured (--no-ignore: not), hidden files and directories are skipped
(--hidden: searched), binary files (a NUL byte in their first 8000 bytes) are
skipped, symbolic links are not followed (-L: followed, within the
workspace). The path policy holds: a read-denied file is never opened nor
named, hunk's own state never searched.

At most --limit matches are shown (default 200 on a terminal, every one in a
pipe; 0 for all), each line cut at --max-columns bytes; a last line says how
many were left out and how to see the next ones (--offset) — on stderr when
stdout is not a terminal, so that a pipe reads matches only, as ripgrep's.
Nothing found is exit 1, as grep's.

--files lists the files a search would read (every one, or those whose path
matches GLOB), in path order or, with --newest, the most recently modified
first.`,
		Example: `  hunk search 'func \w+Handler' --type go
  hunk search -F 'TODO(' -g '!vendor/' --context 2
  hunk search -il 'deprecated' src docs
  hunk search --files '**/*_test.go' --newest`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.Names:
				o.OutputMode = "names"
			case o.FilesWithMatches && o.Count:
				return result.Usagef("give -l (files with matches) or -c (counts), not both")
			case o.FilesWithMatches:
				o.OutputMode = "files_with_matches"
			case o.Count:
				o.OutputMode = "count"
			}
			if len(args) == 0 && !o.Names {
				return result.Usagef("no pattern to search for").WithHint("usage: " + cmd.UseLine())
			}
			if len(args) > 0 {
				o.Pattern, o.Paths = args[0], args[1:]
			}
			searchWindow(app, o, cmd.Flags().Changed("limit"))
			o.Page = func(n int) string { return fmt.Sprintf("--offset %d", n) }
			if o.MaxFilesizeText != "" {
				n, err := parseSize(o.MaxFilesizeText)
				if err != nil || n < 0 {
					return result.Usagef("--max-filesize %q: not a size", o.MaxFilesizeText).WithHint("sizes look like 1GiB, 512M or 0 (no bound)")
				}
				if o.MaxFilesize = n; n == 0 {
					o.MaxFilesize = -1 // no bound
				}
			}
			return runF(app, o)
		},
	}
	f := c.Flags()
	f.SetInterspersed(true)
	f.BoolVarP(&o.Fixed, "fixed-strings", "F", false, "PATTERN is a literal string")
	f.BoolVarP(&o.IgnoreCase, "ignore-case", "i", false, "match without regard to case")
	f.BoolVarP(&o.SmartCase, "smart-case", "S", false, "without regard to case unless PATTERN has an upper-case letter")
	f.BoolVarP(&o.Word, "word-regexp", "w", false, "match whole words only")
	f.BoolVarP(&o.Multiline, "multiline", "U", false, "let a match span lines")
	f.IntVarP(&o.After, "after-context", "A", 0, "show `N` lines after each match")
	f.IntVarP(&o.Before, "before-context", "B", 0, "show `N` lines before each match")
	f.IntVar(&o.Context, "context", 0, "show `N` lines before and after each match (-C is hunk's workspace, as git's)")
	f.BoolVarP(&o.FilesWithMatches, "files-with-matches", "l", false, "print only the paths of the files with a match")
	f.BoolVarP(&o.Count, "count", "c", false, "print path:count, the matching lines of each file")
	f.StringArrayVarP(&o.Glob, "glob", "g", nil, "only files matching `GLOB` (gitignore-style; !GLOB leaves them out; repeatable)")
	f.StringArrayVarP(&o.Type, "type", "t", nil, "only files of `TYPE` (go, py, js, ts, rust, java, c, cpp, md, json, yaml, sh, ...; repeatable)")
	f.StringArrayVarP(&o.TypesNot, "type-not", "T", nil, "no files of `TYPE` (repeatable)")
	f.BoolVar(&o.Hidden, "hidden", false, "search hidden files and directories too")
	f.BoolVar(&o.NoIgnore, "no-ignore", false, "search what .gitignore, .ignore and .git/info/exclude leave out")
	f.BoolVarP(&o.Follow, "follow", "L", false, "follow symbolic links (within the workspace)")
	f.IntVar(&o.Limit, "limit", search.DefaultLimit, "most matches (files, with -l, -c, --files) shown; 0 for all")
	f.IntVar(&o.Offset, "offset", 0, "matches (files) to skip first: the next page")
	f.IntVarP(&o.MaxColumns, "max-columns", "M", 300, "bytes of a line shown; a longer one is cut")
	f.StringVar(&o.MaxFilesizeText, "max-filesize", "", "files larger than `SIZE` are not searched, and said so (default 1GiB; 0: no bound)")
	f.BoolVar(&o.Names, "files", false, "list files by name: those matching the optional GLOB")
	f.BoolVar(&o.Newest, "newest", false, "with --files: the most recently modified first")
	f.BoolP("line-number", "n", true, "line numbers (always shown)")
	return c
}

func searchRun(app *App, o *SearchOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	out, err := ops.Search(context.Background(), env, o.SearchRequest)
	if err != nil {
		return err
	}
	if err := app.Render(out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return &result.SilentExit{Code: out.ExitCode}
	}
	return nil
}

// searchWindow sets o's window: --limit as given (0: all), else 200 on a
// terminal and every match in a pipe — where, as ripgrep, what was left
// out is said on stderr, never among the matches.
func searchWindow(app *App, o *SearchOptions, given bool) {
	piped := !app.Cfg.JSON && !isTerminal(app.Stdout)
	switch {
	case !given && piped:
		o.Limit = -1
	case !given:
		o.Limit = search.DefaultLimit
	case o.Limit == 0:
		o.Limit = -1 // all
	}
	if piped {
		o.Notes = func(line string) {
			fmt.Fprintln(app.Stderr, "hunk: note: "+strings.TrimSuffix(strings.TrimPrefix(line, "["), "]"))
		}
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
