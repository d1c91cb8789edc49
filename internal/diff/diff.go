// Package diff owns unified diff text: it turns an old and a new content into
// the `--- a` / `+++ b` / `@@` form every hunk command shows with --diff. It is
// the only importer of hexops/gotextdiff; coloring is left to the commands.
package diff

import (
	"fmt"
	"strings"

	"github.com/hexops/gotextdiff"
	"github.com/hexops/gotextdiff/myers"
	"github.com/hexops/gotextdiff/span"
)

// Unified returns the unified diff (3 lines of context) that turns old into
// new, headed "--- oldName" / "+++ newName"; "" when the contents are equal.
// A missing final newline is marked "\ No newline at end of file" as diff(1)
// does. Creations and deletions are diffs against empty content; name them
// /dev/null as git does.
func Unified(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := string(old), string(new)
	edits := myers.ComputeEdits(span.URIFromPath(oldName), a, b)
	u := gotextdiff.ToUnified(oldName, newName, a, edits)
	if len(u.Hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range u.Hunks {
		var from, to int
		for _, l := range h.Lines {
			switch l.Kind {
			case gotextdiff.Delete:
				from++
			case gotextdiff.Insert:
				to++
			default:
				from++
				to++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", rangeOf(h.FromLine, from), rangeOf(h.ToLine, to))
		for _, l := range h.Lines {
			switch l.Kind {
			case gotextdiff.Delete:
				sb.WriteByte('-')
			case gotextdiff.Insert:
				sb.WriteByte('+')
			default:
				sb.WriteByte(' ')
			}
			sb.WriteString(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return sb.String()
}

// rangeOf formats a hunk range as diff(1) does: "l" for one line, "l,n"
// otherwise, and "l-1,0" for an empty range (the line before which it lies).
func rangeOf(line, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", line-1)
	case 1:
		return fmt.Sprintf("%d", line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}
