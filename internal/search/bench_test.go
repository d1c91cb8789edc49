package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
