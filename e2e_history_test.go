//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// historyLog is hunk log --json's operations, oldest first, with each
// file's images as the entries hold them.
type loggedOp struct {
	ID      string `json:"id"`
	Seq     int64  `json:"seq"`
	Command string `json:"command"`
}

func hunkLog(t *testing.T, bin, ws string, env []string) []loggedOp {
	t.Helper()
	c := exec.Command(bin, "-C", ws, "--json", "log")
	c.Env = env
	out, err := c.Output()
	if err != nil {
		t.Fatalf("hunk log: %v %s", err, out)
	}
	var r struct {
		Details struct {
			Operations []loggedOp `json:"operations"`
			Dir        string     `json:"dir"`
		} `json:"details"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	ops := r.Details.Operations
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// entryFiles reads the entry of operation id from the history at dir.
type entryFile struct {
	Path string `json:"path"`
	Pre  *struct {
		Hash string `json:"hash"`
	} `json:"pre"`
	Post *struct {
		Hash string `json:"hash"`
	} `json:"post"`
}

func historyEntries(t *testing.T, state string) map[string][]entryFile {
	t.Helper()
	out := map[string][]entryFile{}
	logs, _ := filepath.Glob(filepath.Join(state, "hunk", "history", "*", "log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var r struct {
				Entry *struct {
					ID    string      `json:"id"`
					Files []entryFile `json:"files"`
				} `json:"entry"`
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Entry != nil {
				out[r.Entry.ID] = r.Entry.Files
			}
		}
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestHistoryKilledMidOperation: hunk killed with SIGKILL at every moment
// of a large patch and of a large single write. The next hunk run settles
// the history against the tree the journal recovered: the patch either
// changed the tree and its entry is in the history, its post-images what
// the files hold, or it did not and no entry is there. The undo of a
// committed patch brings the tree back.
func TestHistoryKilledMidOperation(t *testing.T) {
	bin := buildHunk(t)
	ws, state := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)
	const n = 300
	pf := killPatch(t, ws, n)
	tree := func() map[string]string { return treeContents(ws) }
	run := func(args ...string) []byte {
		c := exec.Command(bin, append([]string{"-C", ws}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("hunk %v: %v %s", args, err, out)
		}
		return out
	}
	old := tree()
	start := time.Now()
	run("apply-patch", pf)
	took := time.Since(start) // the kills are spread over it and a little beyond
	applied := tree()
	run("undo")
	if !reflect.DeepEqual(tree(), old) {
		t.Fatal("undo of the whole patch did not bring the tree back")
	}
	committed := 0
	for i := 0; i < 30; i++ {
		before := hunkLog(t, bin, ws, env)
		cmd := exec.Command(bin, "-C", ws, "apply-patch", pf)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		at := took * time.Duration(i) / 24
		time.Sleep(at)
		cmd.Process.Kill()
		cmd.Wait()
		after := hunkLog(t, bin, ws, env) // recovers the tree, settles the history
		got := tree()
		switch {
		case reflect.DeepEqual(got, old):
			if len(after) != len(before) {
				t.Fatalf("killed at %v: the tree is unchanged but the history gained %v", at, after[len(before):])
			}
		case reflect.DeepEqual(got, applied):
			committed++
			if len(after) != len(before)+1 || after[len(after)-1].Command != "apply-patch" {
				t.Fatalf("killed at %v: the patch is in the tree but the history is %v (was %v)", at, after, before)
			}
			files := historyEntries(t, state)[after[len(after)-1].ID]
			if len(files) != n {
				t.Fatalf("killed at %v: the entry names %d files, not %d", at, len(files), n)
			}
			for _, f := range files {
				data, ok := got[f.Path]
				switch {
				case f.Post == nil && ok, f.Post != nil && (!ok || sha([]byte(data)) != f.Post.Hash):
					t.Fatalf("killed at %v: %s does not hold the entry's post-image", at, f.Path)
				}
			}
			run("undo")
			if !reflect.DeepEqual(tree(), old) {
				t.Fatalf("killed at %v: the undo did not bring the tree back", at)
			}
		default:
			t.Fatalf("killed at %v: the tree is half applied", at)
		}
	}
	t.Logf("%d of 30 kills came after the commit", committed)

	// A single write of a large file: the entry is pending around the one
	// rename, so a kill leaves the tree and the history agreeing too.
	big := strings.Repeat("x", 8<<20)
	bf := filepath.Join(ws, "big.src")
	os.WriteFile(bf, []byte(big), 0o644)
	os.WriteFile(filepath.Join(ws, "target.txt"), []byte("small\n"), 0o644)
	for i := 0; i < 12; i++ {
		before := hunkLog(t, bin, ws, env)
		cmd := exec.Command(bin, "-C", ws, "write", "target.txt", "--from", "big.src")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		at := time.Duration(i) * 2 * time.Millisecond
		time.Sleep(at)
		cmd.Process.Kill()
		cmd.Wait()
		after := hunkLog(t, bin, ws, env)
		data, _ := os.ReadFile(filepath.Join(ws, "target.txt"))
		switch string(data) {
		case "small\n":
			if len(after) != len(before) {
				t.Fatalf("write killed at %v: the file is unchanged but the history gained an entry", at)
			}
		case big:
			if len(after) != len(before)+1 {
				t.Fatalf("write killed at %v: the file is written but the history has no entry for it", at)
			}
			run("undo")
		default:
			t.Fatalf("write killed at %v: the file is torn (%d bytes)", at, len(data))
		}
	}
}

// TestHistoryConcurrent: operations on one workspace from many hunk
// processes at once are numbered in the order they committed: for the file
// they all change, each entry's pre-image is the post-image of the entry
// before it.
func TestHistoryConcurrent(t *testing.T) {
	bin := buildHunk(t)
	ws, state := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)
	os.WriteFile(filepath.Join(ws, "shared.txt"), []byte("end\n"), 0o644)
	const workers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan string, workers*each*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for _, args := range [][]string{
					{"edit", "shared.txt", "--insert-line", "0", "--new", fmt.Sprintf("w%d i%d", w, i)},
					{"write", fmt.Sprintf("own-%d-%d.txt", w, i), "--content", "x"},
				} {
					c := exec.Command(bin, append([]string{"-C", ws}, args...)...)
					c.Env = env
					if out, err := c.CombinedOutput(); err != nil {
						errs <- fmt.Sprintf("%v: %v %s", args, err, out)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ops := hunkLog(t, bin, ws, env)
	if len(ops) != workers*each*2 {
		t.Fatalf("%d operations in the history, not %d", len(ops), workers*each*2)
	}
	entries := historyEntries(t, state)
	prev := sha([]byte("end\n"))
	for i, op := range ops {
		if i > 0 && op.Seq <= ops[i-1].Seq {
			t.Fatalf("sequence numbers out of order: %d after %d", op.Seq, ops[i-1].Seq)
		}
		for _, f := range entries[op.ID] {
			if f.Path != "shared.txt" {
				continue
			}
			if f.Pre == nil || f.Pre.Hash != prev {
				t.Fatalf("operation %d (%s) found shared.txt other than the one before left it: not in commit order", op.Seq, op.ID)
			}
			prev = f.Post.Hash
		}
	}
	data, _ := os.ReadFile(filepath.Join(ws, "shared.txt"))
	if sha(data) != prev {
		t.Fatal("shared.txt is not what the last entry left")
	}
}

// TestHistoryFull: a history on a full file system never stops an
// operation: the write lands, hunk says it was not recorded, and the
// history keeps what it had.
func TestHistoryFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	bin := buildHunk(t)
	ws, state := t.TempDir(), t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", state).Run()
	env := append(os.Environ(), "XDG_STATE_HOME="+state)
	run := func(args ...string) (string, error) {
		c := exec.Command(bin, append([]string{"-C", ws}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := run("write", "small.txt", "--content", "one"); err != nil || strings.Contains(out, "warning") {
		t.Fatalf("a small write: %v %s", err, out)
	}
	if out, err := run("write", "small.txt", "--content", "two"); err != nil || strings.Contains(out, "warning") {
		t.Fatalf("a small write: %v %s", err, out)
	}
	big := strings.Repeat("big line\n", 20000) // 180 KB: its old content does not fit
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644)
	out, err := run("edit", "big.txt", "--old", "big line\nbig line\nbig line\n", "--new", "x\n", "--replace-all")
	if err != nil {
		t.Fatalf("the edit failed over a full history: %v %s", err, out)
	}
	if !strings.Contains(out, "warning: history: this operation is not recorded") {
		t.Fatalf("no word of the unrecorded operation: %s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "big.txt")); !strings.HasPrefix(string(data), "x\nx\n") {
		t.Fatal("the edit did not land")
	}
	if out, err := run("undo"); err != nil || !strings.Contains(out, "M small.txt") {
		t.Fatalf("the history lost what it had: %v %s", err, out)
	}
}

// TestMCPReadTracking: through hunk mcp (the Go SDK's client), a write over
// a file the session has not read, or that a person changed since it read
// it, is refused as STALE; an edit far from the person's change lands, one
// beside it is refused; the undo tool takes the session's change back.
func TestMCPReadTracking(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)
	cs := mcpSession(t, ws, nil)
	code := func(sc map[string]any) string { s, _ := sc["code"].(string); return s }

	if res, text, _ := callTool(t, cs, "write", map[string]any{"path": "b.txt", "content": "B\n"}); !res.IsError || !strings.Contains(text, "has not read it") {
		t.Fatalf("a write over a file never read: %s", text)
	}
	callTool(t, cs, "read", map[string]any{"path": "a.txt"})
	// A person (or a formatter) changes line 2.
	lines[1] = "line 2, changed by a person"
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	if res, text, sc := callTool(t, cs, "write", map[string]any{"path": "a.txt", "content": "all new\n"}); !res.IsError || code(sc) != "STALE" {
		t.Fatalf("a write over an outside change: %s", text)
	}
	if res, text, _ := callTool(t, cs, "edit", map[string]any{"path": "a.txt", "oldText": "line 30", "newText": "line thirty"}); res.IsError {
		t.Fatalf("an edit far from the outside change was refused: %s", text)
	}
	if res, text, sc := callTool(t, cs, "edit", map[string]any{"path": "a.txt", "oldText": "line 3\n", "newText": "line three\n"}); !res.IsError || code(sc) != "STALE" {
		t.Fatalf("an edit beside the outside change: %s", text)
	}
	if res, text, sc := callTool(t, cs, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n line 3\n-line 4\n+line four\n*** End Patch\n"}); !res.IsError || code(sc) != "STALE" {
		t.Fatalf("a patch beside the outside change: %s", text)
	}
	data, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	if !strings.Contains(string(data), "line 2, changed by a person\nline 3\nline 4\n") || !strings.Contains(string(data), "line thirty") {
		t.Fatalf("a.txt is %q", data)
	}
	// Read again: the change is seen, the edit lands.
	callTool(t, cs, "read", map[string]any{"path": "a.txt"})
	if res, text, _ := callTool(t, cs, "edit", map[string]any{"path": "a.txt", "oldText": "line 3\n", "newText": "line three\n"}); res.IsError {
		t.Fatalf("an edit after a fresh read: %s", text)
	}
	// The undo tool takes back the session's newest change.
	if res, text, _ := callTool(t, cs, "undo", map[string]any{}); res.IsError {
		t.Fatalf("undo: %s", text)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "a.txt")); !strings.Contains(string(data), "\nline 3\n") {
		t.Fatalf("undo left %q", data)
	}
}

// TestUndoPlantedLink: a model alone, in one hunk mcp --record session,
// makes a file, removes it, puts a link to .git/hooks where its directory
// was — all with exec under a sandbox — and asks the undo tool to take the
// removal back. The undo must not write through the link (a hook git would
// run outside the sandbox), nor reach a person's change by a guessed id.
func TestUndoPlantedLink(t *testing.T) {
	for _, driver := range []string{"bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			dir := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			env := []string{"XDG_STATE_HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir(), "HUNK_EXEC_IMAGE=" + sandboxtest.ImageName()}
			cs := mcpSessionEnv(t, dir, nil, env, "--record", "--driver", driver)
			run := func(command string) map[string]any {
				res, text, sc := callTool(t, cs, "exec", map[string]any{"command": command})
				if res.IsError {
					t.Fatalf("exec %q: %s", command, text)
				}
				return sc
			}
			run("mkdir sub && printf '#!/bin/sh\\necho pwned\\n' > sub/pre-commit && chmod +x sub/pre-commit")
			removal := run("rm sub/pre-commit")
			id, _ := removal["opId"].(string)
			if id == "" {
				t.Fatalf("the removal was not recorded: %v", removal)
			}
			run("rmdir sub && ln -s .git/hooks sub")
			res, text, sc := callTool(t, cs, "undo", map[string]any{"id": id, "force": true})
			if !res.IsError || sc["code"] != "STALE" {
				t.Errorf("the undo through the planted link: %v %s", sc["code"], text)
			}
			if _, err := os.Lstat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
				t.Fatalf("the undo wrote .git/hooks/pre-commit")
			}
		})
	}
}
