package search

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// Page says how to ask for the next window, in the words of the surface
// that shows it (a flag, a tool's argument): "--offset 200".
type Page func(offset int) string

// Notes, when set, takes the lines that say what was left out (a window's
// end, a bound) apart from the results: the command line prints them on
// stderr when its stdout is not a terminal, as ripgrep does, so that a
// pipe reads matches only. nil: they end the text.
type Notes func(line string)

// note ends b with line, or gives it to notes.
func note(b *strings.Builder, notes Notes, line string) {
	if notes != nil {
		notes(line)
		return
	}
	b.WriteString(line + "\n")
}

// Text is r as a person and a model read it, without headings as grep and
// ripgrep print it: path:line:text for a match, path-line-text for
// context, "--" between groups apart; a path a line (files); path:count
// (counts). The last line says what was left out and how to page. A
// name with a control character (a newline that would forge a result
// line, an escape sequence) or invalid UTF-8 is quoted as read quotes it
// (workspace.Quote); the JSON result keeps names as they are.
func Text(r *Result, o *Options, page Page, notes Notes) string {
	var b strings.Builder
	switch o.Mode {
	case Lines:
		var prev *Match
		for i := range r.Matches {
			m := &r.Matches[i]
			if (o.Before > 0 || o.After > 0) && prev != nil && (prev.Path != m.Path || prev.Line+1 < m.Line) {
				b.WriteString("--\n")
			}
			sep := ":"
			if m.Context {
				sep = "-"
			}
			fmt.Fprintf(&b, "%s%s%d%s%s", workspace.Quote(m.Path), sep, m.Line, sep, m.Text)
			if m.Cut > 0 {
				fmt.Fprintf(&b, " [... %d bytes cut]", m.Cut)
			}
			b.WriteByte('\n')
			prev = m
		}
	case Files:
		for _, f := range r.Files {
			b.WriteString(workspace.Quote(f.Path) + "\n")
		}
	case Count:
		for _, f := range r.Files {
			fmt.Fprintf(&b, "%s:%d\n", workspace.Quote(f.Path), f.Count)
		}
	}
	if r.Truncated {
		what, total := "matches", r.TotalMatches
		if o.Mode != Lines {
			what, total = "files", r.TotalFiles
		}
		shown := o.Offset + o.Limit
		note(&b, notes, fmt.Sprintf("[%d-%d of %d %s shown; the next: %s, or narrow the search (a path, a glob, a type)]",
			o.Offset+1, shown, total, what, page(shown)))
	}
	writeLimits(&b, notes, r.Limits)
	return strings.TrimSuffix(b.String(), "\n")
}

// writeLimits says what a bound left out, a line each, after the results:
// an ignore file's rules past its bound were not applied, so files it
// would leave out may be among them.
func writeLimits(b *strings.Builder, notes Notes, limits []string) {
	const shown = 10
	for i, l := range limits {
		if i == shown {
			note(b, notes, fmt.Sprintf("[and %d more left out by a bound: --json lists them (limits)]", len(limits)-shown))
			break
		}
		note(b, notes, "["+workspace.Quote(l)+"]")
	}
}

// NamesText is a name search's result: a path a line, and what was left
// out.
func NamesText(r *NameResult, o *NameOptions, page Page, notes Notes) string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(workspace.Quote(f.Path) + "\n")
	}
	if r.Truncated {
		shown := o.Offset + len(r.Files)
		note(&b, notes, fmt.Sprintf("[%d-%d of %d files shown; the next: %s, or narrow the glob]", o.Offset+1, shown, r.Total, page(shown)))
	}
	writeLimits(&b, notes, r.Limits)
	return strings.TrimSuffix(b.String(), "\n")
}
