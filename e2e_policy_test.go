//go:build linux

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// policyRules is the policy the bypass suite attacks.
var policyRules = []string{
	"--deny-read", ".env", "--deny-read", "*.pem", "--deny-read", "/nested/secret-dir/",
	"--deny-write", "/.github/", "--deny-write", "/.gitlab-ci.yml", "--deny-write", "/deploy/prod/",
}

// policyAttack tries every way a command could read a read-denied file or
// change a write-denied one (busybox's tools too: the docker image's). Each
// attempt's failure is expected; only "done" is required.
const policyAttack = `
cat .env a/b/.env keys/id.pem nested/secret-dir/s
cat ./.env .//.env a/../.env ./a/b/../b/.env
cat /proc/self/root$PWD/.env /proc/$$/cwd/.env
(cat /dev/fd/3) 3<.env
(cat <&4) 4<a/b/.env
cp .env c1; cp -r a a2; cp -r nested n2; cp -r keys k1
ln .env h1; ln keys/id.pem h2; ln a/b/.env h3
ln -s .env s1; ln -s "$PWD/.env" s2; ln -s keys k2; ln -s nested/secret-dir sd; ln -s a/b b2
mv .env m1; mv keys k3; mv a a3; mv a/b a/b3; mv nested n3; mv nested/secret-dir n4
tar cf t.tar .env keys a nested; tar xOf t.tar
find . -name '.env' -o -name '*.pem' -o -name s | xargs cat
dd if=.env; head -c 100 keys/id.pem; od -c .env
umount .env; umount -l keys/id.pem; umount nested/secret-dir
rm -f .env; rm -rf nested/secret-dir; rm -f keys/id.pem
echo x >> .github/workflows/ci.yml; echo x > .github/new.yml; rm -rf .github/workflows; mv .github g2; mkdir -p .github/workflows/x
chmod 777 .github/workflows/ci.yml; touch -d 2000-01-01 .github/workflows/ci.yml; ln -s /tmp .github/t
echo x > .gitlab-ci.yml; rmdir .gitlab-ci.yml; mv .gitlab-ci.yml gl; ln -s x .gitlab-ci.yml
mkdir -p deploy/prod/x; echo x > deploy/prod; rmdir deploy/prod; mv deploy d2; rmdir deploy
echo done
`

// TestPolicyBypass is the path policy's bypass suite through the real
// binary: a command under each driver that claims the policy guard — as
// root and as an unprivileged user — tries every route above to a
// read-denied file (symlinks, hard links, renames, /proc/self/root,
// /dev/fd, archives, unmounting) and to change a write-denied one; then
// hunk read, holding the same policy, reads every name the command left.
// No secret may come out and no write-denied path may change; landlock,
// which cannot hold the read.deny rules, must refuse without running.
func TestPolicyBypass(t *testing.T) {
	bin := buildHunk(t)
	users := testUsers()
	for _, driver := range []string{"bwrap", "docker", "landlock"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			for _, u := range users {
				if driver == "docker" && u.cred != nil {
					continue // the docker engine's socket is root's
				}
				t.Run(u.name, func(t *testing.T) { policyBypass(t, bin, driver, u.cred) })
				t.Run(u.name+"/allow", func(t *testing.T) { policyAllowBypass(t, bin, driver, u.cred) })
			}
		})
	}
}

func policyBypass(t *testing.T, bin, driver string, cred *syscall.Credential) {
	secret := fmt.Sprintf("hunk-secret-%d", os.Getpid())
	top, ws := policyWorkspace(t, map[string]string{
		".env": secret, "a/b/.env": secret, "keys/id.pem": secret, "nested/secret-dir/s": secret,
		".github/workflows/ci.yml": "on: push\n", "src/main.go": "package main\n", "deploy/README": "deploy\n",
	})
	protected := snapshotTree(t, filepath.Join(ws, ".github"))
	asUser := func(c *exec.Cmd) *exec.Cmd {
		if cred != nil {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		c.Env = append(os.Environ(), "HOME="+top)
		return c
	}
	args := append([]string{"-C", ws}, policyRules...)
	args = append(args, "exec", "--driver", driver, "--timeout", "60s", "--git-write")
	if img := os.Getenv("HUNK_TEST_IMAGE"); driver == "docker" && img != "" {
		args = append(args, "--image", img)
	}
	out, err := asUser(exec.Command(bin, append(args, "--sh", policyAttack)...)).CombinedOutput()
	if strings.Contains(string(out), secret) {
		t.Errorf("the command read a secret:\n%s", out)
	}
	if driver == "landlock" {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "cannot guard policy") {
			t.Fatalf("landlock ran under a policy it cannot hold: %v\n%s", err, out)
		}
	} else if !strings.Contains(string(out), "done\n") {
		t.Fatalf("the attack did not run to its end: %v\n%s", err, out)
	} else {
		t.Logf("%s", out)
	}
	// The secrets are where they were, unchanged; the write-denied paths too.
	for _, name := range []string{".env", "a/b/.env", "keys/id.pem", "nested/secret-dir/s"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != secret {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if got := snapshotTree(t, filepath.Join(ws, ".github")); got != protected {
		t.Errorf(".github changed:\n%s\nwas:\n%s", got, protected)
	}
	for _, name := range []string{".gitlab-ci.yml", "deploy/prod", "g2", "gl", "d2"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s exists after the run", name)
		}
	}
	// Whatever the command left, hunk read (holding the same policy) shows
	// no secret through it.
	var names []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ws, p)
			names = append(names, rel)
		}
		return nil
	})
	sort.Strings(names)
	for _, name := range names {
		rargs := append(append([]string{"-C", ws}, policyRules...), "read", name)
		out, _ := asUser(exec.Command(bin, rargs...)).CombinedOutput()
		if strings.Contains(string(out), secret) {
			t.Errorf("hunk read %s shows the secret: %s", name, out)
		}
	}
}

// policyAllowAttack tries to write outside the one writable directory.
const policyAllowAttack = `
echo x > top; echo x >> deploy/README; rm -rf deploy; mv src s2; mv deploy d2
ln -s .. src/up; echo x > src/up/top2; mkdir -p src/gen/x; echo x > src/gen/y
cd src && mv ../deploy ./d3; cd ..
echo ok > src/ok
echo done
`

// policyAllowBypass: under --allow-write /src/ (with /src/gen/ denied
// inside it), only src but src/gen changes — landlock included, which holds
// write.allow (but not the deny inside it, which it refuses).
func policyAllowBypass(t *testing.T, bin, driver string, cred *syscall.Credential) {
	top, ws := policyWorkspace(t, map[string]string{"src/main.go": "package main\n", "deploy/README": "deploy\n", "src/gen/g.go": "package gen\n"})
	before := snapshotTree(t, ws)
	args := []string{"-C", ws, "--allow-write", "/src/", "--deny-write", "/src/gen/", "exec", "--driver", driver, "--timeout", "60s"}
	if driver == "landlock" {
		out, err := exec.Command(bin, append(args, "--", "true")...).CombinedOutput()
		if !strings.Contains(string(out), "the landlock driver cannot guard policy") {
			t.Errorf("landlock ran with a write.deny inside a write.allow: %v %s", err, out)
		}
		args = slices.Delete(args, 4, 6)
	}
	if img := os.Getenv("HUNK_TEST_IMAGE"); driver == "docker" && img != "" {
		args = append(args, "--image", img)
	}
	c := exec.Command(bin, append(args, "--sh", policyAllowAttack)...)
	c.Env = append(os.Environ(), "HOME="+top)
	if cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, _ := c.CombinedOutput()
	if !strings.Contains(string(out), "done\n") {
		t.Fatalf("the attack did not run to its end:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "src", "ok")); err != nil || string(b) != "ok\n" {
		t.Errorf("the allowed directory was not writable: %q %v\n%s", b, err, out)
	}
	// The root's modification time changes only if an entry was made or
	// removed: it is part of the snapshot. What the command copied into
	// src is its own.
	gen := driver != "landlock"
	if after := outsideSrc(snapshotTree(t, ws), gen); after != outsideSrc(before, gen) {
		t.Errorf("outside the allowed directory:\n%s\nwas:\n%s\n%s", after, before, out)
	}
}

// outsideSrc keeps the lines of a snapshot outside /src (but /src/gen).
// (without gen: no /src/gen/ rule).
func outsideSrc(snap string, gen bool) string {
	var keep []string
	for _, l := range strings.Split(snap, "\n") {
		if !strings.HasPrefix(l, "/src") || gen && strings.HasPrefix(l, "/src/gen") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// policyWorkspace makes a workspace (top/ws) of files, every directory
// writable by anyone: an unprivileged command may change everything the
// policy allows.
func policyWorkspace(t *testing.T, files map[string]string) (top, ws string) {
	top, err := os.MkdirTemp("", "hunk-policy-") // t.TempDir's parent is private to root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	ws = filepath.Join(top, "ws")
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o777)
		}
		return nil
	})
	return top, ws
}

// TestOwnStateHidden: hunk's state — here the history, holding the old
// content of a file the policy keeps from being read — is hidden from a
// command under every driver, wherever it lies: outside the workspace (the
// host's files, which bwrap shows read-only and landlock lets be read), and
// inside it (a workspace that is the home directory).
func TestOwnStateHidden(t *testing.T) {
	bin := buildHunk(t)
	for _, driver := range []string{"bwrap", "landlock", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			// Outside /tmp, which bwrap replaces with an empty one.
			home, err := os.MkdirTemp("/var/tmp", "hunk-own-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			ws := filepath.Join(home, "proj")
			must(t, os.MkdirAll(ws, 0o755))
			env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "XDG_STATE_HOME=", "HUNK_CONFIG=",
				"HUNK_EXEC_IMAGE="+sandboxtest.ImageName())
			run := func(dir string, args ...string) (string, error) {
				c := exec.Command(bin, append([]string{"-C", dir}, args...)...)
				c.Env = env
				out, err := c.CombinedOutput()
				return string(out), err
			}
			for _, content := range []string{"SECRET-OLD-ENV", "new"} {
				if out, err := run(ws, "write", ".env", "--content", content); err != nil {
					t.Fatalf("write: %v\n%s", err, out)
				}
			}
			look := "grep -r SECRET " + home + "/.local 2>&1; cat " + home + "/.local/state/hunk/history/*/pack* 2>&1; ls -A " + home + "/.local/state/hunk 2>&1; echo done"
			out, _ := run(ws, "--deny-read", "/.env", "exec", "--driver", driver, "--sh", look)
			if driver == "landlock" {
				// Landlock cannot hold a read.deny rule: the run is refused,
				// and without the rule it must still not see the history.
				out, _ = run(ws, "exec", "--driver", driver, "--sh", look)
			}
			listed := regexp.MustCompile(`(?m)^(history|placeholders)$`)
			if driver == "landlock" {
				// Landlock grants listing a directory to everything below
				// it: names show, contents never (docs/exec.md).
				listed = regexp.MustCompile(`$^`)
			}
			if strings.Contains(out, "SECRET") || listed.MatchString(out) {
				t.Errorf("the command saw hunk's state outside the workspace:\n%s", out)
			}
			if !strings.Contains(out, "done") {
				t.Fatalf("the command did not run:\n%s", out)
			}
			// The home directory as the workspace: the state is inside it.
			if driver == "landlock" {
				if out, err := run(home, "exec", "--driver", driver, "--", "true"); err == nil || !strings.Contains(out, "cannot guard own-state") {
					t.Errorf("landlock ran over a workspace holding hunk's state: %v\n%s", err, out)
				}
				return
			}
			out, _ = run(home, "exec", "--driver", driver, "--sh", "grep -r SECRET .local 2>&1; ls -A .local/state/hunk 2>&1; echo done")
			if strings.Contains(out, "SECRET") || listed.MatchString(out) || !strings.Contains(out, "done") {
				t.Errorf("the command saw hunk's state inside the workspace:\n%s", out)
			}
		})
	}
}
