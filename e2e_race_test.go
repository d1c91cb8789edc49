//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// raceCase is one symlink-flip attack on hunk's own file operations: a
// command swaps two symbolic links — one leading where the policy allows,
// one where it denies — as fast as it can (testdata/hostile's swap), while
// hunk reads or writes through the allowed one's name, from the command
// line and through hunk mcp. A path decided on its name and then opened
// again follows the link as it is by then; the door decides on what it
// opened, so no read may print the secret and no write may land where the
// policy denies.
type raceCase struct {
	name    string
	drivers []string
	rules   []string
	files   map[string]string // path -> content ("/" at the end: a directory)
	links   [2][2]string      // the two links: name, target
	dir     string            // where the links are (the swapper's working directory)
	read    string            // the path read ("": none)
	write   string            // the directory written into ("": none)
	denied  string            // a directory that must stay empty ("": none)
}

var raceCases = []raceCase{
	{
		name: "read", drivers: []string{"bwrap", "docker"},
		rules: []string{"--deny-read", ".env"},
		files: map[string]string{".env": "SECRET-RACE\n", "ok.txt": "benign\n"},
		links: [2][2]string{{"la", "ok.txt"}, {"lb", ".env"}}, dir: ".", read: "la",
	},
	{
		name: "deny-write", drivers: []string{"bwrap", "docker"},
		rules: []string{"--deny-write", "/prot/"},
		files: map[string]string{"ok/": "", "prot/": ""},
		links: [2][2]string{{"wa", "ok"}, {"wb", "prot"}}, dir: ".", write: "wa", denied: "prot",
	},
	{
		name: "allow-write", drivers: []string{"landlock", "bwrap", "docker"},
		rules: []string{"--allow-write", "/src/"},
		files: map[string]string{"src/ok/": "", "out/": ""},
		links: [2][2]string{{"wa", "ok"}, {"wb", "../out"}}, dir: "src", write: "src/wa", denied: "out",
	},
}

// TestDoorRace runs every raceCase under each driver that can hold its
// policy: thousands of reads or writes, none may leak or land.
func TestDoorRace(t *testing.T) {
	bin, hostile := buildHunk(t), buildHostile(t)
	for _, c := range raceCases {
		for _, driver := range c.drivers {
			t.Run(c.name+"/"+driver, func(t *testing.T) {
				needDriver(t, driver)
				raceRun(t, bin, hostile, driver, c)
			})
		}
	}
}

func raceRun(t *testing.T, bin, hostile, driver string, c raceCase) {
	ws := t.TempDir()
	for p, content := range c.files {
		full := filepath.Join(ws, p)
		if strings.HasSuffix(p, "/") {
			must(t, os.MkdirAll(full, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(content), 0o644))
	}
	dir := filepath.Join(ws, c.dir)
	for _, l := range c.links {
		must(t, os.Symlink(l[1], filepath.Join(dir, l[0])))
	}
	must(t, copyFile(hostile, filepath.Join(ws, ".swapper"), 0o755))

	// The swapper, under the driver, with the policy.
	args := append(append([]string{"-C", ws}, c.rules...), "exec", "--driver", driver, "--timeout", "10m", "--workdir", c.dir)
	if driver == "docker" {
		args = append(args, "--image", sandboxtest.ImageName())
	}
	rel, _ := filepath.Rel(dir, filepath.Join(ws, ".swapper"))
	swapper := exec.Command(bin, append(args, "--", "./"+rel, "swap", c.links[0][0], c.links[1][0])...)
	swapper.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "XDG_CACHE_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	var swapOut strings.Builder
	swapper.Stdout, swapper.Stderr = &swapOut, &swapOut
	must(t, swapper.Start())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
		done := make(chan error, 1)
		go func() { done <- swapper.Wait() }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			swapper.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	first, _ := os.Readlink(filepath.Join(dir, c.links[0][0]))
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if now, _ := os.Readlink(filepath.Join(dir, c.links[0][0])); now != first {
			break
		}
		if time.Now().After(deadline) || swapper.ProcessState != nil {
			t.Fatalf("the swapper never started:\n%s", swapOut.String())
		}
	}

	hunk := func(extra ...string) (string, error) {
		cmd := exec.Command(bin, append(append([]string{"-C", ws}, c.rules...), extra...)...)
		cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "XDG_STATE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const cliRuns, mcpCalls = 150, 3000
	leaks, landed, read := 0, 0, 0
	for i := 0; i < cliRuns; i++ {
		if c.read != "" {
			out, _ := hunk("read", c.read)
			if strings.Contains(out, "SECRET") {
				leaks++
			}
			if strings.Contains(out, "benign") {
				read++
			}
		}
		if c.write != "" {
			if _, err := hunk("--no-history", "write", fmt.Sprintf("%s/cli%d.txt", c.write, i), "--content", "x"); err == nil {
				landed++
			}
		}
	}
	// Through hunk mcp: the calls piped in at once.
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"race","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= mcpCalls; i++ {
		call := map[string]any{"name": "read", "arguments": map[string]any{"path": c.read}}
		if c.write != "" {
			call = map[string]any{"name": "write", "arguments": map[string]any{"path": fmt.Sprintf("%s/mcp%d.txt", c.write, i), "content": "x\n"}}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
		in.Write(append(b, '\n'))
	}
	mcpCmd := exec.Command(bin, append(append([]string{"-C", ws}, c.rules...), "mcp", "--no-history")...)
	mcpCmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
	mcpCmd.Stdin = strings.NewReader(in.String())
	out, err := mcpCmd.Output()
	if err != nil {
		t.Fatalf("hunk mcp: %v", err)
	}
	answered := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     *int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID == 0 {
			continue
		}
		answered++
		if strings.Contains(sc.Text(), "SECRET") {
			leaks++
		}
		if strings.Contains(sc.Text(), "benign") {
			read++
		}
		if c.write != "" && !m.Result.IsError {
			landed++
		}
	}
	stop()
	t.Logf("%s; %d of %d mcp calls answered, %d reads of the allowed file, %d writes landed", strings.TrimSpace(swapOut.String()), answered, mcpCalls, read, landed)
	if answered != mcpCalls {
		t.Errorf("%d of %d mcp calls answered", answered, mcpCalls)
	}
	if !strings.Contains(swapOut.String(), "swapped") {
		t.Errorf("the swapper did not run to its end:\n%s", swapOut.String())
	}
	if leaks > 0 {
		t.Errorf("%d reads printed the read-denied file", leaks)
	}
	if c.read != "" && read == 0 {
		t.Errorf("no read reached the allowed file at all: the race was never run")
	}
	if c.denied != "" {
		ents, _ := os.ReadDir(filepath.Join(ws, c.denied))
		if len(ents) > 0 {
			t.Errorf("%d writes landed in the write-denied %s/ (e.g. %s)", len(ents), c.denied, ents[0].Name())
		}
		if landed == 0 {
			t.Errorf("no write landed at all: the race was never run")
		}
	}
}
