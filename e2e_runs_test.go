//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// TestForkBombSharedLimit: a fork bomb under a process limit hunk shares
// with it — what `ulimit -u` or a login session's cgroup gives a user;
// here a pids cgroup of 2,000 that hunk is started in. The bomb exhausts
// it; hunk, which must still make threads to supervise, goes on: the
// command times out (124) and nothing of it is left, under every driver.
func TestForkBombSharedLimit(t *testing.T) {
	cg := sharedPidsCgroup(t, 2000)
	bin := buildHunk(t)
	for _, driver := range []string{"bwrap", "landlock", "none", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws := t.TempDir()
			script := fmt.Sprintf("echo $$ > %s/cgroup.procs && exec %s -C %s exec --driver %s --timeout 5s --sh 'f(){ f | f & }; f; sleep 60'",
				cg, bin, ws, driver)
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "HUNK_EXEC_IMAGE="+sandboxtest.ImageName(),
				"XDG_CACHE_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 124 {
				t.Errorf("hunk under the bomb: %v, want exit 124\n%s", err, lastLines(string(out), 10))
			}
			// Nothing of the bomb is left in the shared cgroup.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				procs := cgroupProcs(cg)
				if len(procs) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%d processes of the bomb outlived hunk", len(procs))
					killAll(procs)
					break
				}
			}
		})
	}
}

// sharedPidsCgroup makes a pids cgroup of max processes for the test (v1's
// pids hierarchy, else v2's with the pids controller); it skips without
// root or such a hierarchy.
func sharedPidsCgroup(t *testing.T, max int) string {
	if os.Geteuid() != 0 {
		sandboxtest.Skip(t, "a shared process limit needs root to make a pids cgroup")
	}
	name := fmt.Sprintf("hunk-bomb-test-%d", os.Getpid())
	var dir string
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		dir = filepath.Join("/sys/fs/cgroup/pids", name)
	} else if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(b), "pids") {
		os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+pids"), 0)
		dir = filepath.Join("/sys/fs/cgroup", name)
	} else {
		sandboxtest.Skip(t, "no pids cgroup hierarchy here")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(fmt.Sprint(max)), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killAll(cgroupProcs(dir))
		for i := 0; i < 100 && os.Remove(dir) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return dir
}

func cgroupProcs(dir string) []string {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	return strings.Fields(string(b))
}

func killAll(pids []string) {
	for _, p := range pids {
		exec.Command("kill", "-9", p).Run()
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// TestExecConcurrentCalls: one hunk mcp process running many exec calls at
// once (a harness sends them in parallel) gives each its own result: every
// command runs to its end under the driver asked for, none is killed by
// another's clean-up (exit 137) or falls back to another driver, and what
// each started in the background is its own to stop.
func TestExecConcurrentCalls(t *testing.T) {
	bin := buildHunk(t)
	for _, c := range []struct {
		driver string
		n      int
	}{{"bwrap", 40}, {"landlock", 40}, {"none", 40}, {"docker", 10}} {
		t.Run(c.driver, func(t *testing.T) {
			needDriver(t, c.driver)
			dir := t.TempDir()
			var in strings.Builder
			in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n")
			in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			for i := 1; i <= c.n; i++ {
				// A background process that outlives the command a moment,
				// then the command's own output after a pause.
				cmd := fmt.Sprintf("(sleep 0.2; echo late-%d > bg-%d.txt) & sleep 0.3; echo run-%d", i, i, i)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
					"params": map[string]any{"name": "exec", "arguments": map[string]any{"command": cmd}}})
				in.Write(append(b, '\n'))
			}
			cmd := exec.Command(bin, "mcp", "-C", dir, "--driver", c.driver, "--no-history")
			cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "HUNK_EXEC_IMAGE="+sandboxtest.ImageName(),
				"XDG_CACHE_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("hunk mcp: %v", err)
			}
			got := map[int]bool{}
			notes := 0 // a slow machine's first runs over new caches: said once
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m struct {
					ID     int `json:"id"`
					Result struct {
						IsError bool           `json:"isError"`
						SC      map[string]any `json:"structuredContent"`
					} `json:"result"`
				}
				if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == 0 {
					continue
				}
				r := m.Result
				if text, _ := r.SC["content"].(string); strings.Contains(text, "\nnote: this workspace's build caches were new") {
					notes++
					r.SC["content"] = regexp.MustCompile(`\nnote: [^\n]*`).ReplaceAllString(text, "")
				}
				if r.IsError || r.SC["exitCode"] != float64(0) || r.SC["driver"] != c.driver || r.SC["content"] != fmt.Sprintf("Exit code: 0\nrun-%d\nExit code: 0", m.ID) {
					t.Errorf("call %d: isError %v, exit %v, driver %v, text %q", m.ID, r.IsError, r.SC["exitCode"], r.SC["driver"], r.SC["content"])
					continue
				}
				got[m.ID] = true
			}
			if len(got) != c.n {
				t.Errorf("%d of %d calls ran correctly", len(got), c.n)
			}
			if notes > 1 {
				t.Errorf("the new caches' note was given %d times, want at most once", notes)
			}
		})
	}
}
