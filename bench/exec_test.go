package bench

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// BenchmarkExec measures what `hunk exec -- true` costs over running `true`
// directly, per driver: bwrap against bubblewrap run by hand with the same
// isolation arguments (the target is within 3 ms), landlock against plain
// `true` (the target is under 5 ms). Medians of 51 runs each.
func BenchmarkExec(b *testing.B) {
	bin := hunkBin(b)
	dir := b.TempDir()
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	const n = 51
	for i := 0; i < b.N; i++ {
		plain := Median(b, n, dir, "", truePath)
		b.ReportMetric(ms(plain.Wall), "true-ms")

		if sandbox.Lookup("landlock").Probe(context.Background()).Available {
			ll := Median(b, n, dir, "", bin, "-C", dir, "exec", "--driver", "landlock", "--", "true")
			b.ReportMetric(ms(ll.Wall), "hunk-landlock-ms")
			b.ReportMetric(ms(ll.Wall-plain.Wall), "landlock-overhead-ms")
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
			spec := sandbox.Spec{Argv: []string{"true"}, Workspace: dir, Workdir: dir, Env: env}
			byHand := Median(b, n, dir, "", append([]string{bw}, sandbox.BwrapArgs(spec, 0)...)...)
			hb := Median(b, n, dir, "", bin, "-C", dir, "exec", "--driver", "bwrap", "--", "true")
			b.ReportMetric(ms(byHand.Wall), "bwrap-by-hand-ms")
			b.ReportMetric(ms(hb.Wall), "hunk-bwrap-ms")
			b.ReportMetric(ms(hb.Wall-byHand.Wall), "bwrap-overhead-ms")
			b.ReportMetric(ms(hb.Wall-plain.Wall), "bwrap-over-true-ms")
		} else {
			b.Log("SKIPPED bwrap: not installed")
		}
	}
}
