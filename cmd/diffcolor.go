package cmd

import (
	"strings"

	"github.com/fatih/color"
)

// colorizeDiff colors a unified diff for a terminal: file headers bold, hunk
// headers cyan, removed lines red, added lines green.
func colorizeDiff(d string) string {
	// The caller has decided (--color, NO_COLOR, a TTY): color.New's own
	// look at NO_COLOR must not overrule --color always.
	on := func(a color.Attribute) func(...any) string {
		c := color.New(a)
		c.EnableColor()
		return c.SprintFunc()
	}
	bold, cyan, red, green := on(color.Bold), on(color.FgCyan), on(color.FgRed), on(color.FgGreen)
	var b strings.Builder
	for _, l := range strings.SplitAfter(d, "\n") {
		text, nl := strings.CutSuffix(l, "\n")
		switch {
		case strings.HasPrefix(text, "--- ") || strings.HasPrefix(text, "+++ "):
			text = bold(text)
		case strings.HasPrefix(text, "@@"):
			text = cyan(text)
		case strings.HasPrefix(text, "-"):
			text = red(text)
		case strings.HasPrefix(text, "+"):
			text = green(text)
		}
		b.WriteString(text)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}
