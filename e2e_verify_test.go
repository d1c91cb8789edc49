//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
