package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriteSmall measures `hunk write` of a small file (a replacement with
// new content each run, so it is never a no-op) against `cat` of that file:
// the budget is 3x cat.
func BenchmarkWriteSmall(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	content := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "small.go"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.go"), []byte(content+"// v2\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		cat := Median(b, 101, dir, "", "cat", "small.go")
		// Alternate between two contents so every run really replaces the file.
		w := Median(b, 101, dir, "", bin, "write", "small.go", "--from", "new.go")
		noop := Median(b, 101, dir, "", bin, "write", "small.go", "--from", "new.go")
		b.ReportMetric(ms(cat.Wall), "cat-ms")
		b.ReportMetric(ms(w.Wall), "write-ms")
		b.ReportMetric(ms(noop.Wall), "write-noop-ms")
		b.ReportMetric(float64(w.Wall)/float64(cat.Wall), "x-cat")
		b.ReportMetric(mb(w.MaxRSS), "peak-MB")
	}
}
