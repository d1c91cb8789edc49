package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// minimalBin builds a minimal static Go program (it prints a line and
// exits), built as hunk is: the floor any Go binary pays to start.
func minimalBin(b *testing.B) string {
	dir := b.TempDir()
	src := "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"v1\\n\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module minimal\n\ngo 1.26\n"), 0o644)
	return goBuild(b, dir, ".", "minimal", "GOFLAGS=")
}

// goBuild builds package pkg in dir as hunk is built (static, stripped)
// into the benchmark's temporary directory, and returns the binary.
func goBuild(b *testing.B, dir, pkg, name string, env ...string) string {
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// BenchmarkStartupVsMinimal measures `hunk --version` against a minimal
// static Go binary, interleaved (A B A B, 201 pairs), and reports both
// medians and their ratio: what hunk's size and package initialisation add
// to every process (issue 24 asks for at most 1.5x).
func BenchmarkStartupVsMinimal(b *testing.B) {
	bin, min := hunkBin(b), minimalBin(b)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		var hs, ms []Run
		wallOnce(b, dir, "", min)
		wallOnce(b, dir, "", bin, "--version")
		for k := 0; k < 201; k++ {
			ms = append(ms, wallOnce(b, dir, "", min))
			hs = append(hs, wallOnce(b, dir, "", bin, "--version"))
		}
		m, h := medianOf(ms).Wall, medianOf(hs).Wall
		b.ReportMetric(float64(m)/1e6, "minimal-ms")
		b.ReportMetric(float64(h)/1e6, "hunk-version-ms")
		b.ReportMetric(float64(h)/float64(m), "x-minimal")
	}
}

// cobraViperBin builds bench/testdata/cobraviper — the least a cobra and
// viper program does — as hunk is built: the yardstick issue 38 sets for
// hunk's start-up (at most 1.2x).
func cobraViperBin(b *testing.B) string {
	_, file, _, _ := runtime.Caller(0)
	return goBuild(b, filepath.Dir(filepath.Dir(file)), "./bench/testdata/cobraviper", "cobraviper")
}

// BenchmarkStartupVsCobraViper measures `hunk --version` against the
// minimal cobra+viper program's, interleaved (A B A B, 201 pairs): both
// medians and their ratio.
func BenchmarkStartupVsCobraViper(b *testing.B) {
	bin, cv := hunkBin(b), cobraViperBin(b)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		var hs, cs []Run
		wallOnce(b, dir, "", cv, "--version")
		wallOnce(b, dir, "", bin, "--version")
		for k := 0; k < 201; k++ {
			cs = append(cs, wallOnce(b, dir, "", cv, "--version"))
			hs = append(hs, wallOnce(b, dir, "", bin, "--version"))
		}
		c, h := medianOf(cs).Wall, medianOf(hs).Wall
		b.ReportMetric(float64(c)/1e6, "cobraviper-ms")
		b.ReportMetric(float64(h)/1e6, "hunk-version-ms")
		b.ReportMetric(float64(h)/float64(c), "x-cobraviper")
	}
}
