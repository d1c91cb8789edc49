//go:build linux

package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkEgress measures what the allowlist costs, under bwrap, each
// pair of runs interleaved (A B A B) and the medians reported:
//
//   - download: curl fetching 200 MB from a server on loopback, through
//     hunk's proxy (--allow-host; HTTP, and HTTPS through CONNECT)
//     against the host's network directly (--network); curl's own
//     transfer speed, so start-up does not count;
//   - start: `hunk exec -- true` with an allowlist against without one
//     (wall time of the whole run).
//
// go test -run '^$' -bench Egress -benchtime 10x .
func BenchmarkEgress(b *testing.B) {
	needDriverB(b, "bwrap")
	bin := buildHunk(b)
	const size = 200 << 20
	chunk := make([]byte, 1<<20)
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for i := 0; i < size/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	serve := func(tls bool) string {
		ln, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			b.Fatal(err)
		}
		s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: big}}
		if tls {
			s.StartTLS()
		} else {
			s.Start()
		}
		b.Cleanup(s.Close)
		return ln.Addr().String()
	}
	plain, secure := serve(false), serve(true)
	ws := b.TempDir()
	run := func(args ...string) (float64, time.Duration) {
		c := exec.Command(bin, append([]string{"exec", "--driver", "bwrap", "--timeout", "120"}, args...)...)
		c.Dir, c.Env = ws, append(os.Environ(), "HUNK_CONFIG=/dev/null")
		start := time.Now()
		out, err := c.Output()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("hunk exec %v: %v\n%s", args, err, out)
		}
		speed, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		return speed / 1e6, d
	}
	curl := func(url string) []string {
		return []string{"--", "curl", "-sSk", "-o", "/dev/null", "-w", "%{speed_download}", url}
	}
	var direct, proxied, directTLS, proxiedTLS []float64
	var bare, withList []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ := run(append([]string{"--network"}, curl("http://"+plain+"/big")...)...)
		direct = append(direct, s)
		s, _ = run(append([]string{"--allow-host", plain}, curl("http://"+plain+"/big")...)...)
		proxied = append(proxied, s)
		s, _ = run(append([]string{"--network"}, curl("https://"+secure+"/big")...)...)
		directTLS = append(directTLS, s)
		s, _ = run(append([]string{"--allow-host", secure}, curl("https://"+secure+"/big")...)...)
		proxiedTLS = append(proxiedTLS, s)
		for j := 0; j < 5; j++ {
			_, d := run("--", "true")
			bare = append(bare, float64(d.Microseconds())/1000)
			_, d = run("--allow-host", "example.org", "--", "true")
			withList = append(withList, float64(d.Microseconds())/1000)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(direct), "direct-MB/s")
	b.ReportMetric(median(proxied), "proxy-MB/s")
	b.ReportMetric(median(proxied)/median(direct), "http-ratio")
	b.ReportMetric(median(directTLS), "direct-tls-MB/s")
	b.ReportMetric(median(proxiedTLS), "proxy-tls-MB/s")
	b.ReportMetric(median(proxiedTLS)/median(directTLS), "https-ratio")
	b.ReportMetric(median(bare), "start-ms")
	b.ReportMetric(median(withList)-median(bare), "added-start-ms")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// needDriverB skips a benchmark when the driver does not work here.
func needDriverB(b *testing.B, driver string) {
	b.Helper()
	if ok, err := driverCondition("driver:" + driver); err != nil || !ok {
		b.Skipf("driver %s does not work here (%v)", driver, err)
	}
}
