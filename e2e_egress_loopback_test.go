//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestExecEgressLoopback: --allow-host 127.0.0.1:PORT (and localhost:PORT)
// reaches this machine's 127.0.0.1 at that port — a registry or database
// the person runs on the host — though the command's own 127.0.0.1 is its
// sandbox's (NO_PROXY sends its clients there): hunk keeps the port there
// and carries each connection through the proxy. Another port of the
// host's loopback stays out of reach. Under bwrap (hunk places the
// listener in the sandbox's namespace) and docker (the door keeps it).
func TestExecEgressLoopback(t *testing.T) {
	bin := buildHunk(t)
	in := startInternet(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello from the host's loopback")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, driver := range []string{"bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws, _ := egressDirs(t)
			get := "curl -sS --max-time 20 "
			var extra []string
			if driver == "docker" {
				// The host's curl in the test image: its /usr shown read-only.
				extra = []string{"--ro", "/usr", "--ro", "/lib", "--ro", "/lib64", "--ro", "/etc/ssl", "--env", "PATH=/usr/bin:/bin"}
			}
			before := hits.Load()
			for _, rule := range []string{"127.0.0.1:" + port, "localhost:" + port} {
				host, _, _ := strings.Cut(rule, ":")
				args := append([]string{"--allow-host", rule}, extra...)
				r := in.exec(t, bin, ws, driver, append(args, "--sh", get+"http://"+host+":"+port+"/; echo; "+get+"http://127.0.0.1:"+in.trap+"/ || echo trap-refused")...)
				if !strings.Contains(r.stdout, "hello from the host's loopback") || !strings.Contains(r.stdout, "trap-refused") {
					t.Errorf("--allow-host %s: exit %d, stdout %q\n%s", rule, r.code, r.stdout, r.text)
				}
				if len(r.network.Reached) == 0 || r.network.Reached[0].Host != "127.0.0.1:"+port {
					t.Errorf("--allow-host %s: reached %+v", rule, r.network.Reached)
				}
			}
			if hits.Load()-before != 2 {
				t.Errorf("the host's server got %d requests, want 2", hits.Load()-before)
			}
			if in.trapHits.Load() != 0 {
				t.Errorf("another port of the host's loopback was reached (%d)", in.trapHits.Load())
			}
		})
	}
}
