package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestConcurrentWriters: many hunk processes replace one file at once. The
// file always ends up exactly one writer's content (never torn), no temporary
// file is left, and among writers guarded by --if-match with the same hash
// exactly one wins (compare-and-swap under the lock: no lost update).
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared.txt")
	initial := []byte("initial\n")
	if err := os.WriteFile(target, initial, 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 24
	contents := map[string]bool{}
	for i := 0; i < n; i++ {
		contents[strings.Repeat(fmt.Sprintf("writer %02d\n", i), 2000+i)] = true
	}

	run := func(skip string, extra ...string) (ok, stale int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for c := range contents {
			if c == skip {
				continue
			}
			wg.Add(1)
			go func(c string) {
				defer wg.Done()
				cmd := exec.Command("hunk", append([]string{"-C", dir, "write", "shared.txt", "--content", c}, extra...)...)
				out, err := cmd.CombinedOutput()
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case strings.Contains(string(out), "changed since it was read"):
					stale++
				default:
					t.Errorf("writer failed: %v\n%s", err, out)
				}
			}(c)
		}
		wg.Wait()
		return ok, stale
	}

	if ok, _ := run(""); ok != n {
		t.Fatalf("%d of %d unguarded writers succeeded", ok, n)
	}
	got, _ := os.ReadFile(target)
	if !contents[string(got)] {
		t.Fatalf("file holds a torn or foreign content (%d bytes)", len(got))
	}

	// Every guarded writer changes the file: the one whose content is
	// already there would be a no-op, which succeeds without changing
	// anything and so lets a second writer's hash still match.
	h := sha256.Sum256(got)
	ok, stale := run(string(got), "--if-match", hex.EncodeToString(h[:]))
	if ok != 1 || stale != n-2 {
		t.Fatalf("guarded writers: %d succeeded, %d stale; want exactly 1 and %d", ok, stale, n-2)
	}
	got, _ = os.ReadFile(target)
	if !contents[string(got)] {
		t.Fatalf("file holds a torn or foreign content after guarded writes")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if workspace.IsTemp(e.Name()) {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
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
				if r.IsError || r.SC["exitCode"] != float64(0) || r.SC["driver"] != c.driver || r.SC["stdout"] != fmt.Sprintf("run-%d\n", m.ID) {
					t.Errorf("call %d: isError %v, exit %v, driver %v, stdout %q, stderr %q", m.ID, r.IsError, r.SC["exitCode"], r.SC["driver"], r.SC["stdout"], r.SC["stderr"])
					continue
				}
				got[m.ID] = true
			}
			if len(got) != c.n {
				t.Errorf("%d of %d calls ran correctly", len(got), c.n)
			}
		})
	}
}
