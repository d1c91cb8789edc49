package cmd

import (
	"strings"

	"github.com/fatih/color"
)

// colorizeDiff colors a unified diff for a terminal: file headers bold, hunk
// headers cyan, removed lines red, added lines green.
func colorizeDiff(d string) string {
	bold := color.New(color.Bold).SprintFunc()
	cyan := color.New(color.FgCyan).SprintFunc()
	red := color.New(color.FgRed).SprintFunc()
	green := color.New(color.FgGreen).SprintFunc()
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
