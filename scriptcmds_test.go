package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// scriptParams are the testscript parameters shared by every script suite:
// a clean environment (no user config, no color) and the custom commands below.
func scriptParams(dir string) testscript.Params {
	p := testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("HUNK_UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(e.WorkDir, ".no-config"))
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
		},
	}
	for name, c := range extraCmds {
		p.Cmds[name] = c
	}
	return p
}

// extraCmds lets other test files add script commands.
var extraCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// scriptCondition answers [root] (running as uid 0) and [driver:NAME]
// (hunk exec's driver NAME is usable here; see sandbox tests).
func scriptCondition(cond string) (bool, error) {
	switch {
	case cond == "root":
		return os.Geteuid() == 0, nil
	}
	if c, ok := extraConditions[strings.SplitN(cond, ":", 2)[0]]; ok {
		return c(cond)
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// extraConditions lets other test files add script conditions by prefix.
var extraConditions = map[string]func(cond string) (bool, error){}

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
