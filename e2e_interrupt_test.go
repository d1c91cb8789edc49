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

	"github.com/hunk-dev/hunk/internal/sandbox/docker"
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

// startReady starts cmd, a hunk exec whose command touches ready in the
// workspace ws once it runs, and waits for that.
func startReady(t *testing.T, cmd *exec.Cmd, ws string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// needDriver skips the test when the exec driver does not work here, and
// fails it when HUNK_REQUIRE_DRIVERS names the driver (see driverCondition).
func needDriver(t *testing.T, driver string) {
	t.Helper()
	ok, err := driverCondition("driver:" + driver)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		sandboxtest.Skip(t, "driver %s does not work here", driver)
	}
	if driver == "docker" {
		sandboxtest.DockerLock()
		sandboxtest.TestImage(t, &docker.Docker{})
	}
}

// marker is a sleep duration no other process uses: the test's own pid in it.
func marker(kind, i int) string {
	return fmt.Sprintf("737%d%d.%d", kind, os.Getpid(), i)
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

// noProcs fails unless no process has one of args as an argument (waiting a
// little for processes already killed to go).
func noProcs(t *testing.T, args ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var found []string
		for _, a := range args {
			found = append(found, procsMatching(a)...)
		}
		if len(found) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %s", strings.Join(found, "; "))
		}
		time.Sleep(20 * time.Millisecond)
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
