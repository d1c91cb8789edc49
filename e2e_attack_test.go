package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// attackTree builds T/ws (the workspace) next to T/outside (a secret file
// and a directory) and T/ws-evil (a sibling whose name starts like the
// workspace's), with symlinks inside the workspace that lead out in every way.
func attackTree(t *testing.T) (top, ws string) {
	t.Helper()
	top, _ = filepath.EvalSymlinks(t.TempDir())
	ws = filepath.Join(top, "ws")
	mk := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(top, "outside", "secret.txt"), "TOP SECRET\n")
	mk(filepath.Join(top, "outside", "dir", "inner.txt"), "TOP SECRET inner\n")
	mk(filepath.Join(top, "ws-evil", "secret.txt"), "TOP SECRET evil\n")
	mk(filepath.Join(ws, "in.txt"), "inside\n")
	mk(filepath.Join(ws, "sub", "deeper", "file.txt"), "inside deeper\n")
	ln("../outside/secret.txt", filepath.Join(ws, "linkfile"))
	ln("../outside", filepath.Join(ws, "linkdir"))
	ln(filepath.Join(top, "outside"), filepath.Join(ws, "abslinkdir"))
	ln(filepath.Join(top, "outside", "secret.txt"), filepath.Join(ws, "abslinkfile"))
	ln("../outside/missing.txt", filepath.Join(ws, "dangling"))
	ln(filepath.Join(top, "outside", "missing-abs.txt"), filepath.Join(ws, "danglingabs"))
	ln("loop2", filepath.Join(ws, "loop1"))
	ln("loop1", filepath.Join(ws, "loop2"))
	ln("self", filepath.Join(ws, "self"))
	ln("../..", filepath.Join(ws, "sub", "up"))
	ln("chain2", filepath.Join(ws, "chain1"))
	ln("../outside/secret.txt", filepath.Join(ws, "chain2"))
	ln("sub", filepath.Join(ws, "inner"))
	ln("/etc/passwd", filepath.Join(ws, "etcpasswd"))
	return top, ws
}

// attackPaths are the paths an agent might be tricked into passing. Each must
// be refused by every command, with nothing read from or written outside. (A
// NUL byte cannot reach a process through argv; Resolve's unit test covers it.)
func attackPaths(top string) []string {
	return []string{
		"..",
		"../",
		"../outside/secret.txt",
		"../outside/new.txt",
		"../../etc/passwd",
		"./../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"sub//..//..//outside/secret.txt",
		"sub/deeper/../../../outside/secret.txt",
		"sub/deeper/../../../../../../../../etc/passwd",
		"/etc/passwd",
		"//etc/passwd",
		"///etc//passwd",
		filepath.Join(top, "outside", "secret.txt"),
		filepath.Join(top, "outside", "new.txt"),
		filepath.Join(top, "ws") + "/../outside/secret.txt",
		filepath.Join(top, "ws-evil", "secret.txt"),
		filepath.Join(top, "ws-evil", "new.txt"),
		"linkfile",
		"linkdir/secret.txt",
		"linkdir/new.txt",
		"linkdir/dir/inner.txt",
		"linkdir/",
		"./linkdir/./secret.txt",
		"abslinkdir/secret.txt",
		"abslinkdir/new.txt",
		"abslinkfile",
		"dangling",
		"danglingabs",
		"loop1",
		"loop1/x",
		"self",
		"sub/up/outside/secret.txt",
		"sub/up/outside/new.txt",
		"inner/up/outside/secret.txt",
		"chain1",
		"etcpasswd",
		"linkdir",
		"abslinkdir",
		"sub/up",
		"sub/up/",
		strings.Repeat("a/", 2100) + "x",
		strings.Repeat("n", 300),
	}
}

// treeHash hashes every entry below dir (names, types, modes, contents, link targets).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", p, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintln(h, target)
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// attackCommands are the commands run against each path; PATH is replaced
// (in the arguments, and in attackStdin's patch text for apply-patch).
var attackCommands = map[string][]string{
	"write":         {"write", "PATH", "--content", "PWNED"},
	"read":          {"read", "PATH"},
	"edit":          {"edit", "PATH", "--old", "TOP SECRET", "--new", "PWNED"},
	"apply-add":     {"apply-patch"},
	"apply-upd":     {"apply-patch"},
	"apply-del":     {"apply-patch"},
	"apply-move":    {"apply-patch"},
	"compat-add":    {"apply-patch", "--compat", "codex"},
	"compat-move":   {"apply-patch", "--compat", "codex"},
	"link-add":      {"apply_patch"},
	"apply-unidiff": {"apply-patch"},
}

// attackStdin is the patch each apply-patch variant reads, PATH replaced.
var attackStdin = map[string]string{
	"apply-add":     "*** Begin Patch\n*** Add File: PATH\n+PWNED\n*** End Patch\n",
	"apply-upd":     "*** Begin Patch\n*** Update File: PATH\n@@\n-TOP SECRET\n+PWNED\n*** End Patch\n",
	"apply-del":     "*** Begin Patch\n*** Delete File: PATH\n*** End Patch\n",
	"apply-move":    "*** Begin Patch\n*** Update File: in.txt\n*** Move to: PATH\n@@\n-inside\n+moved\n*** End Patch\n",
	"compat-add":    "*** Begin Patch\n*** Add File: PATH\n+PWNED\n*** End Patch\n",
	"compat-move":   "*** Begin Patch\n*** Update File: in.txt\n*** Move to: PATH\n@@\n-inside\n+moved\n*** End Patch\n",
	"link-add":      "*** Begin Patch\n*** Add File: PATH\n+PWNED\n*** End Patch\n",
	"apply-unidiff": "--- PATH\n+++ PATH\n@@ -1 +1 @@\n-TOP SECRET\n+PWNED\n",
}

// TestAttackCorpus runs every attack path through the real binary for every
// command, each on a fresh tree, asserting refusal (OUTSIDE_WORKSPACE, or
// INVALID_ARGUMENT for malformed paths), no secret in the output, and no
// change anywhere. One exception: Delete File of a symlink that lies inside
// the workspace removes that link (never its target) — legitimate, so it may
// succeed, but nothing outside the workspace may change.
func TestAttackCorpus(t *testing.T) {
	top0, _ := attackTree(t)
	paths := attackPaths(top0)
	if len(paths) < 30 {
		t.Fatalf("only %d attack paths", len(paths))
	}
	for cmdName, argv := range attackCommands {
		for i := range paths {
			t.Run(fmt.Sprintf("%s/%02d", cmdName, i), func(t *testing.T) {
				t.Parallel()
				top, ws := attackTree(t)
				p := attackPaths(top)[i]
				before := treeHash(t, top)
				linkInside := isLinkInside(ws, p)
				outsideBefore := treeHash(t, filepath.Join(top, "outside")) + treeHash(t, filepath.Join(top, "ws-evil"))
				args := []string{"--json", "-C", ws}
				if argv[0] == "apply_patch" {
					args = nil // Codex's standalone form: no flags, the cwd is the root
				}
				for _, a := range argv[min(1, len(argv)):] {
					if a == "PATH" {
						a = p
					}
					args = append(args, a)
				}
				name := "hunk"
				if argv[0] == "apply_patch" {
					name = "apply_patch"
				} else {
					args = append(args[:3:3], append([]string{argv[0]}, args[3:]...)...)
				}
				cmd := exec.Command(name, args...)
				cmd.Dir = ws
				if in, ok := attackStdin[cmdName]; ok {
					cmd.Stdin = strings.NewReader(strings.ReplaceAll(in, "PATH", p))
				}
				out, err := cmd.Output()
				if strings.Contains(string(out), "TOP SECRET") || strings.Contains(string(out), "root:") {
					t.Fatalf("hunk %s %q leaked outside content:\n%s", cmdName, p, out)
				}
				if outsideAfter := treeHash(t, filepath.Join(top, "outside")) + treeHash(t, filepath.Join(top, "ws-evil")); outsideAfter != outsideBefore {
					t.Fatalf("hunk %s %q changed files outside the workspace", cmdName, p)
				}
				if err == nil && cmdName == "apply-del" && linkInside {
					return // the link itself was removed; the target is untouched (checked above)
				}
				if err == nil {
					t.Fatalf("hunk %s %q succeeded:\n%s", cmdName, p, out)
				}
				if name == "apply_patch" {
					// Codex's own output: no JSON; refusal and no change are what count.
					if after := treeHash(t, top); after != before {
						t.Fatalf("apply_patch %q changed the tree", p)
					}
					return
				}
				var res struct {
					IsError bool
					Code    string
					Error   string
				}
				if err := json.Unmarshal(out, &res); err != nil {
					t.Fatalf("hunk %s %q: not one JSON document: %v\n%s", cmdName, p, err, out)
				}
				switch {
				case res.Code == "OUTSIDE_WORKSPACE", res.Code == "INVALID_ARGUMENT":
				case res.Code == "ALREADY_EXISTS" && (cmdName == "apply-add" || cmdName == "apply-move") && linkInside:
					// The name is taken inside the workspace (by a symlink): refused as such.
				default:
					t.Fatalf("hunk %s %q: code %s (%s), want OUTSIDE_WORKSPACE", cmdName, p, res.Code, res.Error)
				}
				if after := treeHash(t, top); after != before {
					t.Fatalf("hunk %s %q changed the tree", cmdName, p)
				}
			})
		}
	}
}

// isLinkInside reports whether p names (lexically inside ws) a symlink whose
// own directory is inside the workspace: deleting it only removes the link.
func isLinkInside(ws, p string) bool {
	if filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
		return false
	}
	fi, err := os.Lstat(filepath.Join(ws, strings.TrimRight(p, "/")))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Dir(filepath.Join(ws, strings.TrimRight(p, "/"))))
	return err == nil && (real == ws || strings.HasPrefix(real, ws+"/"))
}
