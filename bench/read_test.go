package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkReadSmall measures `hunk read` of a small source file (about
// 4 KB, 100 lines) against `cat` of the same file, as whole processes.
// Budget (issue 2): x-cat <= 3.
func BenchmarkReadSmall(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	smallGoFile(b, filepath.Join(dir, "small.go"))
	for i := 0; i < b.N; i++ {
		cat, h := medianPair(b, 101, dir, []string{"cat", "small.go"}, []string{bin, "read", "small.go"})
		b.ReportMetric(ms(cat.Wall), "cat-ms")
		b.ReportMetric(ms(h.Wall), "hunk-read-ms")
		b.ReportMetric(float64(h.Wall)/float64(cat.Wall), "x-cat")
		b.ReportMetric(mb(h.MaxRSS), "hunk-rss-MB")
	}
}

// smallGoFile writes a small source file (about 4 KB, 100 lines) at p.
func smallGoFile(b *testing.B, p string) {
	var src strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&src, "\tfmt.Println(\"line %03d of a small Go file, about forty bytes\")\n", i)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// medianPair is Median for two commands run alternately, so that both see
// the same machine load (on a shared machine, running all of one and then
// all of the other skews their ratio).
func medianPair(b *testing.B, n int, dir string, x, y []string) (Run, Run) {
	rx := runOnce(b, dir, "", x...).MaxRSS
	ry := runOnce(b, dir, "", y...).MaxRSS
	xs, ys := make([]time.Duration, n), make([]time.Duration, n)
	for i := 0; i < n; i++ {
		xs[i] = wallOnce(b, dir, "", x...).Wall
		ys[i] = wallOnce(b, dir, "", y...).Wall
	}
	slices.Sort(xs)
	slices.Sort(ys)
	return Run{Wall: xs[n/2], MaxRSS: rx}, Run{Wall: ys[n/2], MaxRSS: ry}
}

// BenchmarkReadLastPage1GB reads the last page of a 1 GiB file: one
// streaming pass (line count and SHA-256 of the whole file), so peak RSS
// must stay small. Budget (issue 2): peak RSS <= 32 MB.
func BenchmarkReadLastPage1GB(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	const size = 1 << 30
	line := []byte(strings.Repeat("x", 63) + "\n") // 64 bytes: 2^24 lines
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		b.Fatal(err)
	}
	chunk := bytes.Repeat(line, (1<<20)/len(line))
	for n := 0; n < size; n += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	lines := size / len(line)
	offset := fmt.Sprint(lines - 99)
	for i := 0; i < b.N; i++ {
		r := Median(b, 5, dir, "", bin, "read", "--offset", offset, "big.txt")
		b.ReportMetric(ms(r.Wall), "ms")
		b.ReportMetric(mb(r.MaxRSS), "peak-rss-MB")
		b.ReportMetric(float64(size)/(1<<20)/(float64(r.Wall)/float64(time.Second)), "MB/s")
	}
}
