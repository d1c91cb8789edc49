//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// Every test here runs the real drivers. A driver that does not work on this
// machine is skipped loudly, unless HUNK_REQUIRE_DRIVERS (comma-separated,
// set by CI) names it: then the test fails.

func required(name string) bool { return sandboxtest.Required("HUNK_REQUIRE_DRIVERS", name) }

// isolating are the drivers that confine; each test runs under each of them.
var isolating = []string{"bwrap", "landlock"}

// forDrivers runs f for every isolating driver that works here.
func forDrivers(t *testing.T, f func(t *testing.T, d Driver)) {
	for _, name := range isolating {
		t.Run(name, func(t *testing.T) {
			d := Lookup(name)
			c := d.Probe(context.Background())
			if !c.Available {
				if required(name) {
					t.Fatalf("driver %s is required (HUNK_REQUIRE_DRIVERS) but not available: %s", name, c.Reason)
				}
				sandboxtest.Skip(t, "driver %s is not available here: %s", name, c.Reason)
			}
			f(t, d)
		})
	}
}

// needRoot skips (or, for a required driver, fails) tests that need cgroups.
func needCgroups(t *testing.T, d Driver, what string) {
	mem, pids, _ := cgroupCaps()
	if !mem || !pids {
		if required(d.Name()) && os.Geteuid() == 0 {
			t.Fatalf("%s: cgroups are not usable although running as root", what)
		}
		sandboxtest.Skip(t, "%s needs writable cgroups (root)", what)
	}
}

func newSpec(t *testing.T, argv ...string) Spec {
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	return Spec{
		Argv:      argv,
		Workspace: ws,
		Workdir:   ws,
		Env:       []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LANG=C"},
		Timeout:   30 * time.Second,
		MaxOutput: 1 << 20,
	}
}

func mustRun(t *testing.T, d Driver, spec Spec) Result {
	t.Helper()
	r, err := d.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r.Driver != d.Name() {
		t.Fatalf("Result.Driver = %q, want %q", r.Driver, d.Name())
	}
	return r
}

func sh(t *testing.T, script string) Spec { return newSpec(t, "/bin/sh", "-c", script) }

func TestExitCodes(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		for _, tc := range []struct {
			name string
			spec func(t *testing.T) Spec
			want int
		}{
			{"zero", func(t *testing.T) Spec { return sh(t, "exit 0") }, 0},
			{"one", func(t *testing.T) Spec { return sh(t, "exit 1") }, 1},
			{"forty-two", func(t *testing.T) Spec { return sh(t, "exit 42") }, 42},
			{"not found", func(t *testing.T) Spec { return newSpec(t, "no-such-command-hunk") }, 127},
			{"not executable", func(t *testing.T) Spec {
				s := newSpec(t, "./script.sh")
				if err := os.WriteFile(filepath.Join(s.Workspace, "script.sh"), []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return s
			}, 126},
			{"killed by signal", func(t *testing.T) Spec { return sh(t, "kill -9 $$") }, 137},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := mustRun(t, d, tc.spec(t))
				if r.ExitCode != tc.want {
					t.Fatalf("exit code %d, want %d; stderr %q", r.ExitCode, tc.want, r.Stderr)
				}
			})
		}
	})
}

func TestFilesystem(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		outside := t.TempDir()
		s := sh(t, fmt.Sprintf("echo in > inside.txt && echo wrote-inside; echo out > %s/outside.txt && echo wrote-outside; echo etc > /etc/hunk-test-escape && echo wrote-etc; echo tmp > /tmp/x && cat /tmp/x", outside))
		r := mustRun(t, d, s)
		if !bytes.Contains(r.Stdout, []byte("wrote-inside")) {
			t.Errorf("write inside the workspace failed: %s %s", r.Stdout, r.Stderr)
		}
		if b, err := os.ReadFile(filepath.Join(s.Workspace, "inside.txt")); err != nil || string(b) != "in\n" {
			t.Errorf("inside.txt = %q, %v", b, err)
		}
		if bytes.Contains(r.Stdout, []byte("wrote-outside")) || bytes.Contains(r.Stdout, []byte("wrote-etc")) {
			t.Errorf("a write outside the workspace succeeded: %s", r.Stdout)
		}
		if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
			t.Errorf("outside.txt was created")
		}
		if _, err := os.Stat("/etc/hunk-test-escape"); err == nil {
			os.Remove("/etc/hunk-test-escape")
			t.Errorf("/etc/hunk-test-escape was created")
		}

		ro := sh(t, "echo x > f && echo wrote")
		ro.ReadOnly = true
		r = mustRun(t, d, ro)
		if bytes.Contains(r.Stdout, []byte("wrote")) || r.ExitCode == 0 {
			t.Errorf("--read-only: write succeeded: %s", r.Stdout)
		}
	})
}

func TestNetwork(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		sandboxtest.Skip(t, "needs bash for /dev/tcp")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sandboxtest.Serve(ln, nil)
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	forDrivers(t, func(t *testing.T, d Driver) {
		r := mustRun(t, d, newSpec(t, "/bin/bash", "-c", script))
		if r.ExitCode == 0 || bytes.Contains(r.Stdout, []byte("connected")) {
			t.Errorf("connected to 127.0.0.1:%d without --network: %s %s", port, r.Stdout, r.Stderr)
		}
		s := newSpec(t, "/bin/bash", "-c", script)
		s.Network.Host = true
		r = mustRun(t, d, s)
		if r.ExitCode != 0 || !bytes.Contains(r.Stdout, []byte("connected")) {
			t.Errorf("could not connect with --network: exit %d %s %s", r.ExitCode, r.Stdout, r.Stderr)
		}
	})
}

// TestDockerSocket checks that a unix socket under /run (a stand-in for the
// Docker socket, and the real one when present) cannot be reached, even
// with --network.
func TestDockerSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		sandboxtest.Skip(t, "creating a socket under /run needs root")
	}
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		sandboxtest.Skip(t, "needs perl as a unix-socket client")
	}
	path := fmt.Sprintf("/run/hunk-test-%d.sock", os.Getpid())
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sandboxtest.Serve(ln, nil)
	sockets := []string{path}
	for _, p := range []string{"/run/docker.sock", "/var/run/docker.sock"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			sockets = append(sockets, p)
		}
	}
	// The client works: outside the sandbox, it connects.
	client := `use IO::Socket::UNIX; IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!\n"; print "connected\n";`
	if out, err := runHost("/usr/bin/perl", "-e", client, path); err != nil || !strings.Contains(out, "connected") {
		t.Fatalf("the client cannot connect even outside the sandbox: %v %s", err, out)
	}
	forDrivers(t, func(t *testing.T, d Driver) {
		for _, sock := range sockets {
			for _, network := range []bool{false, true} {
				for _, ws := range []string{"", "/"} {
					s := newSpec(t, "/usr/bin/perl", "-e", client, sock)
					s.Network.Host = network
					if ws != "" {
						// A workspace above /run must not bring it back.
						s.Workspace, s.Workdir = ws, ws
					}
					r := mustRun(t, d, s)
					if r.ExitCode == 0 || bytes.Contains(r.Stdout, []byte("connected")) {
						t.Errorf("reached %s (network=%v, workspace %s): %s %s", sock, network, s.Workspace, r.Stdout, r.Stderr)
					}
				}
			}
		}
	})
}

func TestEnvironment(t *testing.T) {
	t.Setenv("HUNK_TEST_SECRET", "leaked")
	forDrivers(t, func(t *testing.T, d Driver) {
		s := newSpec(t, "/usr/bin/env")
		s.Env = append(s.Env, "EXTRA=1")
		r := mustRun(t, d, s)
		var keys []string
		for _, l := range strings.Split(strings.TrimSpace(string(r.Stdout)), "\n") {
			k, _, _ := strings.Cut(l, "=")
			keys = append(keys, k)
		}
		want := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "EXTRA": true}
		switch d.Name() {
		case "landlock":
			want["TMPDIR"] = true // its private temporary directory
		case "bwrap":
			want["PWD"] = true // set by bwrap --chdir
		}
		for _, k := range keys {
			if !want[k] {
				t.Errorf("unexpected variable %s in %q", k, r.Stdout)
			}
			delete(want, k)
		}
		if len(want) > 0 {
			t.Errorf("missing variables %v in %q", want, r.Stdout)
		}
	})
}

// survivors lists the processes whose command line contains marker.
func survivors(marker string) []string {
	var out []string
	for _, p := range processTable() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
		if err == nil && !p.zombie && bytes.Contains(b, []byte(marker)) {
			out = append(out, fmt.Sprintf("%d: %q", p.pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

func TestTimeoutKillsTree(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		marker := fmt.Sprintf("%d", 90000+os.Getpid()%9999)
		// A setsid'd grandchild, a double-forked daemon, and a shell that
		// ignores SIGTERM: all must be gone when Run returns.
		s := sh(t, fmt.Sprintf("echo started; setsid sleep %[1]s.1 & (setsid sh -c 'sleep %[1]s.2' &); trap '' TERM; sleep %[1]s.3", marker))
		s.Timeout = 3 * time.Second
		start := time.Now()
		r := mustRun(t, d, s)
		if !r.TimedOut || r.ExitCode != 124 {
			t.Errorf("TimedOut=%v ExitCode=%d, want true 124", r.TimedOut, r.ExitCode)
		}
		if !bytes.Contains(r.Stdout, []byte("started")) {
			t.Errorf("output so far lost: %q", r.Stdout)
		}
		if el := time.Since(start); el > 3*time.Second+KillGrace+5*time.Second {
			t.Errorf("took %v", el)
		}
		if s := survivors(marker); len(s) > 0 {
			t.Errorf("survivors after timeout: %v", s)
		}
	})
}

func TestBackgroundKilledAtExit(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		marker := fmt.Sprintf("%d", 80000+os.Getpid()%9999)
		r := mustRun(t, d, sh(t, fmt.Sprintf("setsid sleep %s.1 > /dev/null 2>&1 & echo done", marker)))
		if r.ExitCode != 0 {
			t.Errorf("exit %d", r.ExitCode)
		}
		if s := survivors(marker); len(s) > 0 {
			t.Errorf("a background process outlived the command: %v", s)
		}
	})
}

func TestForkBombContained(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		needCgroups(t, d, "--pids")
		marker := fmt.Sprintf("hunk-bomb-%d", os.Getpid())
		s := newSpec(t, "/bin/sh", "-c", "b() { b | b & }; b; sleep 3", marker)
		s.Pids = 32
		s.Timeout = 10 * time.Second
		r := mustRun(t, d, s)
		t.Logf("exit %d, stderr %d bytes", r.ExitCode, len(r.Stderr))
		if !bytes.Contains(bytes.ToLower(r.Stderr), []byte("fork")) {
			t.Errorf("the bomb never hit the limit? stderr %q", r.Stderr[:min(len(r.Stderr), 300)])
		}
		if s := survivors(marker); len(s) > 0 {
			t.Errorf("fork bomb survivors: %d, e.g. %v", len(s), s[0])
		}
	})
}

func TestMemoryLimit(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		needCgroups(t, d, "--memory")
		s := newSpec(t, "tail", "/dev/zero") // buffers a line that never ends
		s.Memory = 64 << 20
		s.Timeout = 30 * time.Second
		r := mustRun(t, d, s)
		if !r.OOMKilled || r.ExitCode != 137 {
			t.Errorf("OOMKilled=%v ExitCode=%d, want true 137; stderr %q", r.OOMKilled, r.ExitCode, r.Stderr)
		}
		if r.TimedOut {
			t.Errorf("timed out instead of being killed for memory")
		}
	})
}

func TestOutputCapped(t *testing.T) {
	forDrivers(t, func(t *testing.T, d Driver) {
		s := sh(t, "echo first; head -c 1073741824 /dev/zero; echo; echo last")
		s.MaxOutput = 64 << 10
		s.Timeout = 5 * time.Minute
		start := time.Now()
		r := mustRun(t, d, s)
		t.Logf("1 GiB through the capture in %v", time.Since(start))
		if r.ExitCode != 0 || !r.Truncated {
			t.Fatalf("exit %d truncated %v", r.ExitCode, r.Truncated)
		}
		if len(r.Stdout) > 64<<10+100 {
			t.Errorf("kept %d bytes", len(r.Stdout))
		}
		if !bytes.HasPrefix(r.Stdout, []byte("first\n")) || !bytes.HasSuffix(r.Stdout, []byte("\nlast\n")) || !bytes.Contains(r.Stdout, []byte("bytes omitted")) {
			t.Errorf("head/marker/tail wrong: %q … %q", r.Stdout[:20], r.Stdout[len(r.Stdout)-20:])
		}
	})
}

func TestLimitRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root every limit is enforceable here")
	}
	forDrivers(t, func(t *testing.T, d Driver) {
		s := sh(t, "true")
		s.Memory = 64 << 20
		_, err := d.Run(context.Background(), s)
		if _, ok := err.(*LimitError); !ok {
			t.Fatalf("err = %v, want *LimitError", err)
		}
	})
}

func runHost(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Lookup("none").Run(ctx, Spec{Argv: argv, Env: []string{"PATH=/usr/bin:/bin"}, Workspace: "/", Workdir: "/", Timeout: 10 * time.Second})
	return string(r.Stdout) + string(r.Stderr), err
}

// TestUnprivileged reruns the main tests as an unprivileged user (nobody)
// when running as root, so that CI, which runs as root, also covers bwrap in
// a user namespace and the refusal of limits that need cgroups.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		sandboxtest.Skip(t, "needs setpriv (util-linux)")
	}
	dir, err := os.MkdirTemp("", "hunk-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestExitCodes|TestFilesystem|TestNetwork|TestEnvironment|TestTimeoutKillsTree|TestLimitRefused)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "HUNK_REQUIRE_DRIVERS=" + os.Getenv("HUNK_REQUIRE_DRIVERS")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "--- ") {
			t.Log(strings.TrimSpace(l))
		}
	}
}
