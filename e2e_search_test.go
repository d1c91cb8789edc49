//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchOverMCP: the search tool through the Go SDK's client, in every
// output mode: matches in path and line order with their structured
// details, and a read-denied file never named, neither in the text nor in
// structuredContent.
func TestSearchOverMCP(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"secret/key.txt": "TODO the key\n",
		"src/a.go":       "package a\n// TODO one\n",
		"src/b.go":       "package b\n\n// TODO two\n",
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	cs := mcpSession(t, dir, nil, "--deny-read", "secret/")
	for _, mode := range []string{"content", "files_with_matches", "count", "names"} {
		pattern := "TODO"
		if mode == "names" {
			pattern = "**/*"
		}
		res, text, sc := callTool(t, cs, "search", map[string]any{"pattern": pattern, "outputMode": mode})
		b, _ := json.Marshal(sc)
		if res.IsError || strings.Contains(text, "secret") || strings.Contains(string(b), "secret") {
			t.Errorf("%s: error %v, or the denied file named:\n%s\n%s", mode, res.IsError, text, b)
		}
		if !strings.Contains(text, "src/a.go") || !strings.Contains(text, "src/b.go") {
			t.Errorf("%s: want both src files:\n%s", mode, text)
		}
	}
	_, text, sc := callTool(t, cs, "search", map[string]any{"pattern": "TODO"})
	if text != "src/a.go:2:// TODO one\nsrc/b.go:3:// TODO two" {
		t.Errorf("content: %q", text)
	}
	if m, _ := sc["matches"].([]any); len(m) != 2 {
		t.Errorf("structuredContent: %v", sc)
	}
}
