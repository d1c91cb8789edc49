package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStartup measures `hunk --version`, the floor every command pays,
// against `cat` of a small file.
func BenchmarkStartup(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		cat := Median(b, 51, dir, "", "cat", "small.txt")
		h := Median(b, 51, dir, "", bin, "--version")
		b.ReportMetric(ms(cat.Wall), "cat-ms")
		b.ReportMetric(ms(h.Wall), "hunk-version-ms")
		b.ReportMetric(float64(h.Wall)/float64(cat.Wall), "x-cat")
	}
}
