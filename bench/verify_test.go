package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkVerifyOverhead measures what --verify true adds to a change:
// `hunk write f --content X` alone, the same with --verify true, and one
// sandbox start (`hunk exec -- true`) beside them, per driver, as whole
// processes, interleaved (A B C A B C …), medians of 61 runs each, in a
// workspace of 200 files (the check is recorded: a stat of each, before
// and after). Issue 54 asks for an overhead under one sandbox start
// (x-sandbox-start < 1: (verify - alone) / (exec true)).
func BenchmarkVerifyOverhead(b *testing.B) {
	bin := hunkBin(b)
	for _, driver := range []string{"landlock", "bwrap"} {
		b.Run(driver, func(b *testing.B) {
			dir := b.TempDir()
			historyEnv(b, filepath.Join(dir, "state"))
			ws := filepath.Join(dir, "ws")
			os.MkdirAll(filepath.Join(ws, "src"), 0o755)
			for i := 0; i < 200; i++ {
				os.WriteFile(filepath.Join(ws, "src", fmt.Sprintf("f%03d.go", i)), fmt.Appendf(nil, "package src\n\nvar X%d = %d\n", i, i), 0o644)
			}
			b.Setenv("HUNK_EXEC_DRIVER", driver)
			if err := exec.Command(bin, "-C", ws, "exec", "--", "true").Run(); err != nil {
				b.Skipf("the %s driver does not run here: %v", driver, err)
			}
			const n = 61
			for b.Loop() {
				var alone, verified, start []time.Duration
				for k := 0; k < n; k++ {
					alone = append(alone, wallOnce(b, ws, "", bin, "write", "f.txt", "--content", fmt.Sprint("a", k)).Wall)
					verified = append(verified, wallOnce(b, ws, "", bin, "write", "f.txt", "--content", fmt.Sprint("v", k), "--verify", "true").Wall)
					start = append(start, wallOnce(b, ws, "", bin, "exec", "--", "true").Wall)
				}
				for _, s := range [][]time.Duration{alone, verified, start} {
					slices.Sort(s)
				}
				a, v, s := alone[n/2], verified[n/2], start[n/2]
				b.ReportMetric(ms(a), "alone-ms")
				b.ReportMetric(ms(v), "verify-true-ms")
				b.ReportMetric(ms(s), "exec-true-ms")
				b.ReportMetric(float64(v-a)/float64(s), "x-sandbox-start")
			}
		})
	}
}

// BenchmarkChecksTenFiles measures the configured checks after a change
// of 10 Go files (checks: "**/*.go": [gofmt, -l, "{file}"], one gofmt run
// for the 10): the patch applied with the checks and with --no-checks,
// forward and back (-R) in turn, interleaved, medians of 41 runs each, per
// driver.
func BenchmarkChecksTenFiles(b *testing.B) {
	bin := hunkBin(b)
	if _, err := exec.LookPath("gofmt"); err != nil {
		b.Skip("gofmt is not installed")
	}
	for _, driver := range []string{"landlock", "bwrap"} {
		b.Run(driver, func(b *testing.B) {
			dir := b.TempDir()
			historyEnv(b, filepath.Join(dir, "state"))
			b.Setenv("HUNK_EXEC_DRIVER", driver)
			ws := filepath.Join(dir, "ws")
			os.MkdirAll(ws, 0o755)
			var patch strings.Builder
			patch.WriteString("*** Begin Patch\n")
			for i := 0; i < 10; i++ {
				os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.go", i)), fmt.Appendf(nil, "package a\n\nvar X%d = %d\n", i, i), 0o644)
				fmt.Fprintf(&patch, "*** Update File: f%d.go\n@@\n-var X%d = %d\n+var X%d = %d\n", i, i, i, i, i+100)
			}
			patch.WriteString("*** End Patch\n")
			pf := filepath.Join(dir, "ten.patch")
			os.WriteFile(pf, []byte(patch.String()), 0o644)
			cfg := filepath.Join(dir, "hunk.yaml")
			os.WriteFile(cfg, []byte("checks:\n  \"**/*.go\": [gofmt, -l, \"{file}\"]\n"), 0o644)
			if err := exec.Command(bin, "-C", ws, "exec", "--", "true").Run(); err != nil {
				b.Skipf("the %s driver does not run here: %v", driver, err)
			}
			const n = 41
			for b.Loop() {
				var with, without []time.Duration
				for k := 0; k < n; k++ {
					with = append(with, wallOnce(b, ws, "", bin, "--config", cfg, "apply-patch", pf).Wall)
					without = append(without, wallOnce(b, ws, "", bin, "--config", cfg, "apply-patch", "-R", "--no-checks", pf).Wall)
				}
				slices.Sort(with)
				slices.Sort(without)
				b.ReportMetric(ms(without[n/2]), "no-checks-ms")
				b.ReportMetric(ms(with[n/2]), "checks-ms")
				b.ReportMetric(ms(with[n/2]-without[n/2]), "checks-overhead-ms")
			}
		})
	}
}
