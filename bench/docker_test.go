package bench

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/docker"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// dockerImage is the image the docker benchmarks run (made offline with
// --make-image when missing).
func dockerImage(b *testing.B) string {
	d := &docker.Docker{}
	if c := d.Probe(context.Background()); !c.Available {
		sandboxtest.Skip(b, "no Docker engine: %s", c.Reason)
	}
	return sandboxtest.TestImage(b, d)
}

// BenchmarkDockerCold compares a cold `hunk exec --driver docker -- true`
// (a fresh container, removed after) with `docker run --rm IMAGE true` on
// the same image (the bar: within 1.2x), and with
// `docker run --rm --network none IMAGE true` (no network, like hunk's).
func BenchmarkDockerCold(b *testing.B) {
	img := dockerImage(b)
	bin := hunkBin(b)
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("SKIPPED: no docker CLI to compare with")
	}
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		// Interleave the two so that the machine's load hits both alike.
		var dr, dn, hk []time.Duration
		for j := 0; j < 15; j++ {
			dr = append(dr, runOnce(b, dir, "", "docker", "run", "--rm", img, "true").Wall)
			dn = append(dn, runOnce(b, dir, "", "docker", "run", "--rm", "--network", "none", img, "true").Wall)
			hk = append(hk, runOnce(b, dir, "", bin, "exec", "--driver", "docker", "--image", img, "--", "true").Wall)
		}
		d, h := med(dr), med(hk)
		b.ReportMetric(ms(d), "docker-run-ms")
		b.ReportMetric(ms(h), "hunk-cold-ms")
		b.ReportMetric(float64(h)/float64(d), "x-docker-run")
		// The same without a network, as hunk's containers are.
		b.ReportMetric(ms(med(dn)), "docker-run-none-ms")
	}
}

// BenchmarkDockerWarm measures `hunk exec --driver docker --keep-warm --
// true` once the warm container runs (the bar: under 80 ms median), next to
// `docker exec CONTAINER true` on the same container.
func BenchmarkDockerWarm(b *testing.B) {
	img := dockerImage(b)
	bin := hunkBin(b)
	dir := b.TempDir()
	argv := []string{bin, "exec", "--driver", "docker", "--image", img, "--keep-warm", "--", "true"}
	runOnce(b, dir, "", argv...) // creates the warm container
	b.Cleanup(func() { _ = exec.Command(bin, "exec", "--gc").Run() })
	for i := 0; i < b.N; i++ {
		h := Median(b, 31, dir, "", argv...)
		b.ReportMetric(ms(h.Wall), "hunk-warm-ms")
		if _, err := exec.LookPath("docker"); err == nil {
			id, err := exec.Command("docker", "ps", "-q", "--filter", "label=dev.hunk.workspace="+dir, "--filter", "label=dev.hunk.mode=warm").Output()
			if err == nil && len(id) > 1 {
				d := Median(b, 31, dir, "", "docker", "exec", string(id[:len(id)-1]), "true")
				b.ReportMetric(ms(d.Wall), "docker-exec-ms")
			}
		}
	}
}
