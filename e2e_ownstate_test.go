//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnStateBindMounts: hunk's state directory bound into a workspace —
// the directory above it (~/.local/state), hunk's own directory, or a
// part of it — is found by the mount table wherever it is mounted: read
// and search refuse it, bwrap and docker hide it from the command, and
// landlock, which cannot hide part of a tree, refuses the run. Before,
// each printed the state's secrets. Root (mount --bind), in the host's
// mount namespace (docker's daemon binds the workspace from there); each
// mount is taken off at the end.
func TestOwnStateBindMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8) here")
	}
	bin := buildHunk(t)
	base := t.TempDir()
	state, ws := filepath.Join(base, "state"), filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(state, "hunk", "history"), ws, filepath.Join(base, "home")} {
		must(t, os.MkdirAll(d, 0o700))
	}
	must(t, os.WriteFile(filepath.Join(state, "hunk", "secret.txt"), []byte("SECRET-STATE\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(state, "hunk", "history", "old.txt"), []byte("SECRET-HISTORY\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("plain\n"), 0o644))
	for _, b := range [][2]string{{state, "above"}, {filepath.Join(state, "hunk"), "own"}, {filepath.Join(state, "hunk", "history"), "part"}} {
		at := filepath.Join(ws, b[1])
		must(t, os.Mkdir(at, 0o755))
		if out, err := exec.Command("mount", "--bind", b[0], at).CombinedOutput(); err != nil {
			t.Skipf("mount --bind: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", at).Run() })
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		c := exec.Command(bin, append([]string{"-C", ws}, args...)...)
		c.Env = append(os.Environ(), "HOME="+filepath.Join(base, "home"), "XDG_STATE_HOME="+state,
			"XDG_CONFIG_HOME="+filepath.Join(base, "config"), "XDG_CACHE_HOME="+filepath.Join(base, "cache"), "HUNK_CONFIG=",
			"HUNK_EXEC_IMAGE="+imageFor("docker"))
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	paths := []string{"above/hunk/secret.txt", "own/secret.txt", "part/old.txt", "above/hunk/history/old.txt"}
	for _, p := range paths {
		if out, code := run("read", p); code == 0 || strings.Contains(out, "SECRET") || !strings.Contains(out, "hunk's own") {
			t.Errorf("read %s: exit %d\n%s", p, code, out)
		}
	}
	for _, args := range [][]string{{"search", "SECRET"}, {"search", "--hidden", "--no-ignore", "SECRET"}, {"search", "--files", "*.txt"}} {
		if out, _ := run(args...); strings.Contains(out, "SECRET") || strings.Contains(out, "secret.txt") || strings.Contains(out, "old.txt") {
			t.Errorf("%v shows hunk's state:\n%s", args, out)
		}
	}
	if out, code := run("write", "own/planted.txt", "--content", "x"); code == 0 {
		t.Errorf("write into the bound state: exit 0\n%s", out)
	}
	cat := "cat " + strings.Join(paths, " ") + " 2>&1; ls own above/hunk part 2>&1; true"
	for _, driver := range []string{"bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			if out, code := run("exec", "--driver", driver, "--sh", cat); code != 0 || strings.Contains(out, "SECRET") {
				t.Errorf("exec --driver %s: exit %d\n%s", driver, code, out)
			}
		})
	}
	t.Run("landlock", func(t *testing.T) {
		needDriver(t, "landlock")
		if out, code := run("exec", "--driver", "landlock", "--sh", cat); code != 125 || strings.Contains(out, "SECRET") || !strings.Contains(out, "own-state") {
			t.Errorf("exec --driver landlock: exit %d\n%s", code, out)
		}
	})
	if b, _ := os.ReadFile(filepath.Join(state, "hunk", "secret.txt")); string(b) != "SECRET-STATE\n" {
		t.Errorf("the state's file changed: %q", b)
	}
}
