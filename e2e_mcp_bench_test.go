//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchSession starts hunk mcp over a workspace holding a small file and
// returns the client session and the server's process.
func benchSession(b *testing.B, flags ...string) (*mcp.ClientSession, *os.Process, string) {
	b.Helper()
	dir := b.TempDir()
	src := strings.Repeat("line of a small source file\n", 40) + "value := 1\n"
	os.WriteFile(filepath.Join(dir, "small.go"), []byte(src), 0o644)
	bin := buildHunk(b)
	cmd := exec.Command(bin, append([]string{"mcp", "-C", dir}, flags...)...)
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, benchOpts())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs, cmd.Process, dir
}

func mustCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
}

// BenchmarkMCPRoundTrip: one small-file read and one small edit through an
// open MCP session (the Go SDK client over stdio), per operation; and the
// same read by spawning hunk per call, as a harness without MCP does.
func BenchmarkMCPRoundTrip(b *testing.B) {
	// Each reports the median call too (median-ms): the figure issue 24
	// names, steadier than the mean on a shared machine.
	b.Run("read", func(b *testing.B) {
		cs, _, _ := benchSession(b)
		timedCalls(b, func(i int) { mustCall(b, cs, "read", map[string]any{"path": "small.go"}) })
	})
	b.Run("edit", func(b *testing.B) {
		cs, _, _ := benchSession(b)
		olds := [2]string{"value := 1", "value := 2"}
		timedCalls(b, func(i int) {
			mustCall(b, cs, "edit", map[string]any{"path": "small.go", "oldText": olds[i%2], "newText": olds[(i+1)%2]})
		})
	})
	b.Run("spawn-per-call-read", func(b *testing.B) {
		_, _, dir := benchSession(b)
		bin := buildHunk(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c := exec.Command(bin, "--json", "-C", dir, "read", "small.go")
			c.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMCPRules: what the person's rules cost a call — a small-file
// read (the tool guard, a write.ask rule's lookup) and a small exec under
// driver none (the command rules decide the line) through an open MCP
// session, with no rules and with 50 command rules and 10 write.ask rules
// (exec: the 50 command rules). Interleave runs of each (A B A B) and
// compare the medians.
func BenchmarkMCPRules(b *testing.B) {
	var rules []string
	for i := 0; i < 50; i++ {
		rules = append(rules, "--deny-cmd", "tool"+strconv.Itoa(i)+" sub")
	}
	for i := 0; i < 10; i++ {
		rules = append(rules, "--ask-write", "/deploy"+strconv.Itoa(i)+"/")
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{{"none", nil}, {"60-rules", rules}} {
		b.Run("read-"+c.name, func(b *testing.B) {
			cs, _, _ := benchSession(b, c.flags...)
			timedCalls(b, func(i int) { mustCall(b, cs, "read", map[string]any{"path": "small.go"}) })
		})
		b.Run("exec-"+c.name, func(b *testing.B) {
			// Driver none holds no path rule: the command rules alone.
			flags := slices.DeleteFunc(slices.Clone(c.flags), func(f string) bool { return strings.HasPrefix(f, "--ask-write") || strings.HasPrefix(f, "/deploy") })
			cs, _, _ := benchSession(b, append([]string{"--driver", "none"}, flags...)...)
			timedCalls(b, func(i int) { mustCall(b, cs, "exec", map[string]any{"command": "cat small.go > /dev/null && echo ok"}) })
		})
	}
}

// timedCalls runs call b.N times and reports the median call too
// (median-ms), steadier than the mean on a shared machine.
func timedCalls(b *testing.B, call func(i int)) {
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		call(i)
		times = append(times, time.Since(t))
	}
	b.ReportMetric(medianMs(times), "median-ms")
}

func medianMs(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2]) / 1e6
}

// BenchmarkMCPSessionRSS: the server's resident memory after 100 and after
// 1,100 calls (reads and edits) of one session; reports both and the growth.
func BenchmarkMCPSessionRSS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cs, proc, _ := benchSession(b)
		olds := [2]string{"value := 1", "value := 2"}
		calls := func(n int) {
			for k := 0; k < n; k++ {
				mustCall(b, cs, "read", map[string]any{"path": "small.go"})
				mustCall(b, cs, "edit", map[string]any{"path": "small.go", "oldText": olds[k%2], "newText": olds[(k+1)%2]})
			}
		}
		calls(50)
		before := rssKB(proc.Pid)
		calls(500)
		after := rssKB(proc.Pid)
		b.ReportMetric(float64(before), "rss-at-100-KB")
		b.ReportMetric(float64(after), "rss-at-1100-KB")
		b.ReportMetric(float64(after-before), "growth-KB")
	}
}

func rssKB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}

// benchOpts pins the benchmark's protocol era (HUNK_BENCH_PROTOCOL, e.g.
// 2025-11-25; default: the client's newest).
func benchOpts() *mcp.ClientSessionOptions {
	if v := os.Getenv("HUNK_BENCH_PROTOCOL"); v != "" {
		return &mcp.ClientSessionOptions{ProtocolVersion: v}
	}
	return nil
}
