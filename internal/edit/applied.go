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
	if !replaceAll && bytes.Contains(f.body[k+1:], conv) {
		return false
	}
	return !f.oldStands(old, nw, k, k+len(conv))
}

// oldStands reports whether the lines the edit replaces (the old text
// without the lines it shares with the new at its start and end) stand in
// the file as whole lines outside [from, to), where the new text is: the
// change's own place, drifted since (a context line edited), with its
// result found only at a twin elsewhere — not applied.
func (f *file) oldStands(old, nw string, from, to int) bool {
	o, n := strings.Split(old, "\n"), strings.Split(nw, "\n")
	i := 0
	for i < len(o) && i < len(n) && o[i] == n[i] {
		i++
	}
	j := 0
	for j < len(o)-i && j < len(n)-i && o[len(o)-1-j] == n[len(n)-1-j] {
		j++
	}
	mid := strings.Join(o[i:len(o)-j], "\n")
	if strings.TrimSpace(mid) == "" {
		return false
	}
	conv := []byte(f.toEOL(mid))
	for at := 0; ; {
		k := bytes.Index(f.body[at:], conv)
		if k < 0 {
			return false
		}
		k += at
		end := k + len(conv)
		whole := (k == 0 || f.body[k-1] == '\n') && (end == len(f.body) || f.body[end] == '\n' || f.body[end] == '\r')
		if whole && (end <= from || k >= to) {
			return true
		}
		at = k + 1
	}
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
