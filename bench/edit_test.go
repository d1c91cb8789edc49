package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// bigFileSize is the size of the file BenchmarkEditBigFile edits.
const bigFileSize = 100 << 20

// writeBigFile writes a text file of about size bytes, numbered lines, with
// the unique line "MARKER-OLD-VALUE = 1" fifty lines before the end.
func writeBigFile(b *testing.B, path string, size int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const line = "the quick brown fox jumps over the lazy dog, line %09d of the big file\n"
	n := size / len(fmt.Sprintf(line, 0))
	for i := 0; i < n; i++ {
		if i == n-50 {
			w.WriteString("MARKER-OLD-VALUE = 1\n")
			continue
		}
		fmt.Fprintf(w, line, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// medianOf returns the median wall time and the largest peak RSS of runs.
func medianOf(runs []Run) Run {
	walls := make([]time.Duration, len(runs))
	var rss int64
	for i, r := range runs {
		walls[i] = r.Wall
		rss = max(rss, r.MaxRSS)
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return Run{Wall: walls[len(walls)/2], MaxRSS: rss}
}

// BenchmarkEditBigFile measures `hunk edit` of one line near the end of a
// 100 MB text file against `cp` of that file (the bound: at most 2x
// the time, peak RSS at most 3x the file size). Runs alternate cp and edit,
// and the edit flips the line back and forth, so both see the same cache.
// The edit's time includes the fsync that atomic replacement needs; cp's
// does not include writing its copy to disk, so `cp && sync copy` is
// reported too (x-cp+sync), the like-for-like baseline.
func BenchmarkEditBigFile(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	big := filepath.Join(dir, "big.txt")
	writeBigFile(b, big, bigFileSize)
	fi, err := os.Stat(big)
	if err != nil {
		b.Fatal(err)
	}
	const n = 9
	for i := 0; i < b.N; i++ {
		runOnce(b, dir, "", "cp", "big.txt", "copy.txt") // warm the cache
		var cps, cpSyncs, edits []Run
		old, nw := "MARKER-OLD-VALUE = 1", "MARKER-NEW-VALUE = 2"
		for k := 0; k < n; k++ {
			// An untimed sync between runs: cp leaves 100 MB dirty, and on
			// ext4 (data=ordered) the edit's fsync would otherwise flush it too.
			runOnce(b, dir, "", "sync")
			cps = append(cps, runOnce(b, dir, "", "cp", "big.txt", "copy.txt"))
			runOnce(b, dir, "", "sync")
			cpSyncs = append(cpSyncs, runOnce(b, dir, "", "sh", "-c", "cp big.txt copy.txt && sync copy.txt"))
			runOnce(b, dir, "", "sync")
			edits = append(edits, runOnce(b, dir, "", bin, "edit", "big.txt", "--old", old, "--new", nw))
			old, nw = nw, old
		}
		cp, cpSync, ed := medianOf(cps), medianOf(cpSyncs), medianOf(edits)
		b.ReportMetric(ms(cp.Wall), "cp-ms")
		b.ReportMetric(ms(cpSync.Wall), "cp+sync-ms")
		b.ReportMetric(float64(ed.Wall)/float64(cpSync.Wall), "x-cp+sync")
		b.ReportMetric(ms(ed.Wall), "edit-ms")
		b.ReportMetric(float64(ed.Wall)/float64(cp.Wall), "x-cp")
		b.ReportMetric(mb(ed.MaxRSS), "edit-peak-MiB")
		b.ReportMetric(float64(ed.MaxRSS)/float64(fi.Size()), "rss/size")
	}
}

// BenchmarkEditSmall measures `hunk edit` of a small file as a whole
// process against `cat` of it (the bound: at most 3x).
func BenchmarkEditSmall(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	var content []byte
	for i := 0; i < 200; i++ {
		content = fmt.Appendf(content, "func f%03d() int { return %d }\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.go"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	const n = 51
	for i := 0; i < b.N; i++ {
		wallOnce(b, dir, "", "cat", "small.go")
		var cats, edits []Run
		old, nw := "return 150 }", "return -150 }"
		for k := 0; k < n; k++ {
			cats = append(cats, wallOnce(b, dir, "", "cat", "small.go"))
			wallOnce(b, dir, "", "sync") // the edit's fsync flushes only its own file
			edits = append(edits, wallOnce(b, dir, "", bin, "edit", "small.go", "--old", old, "--new", nw))
			old, nw = nw, old
		}
		cat, ed := medianOf(cats), medianOf(edits)
		b.ReportMetric(ms(cat.Wall), "cat-ms")
		b.ReportMetric(ms(ed.Wall), "edit-ms")
		b.ReportMetric(float64(ed.Wall)/float64(cat.Wall), "x-cat")
	}
}
