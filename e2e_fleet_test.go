//go:build linux

// A fleet on one machine: N pod-like containers each running hunk serve
// (the deploy template's arguments), agent-sandbox's router in front, and
// M scripted agent sessions driving them at once — through the router and
// directly. BenchmarkFleet reports calls per second, the p50 and p99 of a
// call's latency, and each sandbox's memory.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hunk-dev/hunk/internal/sandbox/docker"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// sandboxBox is one pod-like container of the fleet.
type sandboxBox struct {
	name, url, ws string
}

// startFleet starts n pod-like containers running hunk serve with the
// template's arguments (token "fleet-token-0123456789"), each on a loopback port of
// the host's network, and waits until each is ready.
func startFleet(b *testing.B, n int) []sandboxBox {
	b.Helper()
	ok, err := driverCondition("driver:docker")
	if err != nil || !ok {
		sandboxtest.Skip(b, "the fleet needs the Docker engine: %v", err)
	}
	sandboxtest.DockerLock()
	img := sandboxtest.TestImage(b, &docker.Docker{})
	secrets := b.TempDir()
	os.WriteFile(filepath.Join(secrets, "token"), []byte("fleet-token-0123456789\n"), 0o444)
	var boxes []sandboxBox
	for i := 0; i < n; i++ {
		ws := b.TempDir()
		os.Chown(ws, 65534, 65534)
		box := sandboxBox{name: fmt.Sprintf("hunk-fleet-%d-%d", os.Getpid(), i), ws: ws}
		box.url = startPod(b, img, box.name, ws, secrets)
		boxes = append(boxes, box)
	}
	return boxes
}

// rss is the resident memory of a container's hunk serve, in MiB.
func (box sandboxBox) rss(b *testing.B) float64 {
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Pid}}", box.name).Output()
	if err != nil {
		b.Fatalf("docker inspect %s: %v", box.name, err)
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(out)) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// fleetAgent is one scripted agent session: its MCP session with one
// sandbox and the directory of the workspace it works in.
type fleetAgent struct {
	cs  *mcp.ClientSession
	dir string
}

// pass runs the agent's script once — write, read, edit, a patch, a
// command, undo — and returns each call's latency.
func (a fleetAgent) pass(b *testing.B) []time.Duration {
	f := a.dir + "/notes.txt"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"path": f, "content": "alpha\nbeta\n"}},
		{"read", map[string]any{"path": f}},
		{"edit", map[string]any{"path": f, "oldText": "beta", "newText": "BETA"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: " + f + "\n@@\n alpha\n-BETA\n+gamma\n*** End Patch\n"}},
		{"exec", map[string]any{"command": "cat " + f}},
		{"undo", map[string]any{}},
	}
	var lat []time.Duration
	for _, c := range calls {
		start := time.Now()
		res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Errorf("%s: %v %v", c.tool, err, res)
		}
	}
	return lat
}

// BenchmarkFleet: for N sandboxes and M concurrent agents (agent i works
// in sandbox i mod N), each op is one pass of every agent's script;
// through agent-sandbox's router and directly. Run:
//
//	go test -run '^$' -bench BenchmarkFleet -benchtime 20x
func BenchmarkFleet(b *testing.B) {
	router := startRouter(b)
	for _, n := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			boxes := startFleet(b, n)
			idle := 0.0
			for _, box := range boxes {
				idle += box.rss(b)
			}
			for _, m := range []int{1, 4, 16} {
				for _, route := range []string{"direct", "router"} {
					b.Run(fmt.Sprintf("M=%d/%s", m, route), func(b *testing.B) {
						agents := make([]fleetAgent, m)
						for i := range agents {
							box := boxes[i%n]
							headers := map[string]string{"Authorization": "Bearer fleet-token-0123456789"}
							endpoint := box.url + "/mcp"
							if route == "router" {
								endpoint = router + "/mcp"
								headers = map[string]string{"X-Hunk-Token": "fleet-token-0123456789", "X-Sandbox-ID": "sandbox-" + strconv.Itoa(i%n),
									"X-Sandbox-Pod-IP": "127.0.0.1", "X-Sandbox-Port": box.url[strings.LastIndex(box.url, ":")+1:]}
							}
							dir := fmt.Sprintf("agent-%d-%d", i, time.Now().UnixNano())
							os.Mkdir(filepath.Join(box.ws, dir), 0o777)
							os.Chown(filepath.Join(box.ws, dir), 65534, 65534)
							agents[i] = fleetAgent{cs: connectHTTP(b, endpoint, "2025-11-25", headers), dir: dir}
						}
						defer func() {
							for _, a := range agents {
								a.cs.Close()
							}
						}()
						var mu sync.Mutex
						var all []time.Duration
						b.ResetTimer()
						start := time.Now()
						for it := 0; it < b.N; it++ {
							var wg sync.WaitGroup
							for _, a := range agents {
								wg.Add(1)
								go func() {
									defer wg.Done()
									lat := a.pass(b)
									mu.Lock()
									all = append(all, lat...)
									mu.Unlock()
								}()
							}
							wg.Wait()
						}
						elapsed := time.Since(start)
						b.StopTimer()
						sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
						busy := 0.0
						for _, box := range boxes {
							busy += box.rss(b)
						}
						b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
						b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
						b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
						b.ReportMetric(idle/float64(n), "idle-MiB/sandbox")
						b.ReportMetric(busy/float64(n), "MiB/sandbox")
						b.ReportMetric(0, "ns/op")
					})
				}
			}
		})
	}
}
