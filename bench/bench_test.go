// Package bench measures hunk as users meet it: whole processes, started once
// per tool call, compared with the standard tools they replace. Run with
// `make bench`. Each benchmark reports medians as custom metrics; nothing
// here asserts a time.
package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	hunkPath  string
	buildErr  error
)

// hunkBin builds the hunk binary once per test process (only when a
// benchmark asks for it) and returns its path.
func hunkBin(b testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hunk-bench-bin-")
		if err != nil {
			buildErr = err
			return
		}
		hunkPath = filepath.Join(dir, "hunk")
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", hunkPath, ".")
		cmd.Dir = filepath.Dir(filepath.Dir(file))
		// Static, as released (Makefile): no dynamic loader at start-up.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			b.Logf("%s", out)
		}
	})
	if buildErr != nil {
		b.Fatalf("building hunk: %v", buildErr)
	}
	return hunkPath
}

// Run is one measured process run.
type Run struct {
	Wall   time.Duration
	MaxRSS int64 // bytes
}

// runOnce runs argv in dir with stdin from file stdin ("" for none) and
// output discarded, and measures it. It fails b if the command fails.
func runOnce(b testing.TB, dir, stdin string, argv ...string) Run {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return Run{Wall: wall, MaxRSS: ru.Maxrss * 1024}
}

// Median runs argv n times (after one warm-up run) and returns the median
// wall time and the largest peak RSS seen.
func Median(b testing.TB, n int, dir, stdin string, argv ...string) Run {
	runOnce(b, dir, stdin, argv...)
	walls := make([]time.Duration, n)
	var rss int64
	for i := range walls {
		r := runOnce(b, dir, stdin, argv...)
		walls[i] = r.Wall
		if r.MaxRSS > rss {
			rss = r.MaxRSS
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return Run{Wall: walls[n/2], MaxRSS: rss}
}

// ms converts a duration to float milliseconds for ReportMetric.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mb converts bytes to float MiB for ReportMetric.
func mb(n int64) float64 { return float64(n) / (1 << 20) }
