package edit

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Message is the one-paragraph summary of the edit of path, shared by
// humans and models.
func (res *Result) Message(path string, dryRun bool) string {
	path = workspace.Quote(path)
	var b strings.Builder
	switch {
	case res.Replacements == 0 || !res.Changed && res.Match[0] == Inserted:
		fmt.Fprintf(&b, "No changes made to %s.", path)
	case dryRun:
		fmt.Fprintf(&b, "Would replace %s in %s (dry run: nothing was written).", result.Count(res.Replacements, "block"), path)
	default:
		fmt.Fprintf(&b, "Successfully replaced %s in %s.", result.Count(res.Replacements, "block"), path)
	}
	for _, n := range res.Notes {
		b.WriteString("\n" + n)
	}
	return b.String()
}

// InsertMessage is Message for an insert after line after (0: at the
// start) that changed the file.
func (res *Result) InsertMessage(path string, after int, dryRun bool) string {
	path = workspace.Quote(path)
	msg := fmt.Sprintf("Inserted the text after line %d of %s.", after, path)
	if after == 0 {
		msg = fmt.Sprintf("Inserted the text at the start of %s.", path)
	}
	if dryRun {
		msg = strings.TrimSuffix(msg, ".") + " (dry run: nothing was written)."
	}
	return msg
}
