package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// BenchmarkSearchGoroot searches Go's own source tree (GOROOT/src: 11,000
// files, 157 MB here) for a literal and for a regular expression; `make
// bench` compares it with ripgrep in bench/README.md.
func BenchmarkSearchGoroot(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go env GOROOT")
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	ws, err := workspace.Open(root, workspace.Options{})
	if err != nil {
		b.Skip(err)
	}
	for _, c := range []struct{ name, pattern string }{
		{"literal", "func main"},
		{"regexp", `func \(\w+ \*\w+\) [A-Z]\w*\(`},
		{"none", "zzqqxxyy-no-such-text"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Search(context.Background(), ws, Options{Pattern: c.pattern, Mode: Count}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// deepTree makes a chain of depth directories under a new temporary
// directory (by openat: the path is longer than PATH_MAX) with one file at
// its bottom.
func deepTree(tb testing.TB, depth int) string {
	tb.Helper()
	root := tb.TempDir()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for range depth {
		if err := unix.Mkdirat(fd, "a", 0o755); err != nil {
			tb.Fatal(err)
		}
		next, err := unix.Openat(fd, "a", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			tb.Fatal(err)
		}
		fd = next
	}
	f, err := unix.Openat(fd, "f.txt", unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err == nil {
		unix.Write(f, []byte("needle\n"))
		unix.Close(f)
	}
	unix.Close(fd)
	tb.Cleanup(func() { exec.Command("rm", "-rf", root).Run() })
	return root
}

// TestDeepTree: a file at the bottom of 3,000 directories (a path of
// 6,000 bytes, past PATH_MAX) is found by name and by content.
func TestDeepTree(t *testing.T) {
	ws, err := workspace.Open(deepTree(t, 3000), workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	n, err := Names(context.Background(), ws, NameOptions{Glob: "f.txt", Options: Options{Limit: 10}})
	if err != nil || n.Total != 1 || !strings.HasSuffix(n.Files[0].Path, "/a/f.txt") || strings.Count(n.Files[0].Path, "/") != 3000 {
		t.Fatalf("names: %+v %v", n, err)
	}
	r, err := Search(context.Background(), ws, Options{Pattern: "needle", Mode: Lines, Limit: 10})
	if err != nil || r.TotalMatches != 1 {
		t.Fatalf("search: %+v %v", r, err)
	}
}

// BenchmarkSearchDeepTree lists a 2,000-deep chain of directories: each
// directory is opened from its parent, once (a walk from the root for each
// made the listing quadratic in the depth, cubic with the per-entry stat).
func BenchmarkSearchDeepTree(b *testing.B) {
	ws, err := workspace.Open(deepTree(b, 2000), workspace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	for i := 0; i < b.N; i++ {
		if _, err := Names(context.Background(), ws, NameOptions{Options: Options{Limit: 10}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchManyMatchesPage asks for the first 10 of 400,000
// matching lines (4 files): a file keeps at most offset+limit of its
// matches and counts the rest, so the bytes allocated follow the page, not
// the matches (ripgrep's sink).
func BenchmarkSearchManyMatchesPage(b *testing.B) {
	dir := b.TempDir()
	for k := range 4 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", k)), []byte(strings.Repeat("needle line with some text\n", 100000)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Search(context.Background(), ws, Options{Pattern: "needle", Mode: Lines, Limit: 10})
		if err != nil || r.TotalMatches != 400000 || len(r.Matches) != 10 {
			b.Fatalf("%+v %v", r.TotalMatches, err)
		}
	}
}
