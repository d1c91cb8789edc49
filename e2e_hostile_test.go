//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// TestExecHostileCommand runs testdata/hostile — a command that tries, as an
// attacker who knows hunk's code would, to trace, signal, inspect or steal
// from hunk and from a process outside the sandbox, to make device nodes,
// push input into the caller's terminal, change the host's name or clock,
// lower another process's limits, read the kernel keyring, use descriptors
// inherited from hunk's caller, and keep dangerous capabilities — under
// every isolating driver, through the real binary, as root and as an
// unprivileged user. Every attempt must be refused.
func TestExecHostileCommand(t *testing.T) {
	bin := buildHunk(t)
	hostile := buildHostile(t)
	users := testUsers()
	for _, driver := range []string{"landlock", "bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			for _, u := range users {
				if driver == "docker" && u.cred != nil {
					continue // the docker engine's socket is root's
				}
				t.Run(u.name, func(t *testing.T) { hostileRun(t, bin, hostile, driver, u.cred) })
			}
		})
	}
}

func hostileRun(t *testing.T, bin, hostile, driver string, cred *syscall.Credential) {
	top, err := os.MkdirTemp("", "hunk-hostile-") // t.TempDir's parent is private to root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	ws := filepath.Join(top, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(top, 0o755)
	os.Chmod(ws, 0o777)
	if err := copyFile(hostile, filepath.Join(ws, "hostile"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := fmt.Sprintf("hunk-secret-%d", os.Getpid())
	asUser := func(c *exec.Cmd) *exec.Cmd {
		if cred != nil {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return c
	}

	// A process outside the sandbox, of the same user, with a secret in its
	// environment.
	victim := asUser(exec.Command("sleep", "3600"))
	victim.Env = []string{"VICTIM_SECRET=" + secret}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()

	// A key in the user's keyring (the victim keeps the user's keyring alive).
	keyDesc := "hunk-test-" + secret
	if out, err := asUser(exec.Command(hostile, "-key", keyDesc, "addkey")).CombinedOutput(); err != nil {
		t.Fatalf("adding a key: %v: %s", err, out)
	}

	// hunk's controlling terminal is a pty; its stdin the pty too.
	ptm, pts := openPty(t)
	defer ptm.Close()
	defer pts.Close()

	// Descriptors hunk's caller leaves open: a file and a connected socket.
	leak, err := os.Open(hostile)
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	s0, s1 := os.NewFile(uintptr(sp[0]), "s0"), os.NewFile(uintptr(sp[1]), "s1")
	defer s0.Close()
	defer s1.Close()

	// A unix socket of the host outside the workspace, listening (an agent,
	// the Docker socket elsewhere than /run).
	// (Not under /tmp, which bwrap replaces anyway.)
	sockDir, err := os.MkdirTemp("/var/tmp", "hunk-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chmod(sockDir, 0o755)
	sockPath := filepath.Join(sockDir, "agent.sock")
	ln, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sockPath, 0o777)
	go acceptAndClose(ln)

	// A file of the host outside the workspace, the command's user's own:
	// its mode, owner, times and attributes must not change.
	hostFile := filepath.Join(sockDir, "host-file") // not under /tmp, which bwrap replaces
	if err := os.WriteFile(hostFile, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		os.Chown(hostFile, int(cred.Uid), int(cred.Gid))
	}
	before, err := os.Lstat(hostFile)
	if err != nil {
		t.Fatal(err)
	}

	// With --network too, the host's unix sockets stay out of reach.
	netArgs := []string{"-C", ws, "exec", "--driver", driver, "--network", "--timeout", "60s"}
	if img := os.Getenv("HUNK_TEST_IMAGE"); driver == "docker" && img != "" {
		netArgs = append(netArgs, "--image", img)
	}
	nc := exec.Command(bin, append(netArgs, "--", "./hostile", "-sock", sockPath, "unix")...)
	nc.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, _ := nc.CombinedOutput(); !strings.Contains(string(out), "blocked: connect") {
		t.Errorf("--network: %s", out)
	}

	args := []string{"-C", ws, "--json", "exec", "--driver", driver, "--timeout", "60s"}
	if driver == "docker" {
		if img := os.Getenv("HUNK_TEST_IMAGE"); img != "" {
			args = append(args, "--image", img)
		}
	}
	attacks := []string{"ptrace", "signal", "getfd", "environ", "vmread", "mknod", "tiocsti", "host", "prlimit", "keyring", "fds", "caps", "unix", "metadata"}
	want := 25
	// What a driver does not claim (--drivers) is not attacked: the claims
	// themselves are what is tested.
	guards := driverGuards(t, bin, driver)
	if guards["process-list"] {
		attacks = append(attacks, "cmdline")
		want += 2
	}
	if guards["setuid"] {
		attacks = append(attacks, "setuid")
		want += 5
	}
	// The workspace is a repository: its .git must come out as it went in.
	gitConfig := filepath.Join(ws, ".git", "config")
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gitConfig, []byte("[core]\n\tbare = false\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if guards["git"] {
		attacks = append(attacks, "git")
		want += 3
	} else {
		args = append(args, "--git-write") // a driver without the guard refuses to run in a repository
	}
	args = append(args, "--", "./hostile", "-victim", fmt.Sprint(victim.Process.Pid), "-key", keyDesc,
		"-sock", sockPath, "-file", hostFile)
	args = append(args, attacks...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HUNK_PARENT_SECRET="+secret, "HOME="+top)
	cmd.Stdin = pts
	cmd.ExtraFiles = []*os.File{leak, s1}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: cred}
	out, err := cmd.Output()
	var res struct {
		ExitCode int
		Details  struct {
			ExitCode int    `json:"exitCode"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		} `json:"details"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("hunk exec: %v; output %q", err, out)
	}
	stdout := res.Details.Stdout
	blocked := 0
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "ESCAPED"), strings.HasPrefix(l, "BROKEN"):
			t.Errorf("%s", l)
		case strings.HasPrefix(l, "blocked"):
			blocked++
			t.Logf("%s", l)
		}
	}
	// Every attack reported (parent and victim for the per-process ones).
	if blocked < want {
		t.Fatalf("only %d attempts reported; hunk's output %s", blocked, out)
	}
	if guards["git"] {
		if b, err := os.ReadFile(gitConfig); err != nil || string(b) != "[core]\n\tbare = false\n" {
			t.Errorf(".git/config changed: %q %v", b, err)
		}
		if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
			t.Errorf("a hook was planted in .git/hooks")
		}
	}
	after, err := os.Lstat(hostFile)
	if err != nil {
		t.Fatal(err)
	}
	bst, ast := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t)
	if after.Mode() != before.Mode() || ast.Uid != bst.Uid || ast.Gid != bst.Gid || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the host file changed: %v %d:%d %v, was %v %d:%d %v", after.Mode(), ast.Uid, ast.Gid, after.ModTime(), before.Mode(), bst.Uid, bst.Gid, before.ModTime())
	}
	if n, _ := unix.Getxattr(hostFile, "user.hunk", make([]byte, 16)); n > 0 {
		t.Errorf("the host file got an extended attribute")
	}
	if strings.Contains(stdout+res.Details.Stderr, secret) {
		t.Errorf("a secret of a process outside the sandbox reached the command's output")
	}
	// Nothing was pushed into the terminal.
	time.Sleep(100 * time.Millisecond)
	mfd := int(ptm.Fd()) // Fd makes the descriptor blocking: take it once
	_ = unix.SetNonblock(mfd, true)
	buf := make([]byte, 256)
	if n, _ := unix.Read(mfd, buf); n > 0 && strings.Contains(string(buf[:n]), "#") {
		t.Errorf("input was injected into hunk's terminal: %q", buf[:n])
	}
}

// driverGuards is what `hunk exec --drivers` says driver guards here.
func driverGuards(t *testing.T, bin, driver string) map[string]bool {
	out, err := exec.Command(bin, "--json", "exec", "--drivers").Output()
	if err != nil {
		t.Fatalf("hunk exec --drivers: %v", err)
	}
	var res struct {
		Details struct {
			Drivers []struct {
				Name   string   `json:"name"`
				Guards []string `json:"guards"`
			} `json:"drivers"`
		} `json:"details"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	g := map[string]bool{}
	for _, d := range res.Details.Drivers {
		if d.Name == driver {
			for _, n := range d.Guards {
				g[n] = true
			}
		}
	}
	return g
}

// openPty returns a new pseudo-terminal's master and slave.
func openPty(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		sandboxtest.Skip(t, "no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.Name(), 0o666)
	return m, s
}

// TestExecKilledHunkLeavesNothing: hunk itself killed with SIGKILL mid-run.
// Under bwrap the pid namespace dies with it, at once. Under landlock the
// command dies with hunk (its parent-death signal) and what it started in a
// new session is killed, and the run's private temporary directory removed,
// by the next run.
func TestExecKilledHunkLeavesNothing(t *testing.T) {
	bin := buildHunk(t)
	for i, driver := range []string{"landlock", "bwrap", "none", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws := t.TempDir()
			m1, m2 := marker(5, i), marker(6, i)
			cmd := exec.Command(bin, "-C", ws, "exec", "--driver", driver, "--timeout", "10m",
				"--sh", "setsid sleep "+m1+" & sleep "+m2+" & touch ready; wait")
			cmd.Env = append(os.Environ(), "HUNK_EXEC_IMAGE="+sandboxtest.ImageName(), "HUNK_CONFIG=/dev/null")
			startReady(t, cmd, ws)
			killed := cmd.Process.Pid
			if driver != "bwrap" {
				// A run that lasts is watched (one that ends within 50 ms
				// never starts the watchdog): wait until it is.
				waitWatchdog(t, killed)
			}
			cmd.Process.Kill()
			cmd.Wait()
			// Nothing left, and no later run needed for it: hunk's watchdog
			// cleans up once hunk is gone.
			if driver == "docker" {
				noContainer(t, ws)
			} else {
				noProcs(t, m1, m2)
			}
			if driver == "landlock" {
				tmp := filepath.Join(os.TempDir(), fmt.Sprintf("hunk-exec-%d", os.Geteuid()), fmt.Sprintf("%d-*", killed))
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					left, _ := filepath.Glob(tmp)
					if len(left) == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("the killed run's private temporary directory is still there: %v", left)
						break
					}
				}
			}
		})
	}
}

// waitWatchdog waits for hunk (pid) to have its watchdog running.
func waitWatchdog(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, p := range procsMatching("hunk-watchdog") {
			if child, _, _ := strings.Cut(p, ":"); parentOf(child) == pid {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("hunk never started its watchdog")
		}
	}
}

// parentOf is a process's parent pid (0 when it is gone).
func parentOf(pid string) int {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// noContainer waits (a little) for no container of the workspace ws to be
// left.
func noContainer(t *testing.T, ws string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=dev.hunk.workspace="+ws).Output()
		if err != nil {
			t.Fatalf("docker ps: %v", err)
		}
		if len(strings.TrimSpace(string(out))) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the killed run's container is still there: %s", out)
			return
		}
	}
}

// TestExecForkBombUnderProcessLimit: a fork bomb run by a user whose process
// limit (RLIMIT_NPROC) hunk shares. hunk must keep supervising — no crash
// for want of a thread —, stop the run at its timeout (124) and leave no
// process behind. The user is one of this run's own (loneUID): the limit
// counts every process of a user, so as nobody the bomb would share it
// with anything else nobody runs, another run of this test included.
func TestExecForkBombUnderProcessLimit(t *testing.T) {
	if os.Geteuid() != 0 {
		sandboxtest.Skip(t, "needs root to run as another user (root is exempt from RLIMIT_NPROC)")
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		sandboxtest.Skip(t, "needs prlimit (util-linux)")
	}
	bin := buildHunk(t)
	uid := loneUID()
	for i, driver := range []string{"landlock", "bwrap"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			top, err := os.MkdirTemp("", "hunk-bomb-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(top) })
			os.Chmod(top, 0o777)
			ws := filepath.Join(top, "ws") // HOME is top: a workspace holding hunk's own state is a case of its own
			if err := os.Mkdir(ws, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(ws, 0o777)
			script := "bomb-" + marker(7, i) + ".sh"
			if err := os.WriteFile(filepath.Join(ws, script), []byte("sleep 60 &\nb() { b | b & }\nb\nwait\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("prlimit", "--nproc=300:300", bin, "-C", ws, "exec", "--driver", driver,
				"--timeout", "5", "--max-output", "4K", "--", "sh", "./"+script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: 65534}}
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + top}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("hunk did not finish")
			}
			if code := cmd.ProcessState.ExitCode(); code != 124 {
				t.Errorf("hunk exited %d, want 124 (timed out); stderr %q", code, tail(stderr.String(), 600))
			}
			if !strings.Contains(stderr.String(), "Command timed out after 5 seconds") {
				t.Errorf("no timeout message; stderr %q", tail(stderr.String(), 600))
			}
			noProcs(t, "./"+script)
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestApplyPatchKilledMidCommit: hunk apply-patch killed with SIGKILL at
// every moment of a large patch (staging, commit, clean-up). The next hunk
// command in the workspace (here a read) finds the transaction's journal
// and finishes it or rolls it back: every file is then all old or all new,
// the tree as a whole is one or the other, and no temporary file is left.
func TestApplyPatchKilledMidCommit(t *testing.T) {
	bin := buildHunk(t)
	ws := t.TempDir()
	pf := killPatch(t, ws, 300)
	state := func() map[string]string { return treeContents(ws) }
	old := state()
	out, err := exec.Command(bin, "-C", ws, "apply-patch", pf).CombinedOutput()
	if err != nil {
		t.Fatalf("the patch does not apply: %v %s", err, out)
	}
	applied := state()
	restore := func() {
		for name := range applied {
			os.Remove(filepath.Join(ws, name))
		}
		for name, data := range old {
			os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644)
		}
	}
	restore()
	for i := 0; i < 24; i++ {
		cmd := exec.Command(bin, "-C", ws, "apply-patch", pf)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i) * 700 * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		// Any command opening the workspace recovers first.
		if out, err := exec.Command(bin, "-C", ws, "read", "--limit", "1", "f000.txt").CombinedOutput(); err != nil {
			t.Fatalf("read after the kill: %v %s", err, out)
		}
		got := state()
		for name := range got {
			if strings.HasPrefix(filepath.Base(name), ".hunk-") || strings.HasPrefix(name, ".hunk-txn") {
				t.Fatalf("after a kill at %v: %s left behind", time.Duration(i)*700*time.Microsecond, name)
			}
		}
		switch {
		case reflect.DeepEqual(got, old):
		case reflect.DeepEqual(got, applied):
			restore()
		default:
			t.Errorf("after a kill at %v the tree is half applied", time.Duration(i)*700*time.Microsecond)
			restore()
		}
	}
}
