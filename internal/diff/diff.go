// Package diff owns unified diff text: it is the only importer of gotextdiff.
package diff

import (
	"bytes"
	"fmt"

	"github.com/hexops/gotextdiff"
	"github.com/hexops/gotextdiff/myers"
	"github.com/hexops/gotextdiff/span"
)

// Unified returns the unified diff (3 lines of context) that turns old into
// new, with "--- oldName" and "+++ newName" headers; "" when they are equal.
// A last line without a newline is marked "\ No newline at end of file".
func Unified(oldName, newName string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	edits := myers.ComputeEdits(span.URIFromPath(oldName), string(old), string(new))
	return fmt.Sprint(gotextdiff.ToUnified(oldName, newName, string(old), edits))
}
