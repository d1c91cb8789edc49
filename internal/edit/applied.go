package edit

import (
	"bytes"
	"strings"
)

// applied reports whether an edit whose old text is absent is already
// applied: its new text (with the file's line endings) is present — exactly
// once, unless replaceAll, since a text that occurs in many places proves
// nothing — is not blank, and is not part of the old text (deleting "(1)"
// from "foo(1)" leaves "foo", which may have been there all along).
func (f *file) applied(old, nw string, replaceAll bool) bool {
	if strings.TrimSpace(nw) == "" || strings.Contains(old, nw) || !anchored(old, nw) {
		return false
	}
	conv := []byte(f.toEOL(nw))
	k := bytes.Index(f.body, conv)
	if k < 0 {
		return false
	}
	return replaceAll || !bytes.Contains(f.body[k+1:], conv)
}

// anchored reports whether the new text carries a line of the old one it
// leaves as it was — at its start or its end, not blank — so that finding
// the new text finds it where the old one was. A new text with no line of
// the old (x = 2 for x = 1) found in the file may be a twin of it elsewhere
// (another function's x = 2): that the change stands cannot be seen, and
// it is the normal refusal.
func anchored(old, nw string) bool {
	o, n := strings.Split(old, "\n"), strings.Split(nw, "\n")
	for i := 0; i < len(o) && i < len(n) && o[i] == n[i]; i++ {
		if strings.TrimSpace(o[i]) != "" {
			return true
		}
	}
	for i, j := len(o)-1, len(n)-1; i >= 0 && j >= 0 && o[i] == n[j]; i, j = i-1, j-1 {
		if strings.TrimSpace(o[i]) != "" {
			return true
		}
	}
	return false
}
