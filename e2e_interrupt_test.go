//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// TestExecInterruptKillsTheTree: hunk exec interrupted (SIGINT, SIGTERM,
// SIGHUP) stops the command's whole process tree — setsid'd and background
// grandchildren included — and exits; and an interrupt that arrives at any
// moment of hunk's start, before or after the command is forked, never leaves
// a process of the run behind.
func TestExecInterruptKillsTheTree(t *testing.T) {
	for _, driver := range []string{"none", "landlock", "bwrap"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
				ws := t.TempDir()
				m1, m2 := marker(1, i), marker(2, i)
				cmd := exec.Command("hunk", "-C", ws, "exec", "--driver", driver,
					"--sh", "setsid sleep "+m1+" & sleep "+m2+" & touch ready; wait")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				startReady(t, cmd, ws)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				waitExit(t, cmd, sig.String())
				noProcs(t, m1, m2)
				// As a shell reports it: 128+N, and a message (Ctrl-C: 130).
				if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
					t.Errorf("%v: hunk exited %d, want %d", sig, got, want)
				}
				if want := []string{"SIGINT", "SIGTERM", "SIGHUP"}[i]; !strings.Contains(stderr.String(), "hunk: error: Interrupted ("+want+")") {
					t.Errorf("%v: stderr %q, want the interruption said", sig, stderr.String())
				}
			}
			// Interrupts at every moment of start-up: whatever had started
			// is gone when hunk has exited.
			for i := 0; i < 20; i++ {
				ws := t.TempDir()
				m := marker(3, i)
				cmd := exec.Command("hunk", "-C", ws, "exec", "--driver", driver, "--sh", "setsid sleep "+m+" & wait")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(i) * 500 * time.Microsecond)
				_ = cmd.Process.Signal(syscall.SIGTERM)
				waitExit(t, cmd, fmt.Sprintf("SIGTERM after %v", time.Duration(i)*500*time.Microsecond))
				noProcs(t, m)
			}
		})
	}
}

// waitExit waits for an interrupted hunk to exit: well within the grace
// period it gives the command, plus the final kill.
func waitExit(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("%s: hunk exited 0, want the interrupted command's status", what)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s: hunk did not exit", what)
	}
}

// TestExecTimeoutWithStalledOutput: hunk's own stdout a pipe nobody reads (a
// harness that waits before reading) must not stop the timeout: the command
// is killed on time, and hunk finishes once its output is taken.
func TestExecTimeoutWithStalledOutput(t *testing.T) {
	for i, driver := range []string{"none", "landlock", "bwrap"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			m := marker(4, i)
			cmd := exec.Command("hunk", "-C", t.TempDir(), "exec", "--driver", driver, "--timeout", "2s", "--max-output", "0", "--sh", "exec yes "+m)
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			deadline := time.Now().Add(15 * time.Second)
			for len(procsMatching(m)) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // until it runs
			}
			for len(procsMatching(m)) > 0 {
				if time.Now().After(deadline) {
					pr.Close()
					cmd.Process.Kill()
					t.Fatalf("the command outlived its 2s timeout while hunk's stdout was not read: %v", procsMatching(m))
				}
				time.Sleep(20 * time.Millisecond)
			}
			pr.Close()
			waitExit(t, cmd, "stalled stdout")
		})
	}
}

// TestExecInterruptDocker: hunk exec under docker, interrupted, ends as
// under the other drivers: exit 128+N as a shell reports it (SIGTERM, a
// CI's cancel: 143, not 130), and the signal named.
func TestExecInterruptDocker(t *testing.T) {
	needDriver(t, "docker")
	for sig, name := range map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"} {
		ws := t.TempDir()
		cmd := exec.Command("hunk", "-C", ws, "exec", "--driver", "docker", "--sh", "touch ready; sleep 300")
		cmd.Env = append(os.Environ(), "HUNK_EXEC_IMAGE="+sandboxtest.ImageName())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for _, err := os.Stat(filepath.Join(ws, "ready")); err != nil; _, err = os.Stat(filepath.Join(ws, "ready")) {
			select {
			case <-done:
				t.Fatalf("hunk ended before the command started: %s", stderr.String())
			case <-time.After(20 * time.Millisecond): // a container's start, however slow the machine
			}
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		<-done
		if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
			t.Errorf("%s: hunk exited %d, want %d (%s)", name, got, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "hunk: error: Interrupted ("+name+")") {
			t.Errorf("%s: stderr %q, want the interruption said", name, stderr.String())
		}
	}
}
