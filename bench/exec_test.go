//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// BenchmarkExec measures what `hunk exec -- true` costs over running `true`
// directly, per driver: bwrap against bubblewrap run by hand with the same
// isolation arguments (the target is within 3 ms), landlock against plain
// `true` (the target is under 5 ms). Medians of 51 runs each, of wall time
// and, less sensitive to a busy machine, of CPU time (user+system of the
// process and the children it waited for).
//
// For scale it also measures the floor any Go implementation stands on
// here: the leanest Go program that runs a command — syscall.ForkExec and
// wait4, no dependency, no flag parsing, no sandbox (go-spawn-*) — over the
// same `true` and the same bubblewrap command.
func BenchmarkExec(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	spawner := goSpawner(b)
	const n = 51
	for i := 0; i < b.N; i++ {
		plain := medianCPU(b, n, dir, truePath)
		b.ReportMetric(ms(plain.Wall), "true-ms")
		b.ReportMetric(ms(plain.CPU), "true-cpu-ms")
		// hunk's own start-up (cobra, viper), which every command pays, for reference.
		version := medianCPU(b, n, dir, bin, "--version")
		b.ReportMetric(ms(version.Wall), "hunk-version-ms")
		b.ReportMetric(ms(version.CPU), "hunk-version-cpu-ms")

		floor := medianCPU(b, n, dir, spawner, truePath)
		b.ReportMetric(ms(floor.Wall-plain.Wall), "go-spawn-overhead-ms")

		if sandbox.Lookup("landlock").Probe(context.Background()).Available {
			ll := medianCPU(b, n, dir, bin, "-C", dir, "exec", "--driver", "landlock", "--", "true")
			b.ReportMetric(ms(ll.Wall), "hunk-landlock-ms")
			b.ReportMetric(ms(ll.Wall-plain.Wall), "landlock-overhead-ms")
			b.ReportMetric(ms(ll.CPU-plain.CPU), "landlock-overhead-cpu-ms")
		} else {
			b.Log("SKIPPED landlock: not available here")
		}

		if bw, err := exec.LookPath("bwrap"); err == nil {
			var env []string
			for _, k := range []string{"PATH", "HOME", "LANG", "TERM"} {
				if v, ok := os.LookupEnv(k); ok {
					env = append(env, k+"="+v)
				}
			}
			// The same isolation hunk sets up: hidden credentials and the
			// workspace's build caches included.
			home := os.Getenv("HOME")
			caches := sandbox.CacheDir(dir, home, os.Getenv("XDG_CACHE_HOME"))
			vars, _, err := sandbox.CacheEnv(caches, nil, false, os.Getenv)
			if err != nil {
				b.Fatal(err)
			}
			spec := sandbox.Spec{Argv: []string{"true"}, Workspace: dir, Workdir: dir, Env: append(vars, env...),
				RW: []string{caches}, Hide: sandbox.DefaultHidden(home)}
			bwArgv := append([]string{bw}, sandbox.BwrapArgs(spec, 0, 0)...)
			byHand := medianCPU(b, n, dir, bwArgv...)
			spawned := medianCPU(b, n, dir, append([]string{spawner}, bwArgv...)...)
			b.ReportMetric(ms(spawned.Wall-byHand.Wall), "go-spawn-bwrap-overhead-ms")
			hb := medianCPU(b, n, dir, bin, "-C", dir, "exec", "--driver", "bwrap", "--", "true")
			b.ReportMetric(ms(byHand.Wall), "bwrap-by-hand-ms")
			b.ReportMetric(ms(hb.Wall), "hunk-bwrap-ms")
			b.ReportMetric(ms(hb.Wall-byHand.Wall), "bwrap-overhead-ms")
			b.ReportMetric(ms(hb.CPU-byHand.CPU), "bwrap-overhead-cpu-ms")
		} else {
			b.Log("SKIPPED bwrap: not installed")
		}
	}
}

// goSpawnerSrc is the leanest Go program that runs a command and passes its
// exit status on: the floor under any Go implementation of hunk exec.
const goSpawnerSrc = `package main

import (
	"os"
	"syscall"
)

func main() {
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	os.Exit(ws.ExitStatus())
}
`

// goSpawner builds goSpawnerSrc as hunk is built (static, stripped).
func goSpawner(b *testing.B) string {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goSpawnerSrc), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module spawner\n\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "spawner")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the Go spawner: %v\n%s", err, out)
	}
	return bin
}

// cpuRun is a median wall time and a median CPU time.
type cpuRun struct{ Wall, CPU time.Duration }

// medianCPU runs argv n times (after a warm-up) in dir and returns the
// medians of wall time and of CPU time (user+system, children included).
func medianCPU(b *testing.B, n int, dir string, argv ...string) cpuRun {
	var walls, cpus []time.Duration
	for i := 0; i <= n; i++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall := time.Since(start)
		if err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
		if i == 0 {
			continue // warm-up
		}
		walls = append(walls, wall)
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	return cpuRun{Wall: med(walls), CPU: med(cpus)}
}

// BenchmarkExecDriver measures the drivers' own cost, without hunk's process
// start-up: sandbox.Run of `true` inside this process against running `true`
// (none, landlock) or bubblewrap with the same arguments (bwrap) from it.
// Medians of 51 runs, wall time.
func BenchmarkExecDriver(b *testing.B) {
	dir := b.TempDir()
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	spec := sandbox.Spec{Argv: []string{truePath}, Workspace: dir, Workdir: dir, Env: []string{"PATH=/usr/bin:/bin"}}
	const n = 51
	median := func(f func()) time.Duration {
		var d []time.Duration
		for i := 0; i <= n; i++ {
			start := time.Now()
			f()
			if i > 0 { // the first is a warm-up
				d = append(d, time.Since(start))
			}
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	run := func(argv ...string) func() {
		return func() {
			if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
				b.Fatalf("%v: %v", argv, err)
			}
		}
	}
	driver := func(name string) func() {
		return func() {
			r, err := sandbox.Lookup(name).Run(context.Background(), spec)
			if err != nil || r.ExitCode != 0 {
				b.Fatalf("%s: %v (exit %d: %s)", name, err, r.ExitCode, r.Stderr)
			}
		}
	}
	for i := 0; i < b.N; i++ {
		plain := median(run(truePath))
		b.ReportMetric(ms(plain), "true-ms")
		b.ReportMetric(ms(median(driver("none"))-plain), "none-driver-overhead-ms")

		if sandbox.Lookup("landlock").Probe(context.Background()).Available {
			b.ReportMetric(ms(median(driver("landlock"))-plain), "landlock-driver-overhead-ms")
		}
		if bw, err := exec.LookPath("bwrap"); err == nil {
			byHand := median(run(append([]string{bw}, sandbox.BwrapArgs(spec, 0, 0)...)...))
			b.ReportMetric(ms(byHand), "bwrap-by-hand-ms")
			b.ReportMetric(ms(median(driver("bwrap"))-byHand), "bwrap-driver-overhead-ms")
		}
	}
}

// BenchmarkExecGoTestWarm measures `go test -count=1 ./...` of a small
// package inside the sandbox (landlock, bwrap), with the workspace's build
// cache warm, against the same outside it with the user's warm cache: the
// target is within 1.5x. Interleaved, medians of 11 runs each.
func BenchmarkExecGoTestWarm(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("SKIPPED: needs the go command")
	}
	bin := hunkBin(b)
	dir := b.TempDir()
	for name, text := range map[string]string{
		"go.mod":        "module example.com/small\n\ngo 1.22\n",
		"small.go":      "package small\n\nimport \"strings\"\n\n// Shout upper-cases s.\nfunc Shout(s string) string { return strings.ToUpper(s) + \"!\" }\n",
		"small_test.go": "package small\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n\tif Shout(\"hi\") != \"HI!\" {\n\t\tt.Fatal()\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	variants := [][]string{{goBin, "test", "-count=1", "./..."}}
	names := []string{"outside"}
	for _, d := range []string{"landlock", "bwrap"} {
		if !sandbox.Lookup(d).Probe(context.Background()).Available {
			b.Logf("SKIPPED %s: not available here", d)
			continue
		}
		variants = append(variants, []string{bin, "-C", dir, "exec", "--driver", d, "--", "go", "test", "-count=1", "./..."})
		names = append(names, d)
	}
	const n = 11
	for i := 0; i < b.N; i++ {
		for _, v := range variants {
			wallOnce(b, dir, "", v...) // warm each cache
		}
		walls := make([][]time.Duration, len(variants))
		for r := 0; r < n; r++ {
			for j, v := range variants {
				walls[j] = append(walls[j], wallOnce(b, dir, "", v...).Wall)
			}
		}
		med := make([]time.Duration, len(variants))
		for j := range walls {
			sort.Slice(walls[j], func(x, y int) bool { return walls[j][x] < walls[j][y] })
			med[j] = walls[j][n/2]
			b.ReportMetric(ms(med[j]), names[j]+"-ms")
			if j > 0 {
				b.ReportMetric(float64(med[j])/float64(med[0]), names[j]+"-x")
			}
		}
	}
}

// BenchmarkExecChmod measures a chmod(2) inside `hunk exec --driver
// landlock`, where hunk does each metadata call itself (mediate.go),
// against the same loop run directly: python3 times 20,000 chmods of a
// workspace file; medians of 5 interleaved runs.
func BenchmarkExecChmod(b *testing.B) {
	bin := hunkBin(b)
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("SKIPPED: needs python3")
	}
	if !sandbox.Lookup("landlock").Probe(context.Background()).Available {
		b.Skip("SKIPPED: landlock is not available here")
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	const loop = "import os,time\ns=time.perf_counter()\nfor _ in range(20000): os.chmod('f', 0o644)\nprint((time.perf_counter()-s)/20000*1e9)"
	perCall := func(argv ...string) float64 {
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			b.Fatalf("%v: %v", argv, err)
		}
		var ns float64
		if _, err := fmt.Sscan(string(out), &ns); err != nil {
			b.Fatalf("%v: %q", argv, out)
		}
		return ns
	}
	for i := 0; i < b.N; i++ {
		var direct, mediated []float64
		for k := 0; k < 5; k++ {
			direct = append(direct, perCall(py, "-c", loop))
			mediated = append(mediated, perCall(bin, "-C", dir, "exec", "--driver", "landlock", "--", py, "-c", loop))
		}
		sort.Float64s(direct)
		sort.Float64s(mediated)
		b.ReportMetric(direct[2]/1000, "direct-us/chmod")
		b.ReportMetric(mediated[2]/1000, "landlock-us/chmod")
	}
}
