//go:build linux

// The testscript suite: TestScripts runs testdata/scripts/*.txtar against
// the real binary, with the one map of custom commands and conditions below.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hunk-dev/hunk/cmd"
	"github.com/hunk-dev/hunk/internal/sandbox/docker"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestMain registers the real main as the commands the scripts run: hunk, and
// the Codex-compatible links apply_patch and applypatch; and builds hunk once
// for the tests that run a real binary (withBuild).
func TestMain(m *testing.M) {
	main := func() { os.Exit(cmd.Main(os.Args[1:])) }
	testscript.Main(withBuild{m}, map[string]func(){
		"hunk":          main,
		"apply_patch":   main,
		"applypatch":    main,
		"hunk-watchdog": main, // hunk's watchdog is its own binary again: this one, under testscript
		"hunk-egress":   main, // and so is exec's egress door
	})
}

// TestScripts runs every testdata/scripts/*.txtar against the real binary.
// One script: go test -run TestScripts/NAME.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/scripts"))
}

// scriptParams are the testscript parameters shared by every script suite:
// a clean environment (no user config, no color) and the custom commands below.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("HUNK_UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			// Outside the work dir, which scripts use as a workspace: a
			// workspace holding hunk's config is a case of its own
			// (exec_own_state).
			e.Setenv("XDG_CONFIG_HOME", e.WorkDir+".no-config")
			// hunk's state (crash journals, the history) of this script
			// alone, outside its workspace.
			e.Setenv("XDG_STATE_HOME", e.WorkDir+".state")
			e.Setenv("HUNK_CONFIG", "")
			e.Setenv("NO_COLOR", "")
			e.Setenv("TERM", "dumb")
			for _, k := range []string{"HUNK_REQUIRE_DRIVERS", "DOCKER_HOST", "HUNK_TEST_IMAGE"} {
				e.Setenv(k, os.Getenv(k))
			}
			return nil
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"snapshot":  cmdSnapshot,
			"unchanged": cmdUnchanged,
			"hashenv":   cmdHashenv,
			"mode":      cmdMode,
			"notemp":    cmdNotemp,
			"mkfile":    cmdMkfile,
			"bytes":     cmdBytes,
			"putbytes":  cmdPutbytes,
			"jsonenv":   cmdJSONenv,
			"jsonmax":   cmdJSONmax,
			"islink":    cmdIslink,
			"listen":    cmdListen,
			"noproc":    cmdNoproc,
			"serveaddr": cmdServeaddr,
			"http":      cmdHTTP,
		},
	}
}

// scriptCondition answers [root] (running as uid 0), [long] (long tests
// asked for: HUNK_LONG_TESTS=1), [driver:NAME] (hunk exec's driver NAME
// works here) and [docker] (a Docker engine and the test image are there).
func scriptCondition(cond string) (bool, error) {
	switch {
	case cond == "root":
		return os.Geteuid() == 0, nil
	case cond == "long":
		return longTests(), nil
	case strings.HasPrefix(cond, "driver:"):
		return driverCondition(cond)
	case cond == "docker":
		return dockerCondition(cond)
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// treeState records every entry below a directory: type, mode, content hash
// or link target.
func treeState(ts *testscript.TestScript, dir string) map[string]string {
	st := map[string]string{}
	root := ts.MkAbs(dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, ".snapshot-") {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			st[rel] = "link -> " + t
		case fi.IsDir():
			st[rel] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			st[rel] = fmt.Sprintf("file %v %x", fi.Mode(), h[:8])
		}
		return nil
	})
	ts.Check(err)
	return st
}

var (
	snapshotsMu sync.Mutex // scripts run in parallel
	snapshots   = map[string]map[string]string{}
)

// snapshot NAME [DIR]: record the state of DIR (default: the work dir).
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: snapshot NAME [DIR]")
	}
	dir := "."
	if len(args) == 2 {
		dir = args[1]
	}
	st := treeState(ts, dir)
	snapshotsMu.Lock()
	snapshots[ts.Getenv("WORK")+"\x00"+args[0]] = st
	snapshotsMu.Unlock()
}

// unchanged NAME [DIR]: DIR is exactly as snapshot NAME recorded it: no file
// changed, appeared (temporary files included) or vanished.
func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: unchanged NAME [DIR]")
	}
	dir := "."
	if len(args) == 2 {
		dir = args[1]
	}
	snapshotsMu.Lock()
	before, ok := snapshots[ts.Getenv("WORK")+"\x00"+args[0]]
	snapshotsMu.Unlock()
	if !ok {
		ts.Fatalf("no snapshot %q", args[0])
	}
	now := treeState(ts, dir)
	var diffs []string
	for k, v := range before {
		if now[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: was %q, now %q", k, v, now[k]))
		}
	}
	for k, v := range now {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	sort.Strings(diffs)
	if neg {
		if len(diffs) == 0 {
			ts.Fatalf("%s is unchanged since snapshot %s", dir, args[0])
		}
		return
	}
	if len(diffs) > 0 {
		ts.Fatalf("%s changed since snapshot %s:\n%s", dir, args[0], strings.Join(diffs, "\n"))
	}
}

// hashenv VAR FILE: set VAR to the hex sha256 of FILE.
func cmdHashenv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hashenv VAR FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	h := sha256.Sum256(b)
	ts.Setenv(args[0], hex.EncodeToString(h[:]))
}

// mode FILE PERM: FILE's permission bits (with setuid, setgid, sticky) are PERM, octal.
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mode FILE PERM")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		ts.Fatalf("no stat for %s", args[0])
	}
	got := uint64(st.Mode & 0o7777)
	if (got == want) == neg {
		ts.Fatalf("%s has mode %04o, want %s%04o", args[0], got, map[bool]string{true: "not "}[neg], want)
	}
}

// notemp DIR: no hunk temporary file is left anywhere below DIR.
func cmdNotemp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: notemp DIR")
	}
	var found []string
	_ = filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err == nil && workspace.IsTemp(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		ts.Fatalf("temporary files left behind: %v", found)
	}
}

// mkfile FILE SIZE [LINE]: write FILE of SIZE bytes (suffixes K, M, G) made of
// LINE repeated (default "x…x\n", 63 x's), truncated to SIZE.
func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: mkfile FILE SIZE [LINE]")
	}
	size := parseSize(ts, args[1])
	line := strings.Repeat("x", 63) + "\n"
	if len(args) == 3 {
		line = strings.ReplaceAll(args[2], `\n`, "\n")
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	chunk := bytes.Repeat([]byte(line), 1+(1<<16)/len(line))
	for size > 0 {
		n := int64(len(chunk))
		if n > size {
			n = size
		}
		_, err := f.Write(chunk[:n])
		ts.Check(err)
		size -= n
	}
}

// bytes FILE STRING: FILE holds exactly STRING, with Go escapes (\r, \n, \t,
// \xNN, \uNNNN) interpreted; use it where txtar cannot hold the bytes (CR,
// a missing final newline, a BOM).
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: bytes FILE STRING")
	}
	want, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	ts.Check(err)
	got, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if (string(got) == want) == neg {
		ts.Fatalf("%s holds %q, want %s%q", args[0], got, map[bool]string{true: "not "}[neg], want)
	}
}

// putbytes FILE STRING: write STRING (Go escapes interpreted, as for bytes) to FILE.
func cmdPutbytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: putbytes FILE STRING")
	}
	data, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(data), 0o666))
}

// islink PATH [TARGET]: PATH is a symlink (to TARGET, when given).
func cmdIslink(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: islink PATH [TARGET]")
	}
	t, err := os.Readlink(ts.MkAbs(args[0]))
	ok := err == nil && (len(args) == 1 || t == args[1])
	if ok == neg {
		ts.Fatalf("islink %v: link target %q, err %v", args, t, err)
	}
}

func parseSize(ts *testscript.TestScript, s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	ts.Check(err)
	return n * mult
}

var (
	driverMu    sync.Mutex
	driverWorks = map[string]error{}
)

// listen tcp VAR: listen on 127.0.0.1 (a free port, put in VAR), accepting
// and closing connections until the script ends.
// listen unix VAR: the same on a new unix socket under /run (root only), its
// path in VAR — a stand-in for the Docker socket.
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: listen tcp|unix VAR")
	}
	var ln net.Listener
	var err error
	switch args[0] {
	case "tcp":
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv(args[1], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	case "unix":
		p := fmt.Sprintf("/run/hunk-script-%d-%d.sock", os.Getpid(), time.Now().UnixNano()%1e9)
		ln, err = net.Listen("unix", p)
		ts.Check(err)
		ts.Setenv(args[1], p)
	default:
		ts.Fatalf("listen: network must be tcp or unix")
	}
	go acceptAndClose(ln)
	ts.Defer(func() { ln.Close() })
}

// noproc ARG: no live process has ARG as one of its arguments (waiting up
// to three seconds for processes already killed to go, on a busy machine).
func cmdNoproc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noproc ARG")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		found := procsMatching(args[0])
		if len(found) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("processes still running: %s", strings.Join(found, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// probeDriver asks `hunk exec --drivers`, in a process of its own (a sandbox
// run owns the orphans of the process that runs it, so none may run inside
// this test process), whether driver name works here.
func probeDriver(name string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	c := exec.Command(exe)
	c.Args = []string{"hunk", "--json", "exec", "--drivers"}
	out, err := c.Output()
	if err != nil {
		return fmt.Errorf("hunk exec --drivers: %v", err)
	}
	var doc struct {
		Details struct {
			Drivers []struct {
				Name      string `json:"name"`
				Available bool   `json:"available"`
				Note      string `json:"note"`
			} `json:"drivers"`
		} `json:"details"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return fmt.Errorf("hunk exec --drivers: %v", err)
	}
	for _, d := range doc.Details.Drivers {
		if d.Name == name {
			if d.Available {
				return nil
			}
			return errors.New(d.Note)
		}
	}
	return fmt.Errorf("no driver %q", name)
}

// The docker driver's scripts (exec_docker_*.txtar) start with [!docker]
// skip. The condition is true when a Docker engine answers and the test
// image ($HUNK_TEST_IMAGE, default hunk-test:latest, imported offline with
// --make-image when missing) is there; when HUNK_REQUIRE_DRIVERS names
// docker, an unavailable engine fails the script instead of skipping it.
func init() {
	if os.Getenv("HUNK_TEST_IMAGE") == "" {
		os.Setenv("HUNK_TEST_IMAGE", sandboxtest.ImageName())
	}
}

var (
	dockerOnce sync.Once
	dockerOK   bool
	dockerErr  error
)

func dockerCondition(string) (bool, error) {
	dockerOnce.Do(func() {
		d := &docker.Docker{}
		c := d.Probe(context.Background())
		if !c.Available {
			if requiredDriver("docker") {
				dockerErr = fmt.Errorf("docker driver required (HUNK_REQUIRE_DRIVERS) but unavailable: %s", c.Reason)
			} else {
				sandboxtest.NoteSkip("exec_docker scripts", "no Docker engine: "+c.Reason)
			}
			return
		}
		sandboxtest.DockerLock()
		if _, dockerErr = sandboxtest.EnsureImage(d); dockerErr == nil {
			dockerOK = true
		}
	})
	return dockerOK, dockerErr
}

func requiredDriver(name string) bool { return sandboxtest.Required("HUNK_REQUIRE_DRIVERS", name) }

// jsonenv VAR PATH: set VAR to the value at PATH (dot-separated keys and
// array indexes, e.g. details.operations.0.id) of the last command's
// stdout, a JSON document.
func cmdJSONenv(ts *testscript.TestScript, neg bool, args []string) {
	id, args := idOption(args)
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonenv [-id N] VAR PATH")
	}
	v := jsonAt(ts, id, args[1])
	s, ok := v.(string)
	if !ok {
		ts.Fatalf("%s is %v, not a string", args[1], v)
	}
	ts.Setenv(args[0], s)
}

// cmdJSONmax: jsonmax [-id N] PATH MAX — the JSON at PATH of stdout (of
// its JSON-RPC message with id N, when stdout is JSON lines; PATH "." the
// whole message) is at most MAX bytes long, as JSON text: what a harness
// counts.
func cmdJSONmax(ts *testscript.TestScript, neg bool, args []string) {
	id, args := idOption(args)
	if len(args) != 2 {
		ts.Fatalf("usage: jsonmax [-id N] PATH MAX")
	}
	most, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("MAX %q: %v", args[1], err)
	}
	b, _ := json.Marshal(jsonAt(ts, id, args[0]))
	if over := len(b) > most; over != neg {
		ts.Fatalf("%s is %d bytes (want %s %d)", args[0], len(b), map[bool]string{false: "at most", true: "more than"}[neg], most)
	}
}

// idOption takes a leading "-id N" (a JSON-RPC message's id) off args.
func idOption(args []string) (id string, rest []string) {
	if len(args) > 2 && args[0] == "-id" {
		return args[1], args[2:]
	}
	return "", args
}

// jsonAt is the value at path (keys and indexes joined by ".", "." the
// whole) of stdout, or of its line holding the JSON-RPC message with id
// ("" all of stdout).
func jsonAt(ts *testscript.TestScript, id, path string) any {
	text := ts.ReadFile("stdout")
	if id != "" {
		found := false
		for _, l := range strings.Split(text, "\n") {
			var m struct{ ID json.RawMessage }
			if json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == id {
				text, found = l, true
				break
			}
		}
		if !found {
			ts.Fatalf("stdout has no message with id %s", id)
		}
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	if path == "." {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("%s: no index %s", path, k)
			}
			v = x[i]
		default:
			ts.Fatalf("%s: nothing at %s", path, k)
		}
	}
	return v
}
