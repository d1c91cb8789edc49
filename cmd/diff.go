package cmd

import "github.com/hunk-dev/hunk/internal/diff"

// fileDiff renders the change of one file git-style: "--- a/PATH" and
// "+++ b/PATH", or "--- /dev/null" for a file the change creates.
func fileDiff(name string, old, new []byte, created bool) string {
	oldName := "a/" + name
	if created {
		oldName = "/dev/null"
	}
	return diff.Unified(oldName, "b/"+name, old, new)
}

// colorDiff colors d when stdout is a colored terminal.
func (a *App) colorDiff(d string) string {
	if d == "" || !a.ColorOut {
		return d
	}
	return colorizeDiff(d)
}
