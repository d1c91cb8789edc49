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
	"strconv"
	"strings"
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
	MaxRSS int64 // bytes; 0 when not measured
}

// timeBin is GNU time, used to measure a child's peak RSS honestly: os/exec
// starts children with vfork+exec, and Linux then counts this (large) test
// process's high-water mark into the child's ru_maxrss. GNU time fork()s, so
// the measured command starts from time's own small address space.
var timeBin = func() string {
	if p, err := exec.LookPath("/usr/bin/time"); err == nil {
		return p
	}
	return ""
}()

// runOnce runs argv in dir with stdin from file stdin ("" for none) and
// output discarded, and measures wall time and peak RSS (under GNU time when
// it is installed, which adds well under a millisecond to the wall time; for
// ratios of short commands use wallOnce). It fails b if the command fails.
func runOnce(b testing.TB, dir, stdin string, argv ...string) Run {
	if timeBin == "" {
		return exe(b, dir, stdin, argv...)
	}
	f, err := os.CreateTemp("", "hunk-bench-rss-")
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	defer os.Remove(f.Name())
	r := exe(b, dir, stdin, append([]string{timeBin, "-f", "%M", "-o", f.Name()}, argv...)...)
	out, err := os.ReadFile(f.Name())
	if err != nil {
		b.Fatal(err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(lastLine(string(out))), 10, 64)
	if err != nil {
		b.Fatalf("GNU time said %q", out)
	}
	r.MaxRSS = kb * 1024
	return r
}

// wallOnce runs argv directly and measures only its wall time.
func wallOnce(b testing.TB, dir, stdin string, argv ...string) Run {
	r := exe(b, dir, stdin, argv...)
	r.MaxRSS = 0
	return r
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func exe(b testing.TB, dir, stdin string, argv ...string) Run {
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

// Median runs argv n times directly (after one warm-up run) for the median
// wall time, and once more under GNU time for the peak RSS. The command must
// be repeatable (read-only, or idempotent).
func Median(b testing.TB, n int, dir, stdin string, argv ...string) Run {
	rss := runOnce(b, dir, stdin, argv...).MaxRSS
	walls := make([]time.Duration, n)
	for i := range walls {
		walls[i] = wallOnce(b, dir, stdin, argv...).Wall
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return Run{Wall: walls[n/2], MaxRSS: rss}
}

// ms converts a duration to float milliseconds for ReportMetric.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mb converts bytes to float MiB for ReportMetric.
func mb(n int64) float64 { return float64(n) / (1 << 20) }
