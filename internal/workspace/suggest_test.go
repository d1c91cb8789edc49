package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestNearness(t *testing.T) {
	tests := []struct {
		want, name string
		ok         bool
		rank       int
	}{
		{"readme.md", "README.md", true, 0},
		{"util.js", "util.ts", true, 10},
		{"mian.go", "main.go", true, 21},
		{"main.og", "main.go", true, 10},
		{"confg.yaml", "config.yaml", true, 21},
		{"a.go", "b.go", true, 21},
		{"x", "y", true, 21},
		{"main", "main_test.go", true, 40},
		{"zzzzqqqq.txt", "README.md", false, 0},
		{"abc", "xyz", false, 0},
		{"confg.yaml", "a.go", false, 0}, // "a" is in every name
	}
	for _, tt := range tests {
		rank, ok := nearness(tt.want, tt.name)
		if ok != tt.ok || (ok && rank != tt.rank) {
			t.Errorf("nearness(%q, %q) = %d, %v; want %d, %v", tt.want, tt.name, rank, ok, tt.rank, tt.ok)
		}
	}
}

func TestSuggest(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"src/main.go", "src/main_test.go", "src/Util.go", "docs/guide.md"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tests := []struct {
		path string
		want []string
	}{
		{"src/mian.go", []string{"src/main.go"}},
		{"src/main", []string{"src/main.go", "src/main_test.go"}},
		{"src/util.go", []string{"src/Util.go"}},
		{"scr/main.go", []string{"src/main.go"}},
		{"doc/guide.md", []string{"docs/guide.md"}},
		{"doc/nothing.md", nil},
		{"qqqqqqqq", nil},
	}
	for _, tt := range tests {
		if got := ws.Suggest(tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
