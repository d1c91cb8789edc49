package fsquery

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/workspace"
)

func TestHeadTail(t *testing.T) {
	data := []byte("a\nb\nc\n")
	for _, c := range []struct {
		head, tail float64
		want       string
	}{
		{0, 0, "a\nb\nc\n"},
		{2, 0, "a\nb"},
		{1.5, 0, "a\nb"}, // a fraction is a whole line more for head
		{0, 2, "b\nc\n"},
		{0, 1.5, "c\n"}, // and none for tail
		{0, 0.5, ""},
		{-1, 0, ""},
		{10, 0, "a\nb\nc"},
		{0, 10, "a\nb\nc\n"},
	} {
		got, err := HeadTail(data, c.head, c.tail)
		if err != nil || got != c.want {
			t.Errorf("HeadTail(%v, %v) = %q, %v; want %q", c.head, c.tail, got, err, c.want)
		}
	}
	if _, err := HeadTail(data, 1, 1); err == nil {
		t.Error("head and tail together were taken")
	}
}

func workspaceWith(t *testing.T, files ...string) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", len(f))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{History: workspace.HistoryOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestListAndSizes(t *testing.T) {
	ws := workspaceWith(t, "b.txt", "A.txt", "longer-name.txt", "sub/")
	_, ents, err := List(ws, ".")
	if err != nil {
		t.Fatal(err)
	}
	text, err := SizesText(ents, "size")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range ents {
		if e.Type == "file" { // a directory sorts by its stat size, which varies by filesystem
			order = append(order, e.Name)
		}
	}
	// Largest first; equal sizes in a locale's order (case aside).
	if want := []string{"longer-name.txt", "A.txt", "b.txt"}; !reflect.DeepEqual(order, want) {
		t.Errorf("by size: %v, want %v", order, want)
	}
	if !strings.HasSuffix(text, "Total: 3 files, 1 directories\nCombined size: 25 B") {
		t.Errorf("sizes text:\n%s", text)
	}
	if _, err := SizesText(ents, "date"); err == nil {
		t.Error("sortBy date was taken")
	}
}

func TestTreeAndSearch(t *testing.T) {
	ws := workspaceWith(t, "src/a.go", "src/b.md", "node_modules/x/y.go", "top.go")
	_, text, err := Tree(ws, ".", []string{"node_modules"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "node_modules") || !strings.Contains(text, `"name": "a.go"`) {
		t.Errorf("tree without node_modules:\n%s", text)
	}
	got, err := Search(ws, ".", "**/*.go", []string{"node_modules/**"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := []string{"a.go", "top.go"}; !reflect.DeepEqual(got, want) {
		t.Errorf("search: %v, want %v", got, want)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KB", 1536: "1.50 KB", 5 << 30: "5.00 GB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
