package bench

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkWriteSmall measures `hunk write` of a small file against `cat` of
// it (the budget is 3x cat), run alternately so both see the same
// load. Every write really replaces the file (two contents alternate); the
// no-op case (identical content) is reported too.
func BenchmarkWriteSmall(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	content := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	for name, c := range map[string]string{"small.go": content, "v1.go": content, "v2.go": content + "// v2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	const n = 101
	for i := 0; i < b.N; i++ {
		rss := runOnce(b, dir, "", bin, "write", "small.go", "--from", "v2.go").MaxRSS
		var cats, writes, noops []time.Duration
		for k := 0; k < n; k++ {
			from := []string{"v1.go", "v2.go"}[k%2]
			cats = append(cats, wallOnce(b, dir, "", "cat", "small.go").Wall)
			writes = append(writes, wallOnce(b, dir, "", bin, "write", "small.go", "--from", from).Wall)
			noops = append(noops, wallOnce(b, dir, "", bin, "write", "small.go", "--from", from).Wall)
		}
		cat, w, noop := med(cats), med(writes), med(noops)
		b.ReportMetric(ms(cat), "cat-ms")
		b.ReportMetric(ms(w), "write-ms")
		b.ReportMetric(ms(noop), "write-noop-ms")
		b.ReportMetric(float64(w)/float64(cat), "x-cat")
		b.ReportMetric(mb(rss), "peak-MB")
	}
}

// med is the median of ds.
func med(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
