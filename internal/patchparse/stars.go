package patchparse

import "strings"

// Codex's markers as some models write them, closed with stars as they
// are opened: "*** Begin Patch ***", "*** Update File: src/a.rs ***"
// (grok, and harnesses that peel only the Begin and End lines). Outside
// --compat codex and --strict a marker line — one that starts with "***"
// and names a marker — is read without its closing " ***" (also where a
// harness peeled them off the Begin and End lines alone, leaving
// "*** Update File: src/washer.rs ***"); a path that truly ends in " ***"
// is no model's.

// starredMarkers are the markers read with closing stars.
var starredMarkers = []string{beginPatch, endPatch, environmentID, addFile, deleteFile, updateFile, modifyFile, moveFile, moveTo, endOfFile}

// peelStars returns text with its starred markers' closing stars taken
// off, and whether it had any.
func peelStars(text string) (string, bool) {
	if !strings.Contains(text, " ***") || !strings.Contains(text, beginPatch) {
		return text, false
	}
	lines := strings.SplitAfter(text, "\n")
	peeled := false
	for i, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		t := strings.TrimRight(body, " \t")
		if !strings.HasPrefix(t, "***") || !strings.HasSuffix(t, " ***") {
			continue
		}
		inner := strings.TrimRight(strings.TrimSuffix(t, " ***"), " \t")
		for _, m := range starredMarkers {
			if inner == strings.TrimSpace(m) || strings.HasPrefix(inner, m) && strings.TrimSpace(inner[len(m):]) != "" {
				lines[i] = inner + l[len(body):]
				peeled = true
				break
			}
		}
	}
	return strings.Join(lines, ""), peeled
}
