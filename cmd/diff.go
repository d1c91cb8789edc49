package cmd

import (
	"strings"

	"github.com/fatih/color"
)

// unifiedDiff renders old -> new for name. (Replaced by internal/diff once merged.)
func unifiedDiff(name string, old, new []byte, created bool) string {
	return ""
}

// colorDiff colors a unified diff for a terminal when stdout is colored:
// headers bold, hunks cyan, removals red, additions green.
func (a *App) colorDiff(d string) string {
	if d == "" || !a.ColorOut {
		return d
	}
	var b strings.Builder
	for _, full := range strings.SplitAfter(d, "\n") {
		line := strings.TrimSuffix(full, "\n")
		nl := full[len(line):]
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			b.WriteString(color.New(color.Bold).Sprint(line))
		case strings.HasPrefix(line, "@@"):
			b.WriteString(color.CyanString("%s", line))
		case strings.HasPrefix(line, "+"):
			b.WriteString(color.GreenString("%s", line))
		case strings.HasPrefix(line, "-"):
			b.WriteString(color.RedString("%s", line))
		default:
			b.WriteString(line)
		}
		b.WriteString(nl)
	}
	return b.String()
}
