//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestVerifyKilledMidCheck: hunk killed (SIGKILL) while a change's check
// runs leaves the change on disk and its journal in the history; the next
// change in the workspace takes it back first — the file as it was, the
// run saying so — and a run after that finds nothing more to do.
func TestVerifyKilledMidCheck(t *testing.T) {
	for _, driver := range []string{"none", "bwrap"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws := t.TempDir()
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			t.Setenv("HUNK_EXEC_DRIVER", driver)
			if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("hunk", "-C", ws, "write", "f.txt", "--content", "two\n", "--verify-sh", "touch ready; exec sleep 31")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			startReady(t, cmd, ws)
			if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "two\n" {
				t.Fatalf("while the check runs, f.txt is %q, want the change's", b)
			}
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			os.Remove(filepath.Join(ws, "ready")) // (the check's own write: not known to the journal)

			out, err := exec.Command("hunk", "-C", ws, "write", "g.txt", "--content", "g\n").CombinedOutput()
			if err != nil {
				t.Fatalf("the next change: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "whose check (touch ready; exec sleep 31) hunk was killed in") {
				t.Errorf("the next change says %q, want it to say it took the killed check's change back", out)
			}
			b, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
			fi, _ := os.Stat(filepath.Join(ws, "f.txt"))
			if string(b) != "one\n" || fi.Mode().Perm() != 0o640 {
				t.Errorf("f.txt is %q (%v), want %q (-rw-r-----): the killed check's change taken back", b, fi.Mode().Perm(), "one\n")
			}
			out, err = exec.Command("hunk", "-C", ws, "write", "g.txt", "--content", "g2\n").CombinedOutput()
			if err != nil || strings.Contains(string(out), "killed") {
				t.Errorf("a later change: %v, %q; want nothing more taken back", err, out)
			}
		})
	}
}

// TestVerifyChecksTypeScript: a configured tsc check (the TypeScript of
// testdata/mcpclient's npm packages) after a write reports tsc's finding
// with its file, line and column, the change kept; made the gate (verify
// checks), the same finding takes the change back.
func TestVerifyChecksTypeScript(t *testing.T) {
	modules := filepath.Join(filepath.Dir(mcpClientScript(t, "client.mjs")), "node_modules")
	for _, driver := range []string{"none", "bwrap"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			// The project's own TypeScript, in the workspace as npm puts it
			// (the checkout may lie where the sandbox hides: /tmp).
			os.MkdirAll(filepath.Join(ws, "node_modules"), 0o755)
			for _, pkg := range []string{"typescript", "@typescript"} {
				if out, err := exec.Command("cp", "-a", filepath.Join(modules, pkg), filepath.Join(ws, "node_modules")).CombinedOutput(); err != nil {
					t.Fatalf("copying %s: %v\n%s", pkg, err, out)
				}
			}
			tsc := "node_modules/typescript/bin/tsc"
			t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
			t.Setenv("HUNK_EXEC_DRIVER", driver)
			cfg := filepath.Join(dir, "hunk.yaml")
			os.WriteFile(cfg, []byte("checks:\n  \"**/*.ts\": [node, "+strconvQuote(tsc)+", --noEmit, \"{file}\"]\n"), 0o644)
			out, err := exec.Command("hunk", "-C", ws, "--config", cfg, "--json", "write", "a.ts", "--content", "const x: number = \"s\";\n").Output()
			if err != nil {
				t.Fatalf("write: %v\n%s", err, out)
			}
			if want := `"diagnostics":[{"file":"a.ts","line":1,"column":7,"message":"error TS2322: Type 'string' is not assignable to type 'number'."}]`; !strings.Contains(string(out), want) {
				t.Errorf("the write's result lacks tsc's finding %s:\n%s", want, out)
			}
			out, err = exec.Command("hunk", "-C", ws, "--config", cfg, "write", "b.ts", "--content", "let y: string = 1;\n", "--verify", "checks").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "the change was taken back") {
				t.Errorf("verify checks: %v, %s; want the change taken back", err, out)
			}
			if _, err := os.Stat(filepath.Join(ws, "b.ts")); err == nil {
				t.Error("b.ts is there: the gate kept a change tsc refused")
			}
		})
	}
}

// strconvQuote is s as a YAML double-quoted string.
func strconvQuote(s string) string { return strconv.Quote(s) }
