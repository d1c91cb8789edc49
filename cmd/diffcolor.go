package cmd

import (
	"strings"

	"github.com/fatih/color"
)

// colorDiff colors unified diff text for the terminal when app.ColorOut:
// file headers bold, hunk headers cyan, removed lines red, added lines green.
// Engines return plain diff text (internal/diff); color is the command's job.
func colorDiff(app *App, d string) string {
	if !app.ColorOut || d == "" {
		return d
	}
	var (
		head = color.New(color.Bold)
		hunk = color.New(color.FgCyan)
		del  = color.New(color.FgRed)
		add  = color.New(color.FgGreen)
	)
	lines := strings.SplitAfter(d, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		body, nl := strings.CutSuffix(l, "\n")
		var c *color.Color
		switch {
		case strings.HasPrefix(body, "+++ "), strings.HasPrefix(body, "--- "):
			c = head
		case strings.HasPrefix(body, "@@"):
			c = hunk
		case strings.HasPrefix(body, "+"):
			c = add
		case strings.HasPrefix(body, "-"):
			c = del
		}
		if c != nil {
			body = c.Sprint(body)
		}
		b.WriteString(body)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
