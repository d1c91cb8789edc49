//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/egress"
	"golang.org/x/sys/unix"
)

func init() { Register("bwrap", func() Driver { return bwrapDriver{} }) }

// bwrapDriver runs the command under bubblewrap: new pid, ipc, uts (and,
// unless --network, net) namespaces, a user namespace when not root; the
// host filesystem read-only, the workspace bound read-write (read-only with
// --read-only), a private /tmp, /run and /var/run hidden (no Docker socket),
// a minimal /dev, a fresh /proc; --die-with-parent and --new-session.
type bwrapDriver struct{}

func (bwrapDriver) Name() string { return "bwrap" }

// bwrapPath finds bubblewrap (once per process).
var bwrapPath = sync.OnceValues(func() (string, error) { return exec.LookPath("bwrap") })

// Probe checks cheaply (no process started) that bubblewrap is installed and
// that, when not root, user namespaces are allowed. Test goes further.
func (d bwrapDriver) Probe(ctx context.Context) Caps { return d.probe(true) }

// probe is Probe, the cgroup capabilities only when limits is set.
func (bwrapDriver) probe(limits bool) Caps {
	c := Caps{Timeout: true}
	if limits {
		c.Memory, c.Pids, c.CPUs = cgroupCaps()
	}
	if _, err := bwrapPath(); err != nil {
		c.Reason = "bubblewrap is not installed (apt-get install bubblewrap)"
		return c
	}
	if !isRoot() {
		if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
			c.Reason = "user namespaces are disabled (user.max_user_namespaces = 0)"
			return c
		}
		if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
			c.Reason = "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"
			return c
		}
	}
	c.Available, c.Filesystem, c.Network, c.Egress = true, true, true, DoorBinary != nil
	// A pid namespace, --die-with-parent, --new-session, hunk's seccomp
	// filter; the host's unix sockets bound when the run starts covered.
	c.SetGuards(map[string]bool{
		GuardProcesses: true, GuardProcessList: true, GuardSockets: true, GuardMetadata: true, GuardSetuid: true, GuardGit: true, GuardOwnState: true, GuardPolicy: true, GuardPrivileges: true, GuardKeyring: true,
		GuardTerminal: true, GuardDescriptors: true, GuardCleanup: true,
	})
	c.Reason = "namespaces (pid, net, ipc, uts, mount"
	if !isRoot() {
		c.Reason += ", user"
	}
	c.Reason += ")"
	return c
}

// Test starts a sandbox running true, proving that bubblewrap works here.
func (d bwrapDriver) Test(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "hunk-bwrap-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r, err := d.Run(ctx, Spec{Argv: []string{"true"}, Workspace: dir, Workdir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxOutput: 4096})
	if err != nil {
		return err
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("bwrap true exited %d: %s", r.ExitCode, bytes.TrimSpace(r.Stderr))
	}
	return nil
}

// rootCaps are the capabilities a root command keeps inside the sandbox:
// Docker's default set without CAP_MKNOD, CAP_NET_RAW and CAP_SETFCAP (file
// capabilities on a workspace file would outlive the run). CAP_SYS_ADMIN in
// particular is gone, so the read-only mounts and the hidden /run stay so.
var rootCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_SETGID",
	"CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// bwrapMount appends m as bubblewrap's arguments.
func bwrapMount(a []string, m Mount) []string {
	switch {
	case m.Mode == MountHidden && m.Dir:
		return append(a, "--tmpfs", m.Path, "--remount-ro", m.Path)
	case m.Mode == MountHidden:
		return append(a, "--ro-bind", emptyOrNull(), m.Path)
	case m.Mode == MountReadOnly:
		return append(a, "--ro-bind", m.Path, m.Path)
	}
	return append(a, "--bind", m.Path, m.Path)
}

// emptyOrNull is the file bwrap covers a hidden file with: an empty
// regular one (emptyFile), so that it reads as empty; /dev/null where that
// cannot be made (it then gives EACCES: bwrap binds without devices).
func emptyOrNull() string {
	if p, err := emptyFile(); err == nil {
		return p
	}
	return "/dev/null"
}

// BwrapArgs returns bubblewrap's arguments (without the program name) for
// spec: the isolation, then "--" and the command. statusFD is the
// descriptor bubblewrap reports the command's exit code on, seccompFD the
// one it reads the command's seccomp filter from (0: none).
func BwrapArgs(spec Spec, statusFD, seccompFD int) []string {
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts",
	}
	if !spec.Network.Host {
		a = append(a, "--unshare-net")
	}
	if !isRoot() {
		a = append(a, "--unshare-user")
	}
	hidden := []string{"/run"}
	if fi, err := os.Lstat("/var/run"); err == nil && fi.IsDir() {
		hidden = append(hidden, "/var/run")
	}
	a = append(a,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	)
	for _, h := range hidden {
		a = append(a, "--tmpfs", h)
	}
	if spec.ReadOnly || spec.AllowOnly {
		a = append(a, "--ro-bind", spec.Workspace, spec.Workspace)
	} else {
		a = append(a, "--bind", spec.Workspace, spec.Workspace)
	}
	for _, p := range spec.RO {
		a = append(a, "--ro-bind", p, p)
	}
	for _, p := range spec.RW {
		a = append(a, "--bind", p, p)
	}
	for _, m := range spec.Mounts() {
		a = bwrapMount(a, m)
	}
	// A workspace above /run (/, /var) would bring it back: hide it again.
	for _, h := range hidden {
		if ws := strings.TrimSuffix(spec.Workspace, "/") + "/"; strings.HasPrefix(h+"/", ws) {
			a = append(a, "--tmpfs", h)
		}
	}
	a = bwrapHidden(a, spec)
	// Pathname unix sockets are reached through the filesystem, whatever
	// the network namespace: every socket of the host outside the places
	// replaced above and the workspace is covered by an empty file.
	keep := append([]string{spec.Workspace, "/tmp", "/dev", "/proc"}, hidden...)
	keep = append(append(keep, spec.RW...), spec.RO...) // asked for by name
	if spec.Cache != "" {
		keep = append(keep, spec.Cache)
	}
	for _, sock := range hostSockets(keep) {
		a = append(a, "--ro-bind", "/dev/null", sock)
	}
	a = bwrapEgress(a, spec)
	return bwrapProcess(a, spec, statusFD, seccompFD)
}

// bwrapHidden hides what the command must not see: an empty directory or
// file over each hidden path (what exists), unless asked for by name with
// --ro or --rw; and hunk's own state, wherever it is shown, empty and
// read-only once the build cache alone is bound again inside it.
func bwrapHidden(a []string, spec Spec) []string {
	for _, h := range spec.Hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil || Under(real, append(spec.RO, spec.RW...)) {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			a = append(a, "--tmpfs", real)
		} else if err == nil {
			a = append(a, "--ro-bind", emptyOrNull(), real)
		}
	}
	own := spec.OwnMounts()
	for _, m := range own {
		if m.Dir {
			a = append(a, "--tmpfs", m.Path)
		} else {
			a = bwrapMount(a, m)
		}
	}
	if spec.Cache != "" {
		a = append(a, "--bind", spec.Cache, spec.Cache)
	}
	for _, m := range own {
		if m.Dir {
			a = append(a, "--remount-ro", m.Path)
		}
	}
	return a
}

// bwrapProcess ends the arguments with the process's own: root's
// capabilities, the environment, the working directory, the status and
// seccomp descriptors, and the command.
func bwrapProcess(a []string, spec Spec, statusFD, seccompFD int) []string {
	if isRoot() {
		a = append(a, "--cap-drop", "ALL")
		for _, c := range rootCaps {
			a = append(a, "--cap-add", c)
		}
	}
	a = append(a, "--clearenv")
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			a = append(a, "--setenv", k, v)
		}
	}
	dir := spec.Workdir
	if dir == "" {
		dir = spec.Workspace
	}
	a = append(a, "--chdir", dir)
	if statusFD > 0 {
		a = append(a, "--json-status-fd", strconv.Itoa(statusFD))
	}
	if seccompFD > 0 {
		a = append(a, "--seccomp", strconv.Itoa(seccompFD))
	}
	a = append(a, "--")
	if e := spec.Egress; e != nil && !e.Inside {
		return append(a, egress.DoorArgv(e.Loops, spec.Argv)...)
	}
	return append(a, spec.Argv...)
}

func (d bwrapDriver) Run(ctx context.Context, spec Spec) (r Result, err error) {
	caps := d.probe(spec.limited())
	if !caps.Available {
		return Result{}, &UnavailableError{Driver: "bwrap", Reason: caps.Reason, Hint: "apt-get install bubblewrap, or --driver landlock"}
	}
	if err := applyLimits("bwrap", &spec, caps); err != nil {
		return Result{}, err
	}
	if spec.Network.Proxied() {
		e, err := StartEgress(&spec, "bwrap", isRoot() && egress.CanListenIn(), false)
		if err != nil {
			return Result{}, err
		}
		defer func() { r.Network = e.Stop() }()
	}
	r, err = d.run(ctx, spec)
	var ue *UnavailableError
	if errors.As(err, &ue) && (strings.Contains(ue.Reason, "Can't mkdir parents for") || strings.Contains(ue.Reason, "Can't create file at")) {
		// A host socket (or hidden path) vanished between the look at
		// /proc/net/unix and bubblewrap covering it: nothing of the
		// command ran; look again.
		return d.run(ctx, spec)
	}
	return r, err
}

// run is one start of bubblewrap for spec (limits already applied).
func (d bwrapDriver) run(ctx context.Context, spec Spec) (Result, error) {
	bwrap, _ := bwrapPath()
	dir := spec.Workdir
	if dir == "" {
		dir = spec.Workspace
	}
	// bubblewrap reports a missing command like any failure of its own
	// (exit 1); decide 126/127 first. The host paths the sandbox sees are
	// the host's, but for /tmp, /run and /dev.
	found, code, msg := lookPath(spec.Argv[0], envValue(spec.Env, "PATH"), dir)
	if code != 0 {
		return notStarted("bwrap", spec, code, msg), nil
	}
	if msg := bwrapHides(spec, found); msg != "" {
		return notStarted("bwrap", spec, exitNotFound, msg), nil
	}

	cg, err := newCgroup(spec, false)
	if err != nil {
		return Result{}, err
	}
	defer cg.destroy()

	var sp [2]int
	if err := unix.Pipe2(sp[:], unix.O_CLOEXEC); err != nil {
		return Result{}, err
	}
	statusR := sp[0]
	defer unix.Close(statusR)
	if err := unix.SetNonblock(statusR, true); err != nil {
		unix.Close(sp[1])
		return Result{}, err
	}
	filter, err := seccompFile(seccompPolicy{})
	if err != nil {
		unix.Close(sp[1])
		return Result{}, err
	}
	args := BwrapArgs(spec, 3, 4)
	// No init: bubblewrap is forked straight into the run's cgroups, so
	// everything it forks is in them.
	p := command(bwrap, append([]string{bwrap}, args...), nil, dir)
	p.extra = []int{sp[1], filter} // closed by supervise once bubblewrap has started
	status := &bwrapStatus{code: -1}
	block := newBwrapBlock(spec, p, status)
	defer block.close()

	// bubblewrap reports the command's exit as soon as it has it; its pid
	// namespace's init (its child) then dies with it (--die-with-parent)
	// and, an orphan, comes back to hunk: wait for it, and the namespace is
	// gone — nothing else of the run can be left.
	afterExit := func() {
		pid := int(status.childPid.Load())
		if pid <= 0 {
			return
		}
		// Only a child of hunk's, which nobody else can reap, is safe to
		// signal by pid; one bubblewrap reaped itself took its namespace
		// with it.
		var info unix.Siginfo
		if unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil) == unix.ECHILD {
			return
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		reapWithin(pid, 5*time.Second) // beyond that, the full search takes over
	}

	// Its processes are below bubblewrap and its namespace's init: the run
	// is attributed, and may run beside others.
	roots := func() []int { return []int{int(status.childPid.Load())} }
	opts := superviseOpts{afterExit: afterExit, extra: []extraStream{{fd: statusR, w: status}}, attributed: true, roots: roots}
	st := NewStreams(spec)
	out, err := supervise(ctx, spec, p, cg, st, opts)
	if err == nil {
		err = block.err
	}
	if err != nil {
		return Result{}, &UnavailableError{Driver: "bwrap", Reason: err.Error()}
	}
	status.flush()
	code = status.code
	if code < 0 && !out.TimedOut && !out.Canceled {
		st.Stderr.Close()
		msg := strings.TrimSpace(string(st.Stderr.Bytes()))
		if c, m, ok := execFailure(msg); ok {
			// The sandbox started; the command could not: the shell's code,
			// never another driver.
			return notStarted("bwrap", spec, c, m), nil
		}
		if msg == "" {
			msg = fmt.Sprintf("bwrap exited %d", out.ExitCode)
		}
		return Result{}, &UnavailableError{Driver: "bwrap", Reason: "the sandbox did not start: " + msg}
	}
	if code >= 0 {
		out.ExitCode = code
	}
	return finish("bwrap", out, cg, st), nil
}

// bwrapHides says why the program found at path (on the host) is not there
// inside bubblewrap's sandbox — under /tmp, /run or /dev, which the sandbox
// replaces with its own, or a path it hides — ("": it is there).
func bwrapHides(spec Spec, path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	shown := append(append([]string{spec.Workspace}, spec.RW...), spec.RO...)
	if Under(real, shown) {
		return ""
	}
	for _, d := range []string{"/tmp", "/run", "/var/run", "/dev"} {
		if Under(real, []string{d}) {
			return fmt.Sprintf("%s: not found in the sandbox: bwrap gives the command %s of its own, so %s of the host is not there; move it into the workspace, or show it with --ro %s",
				spec.Argv[0], d, real, real)
		}
	}
	if Under(real, append(spec.Hide, spec.Own...)) {
		return fmt.Sprintf("%s: not found in the sandbox: %s lies in a path hidden from the command", spec.Argv[0], real)
	}
	return ""
}

// execFailure reads bubblewrap's report that it could not execute the
// command ("bwrap: execvp PROG: ERR") as the shell's code and message.
func execFailure(stderr string) (int, string, bool) {
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "bwrap: execvp ")
		if !ok {
			continue
		}
		prog, why, _ := strings.Cut(rest, ": ")
		code := exitNotFound
		if strings.Contains(why, "Permission denied") || strings.Contains(why, "Is a directory") || strings.Contains(why, "Exec format error") {
			code = exitNotExecutable
		}
		return code, fmt.Sprintf("%s: %s (inside the sandbox)", prog, why), true
	}
	return 0, "", false
}

// reapWithin waits (on the calling thread, through a pidfd) for our child
// pid to exit, for at most limit, and reaps it.
func reapWithin(pid int, limit time.Duration) {
	var ws syscall.WaitStatus
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		deadline := time.Now().Add(limit)
		for {
			n, err := unix.Poll(pfd, int(time.Until(deadline)/time.Millisecond)+1)
			if n > 0 || (err != nil && err != unix.EINTR) || !time.Now().Before(deadline) {
				break
			}
		}
		unix.Close(fd)
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		return
	}
	// No pidfd (Linux before 5.3): wait on another thread, bounded.
	reaped := make(chan struct{})
	go func() {
		for {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		close(reaped)
	}()
	select {
	case <-reaped:
	case <-time.After(limit):
	}
}

// bwrapStatus parses bubblewrap's JSON status lines as they arrive (it is
// the writer supervise copies the status descriptor into): the command's
// exit code (-1 until reported) and the pid of bubblewrap's child, the pid
// namespace's init (0 until reported).
type bwrapStatus struct {
	code     int
	childPid atomic.Int64 // read by the clean-up's goroutine too
	partial  []byte
	onChild  func(pid int) // once the sandbox's namespaces exist (bwrapBlock)
}

func (s *bwrapStatus) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(s.partial[:i])
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

// flush parses a last line that had no newline.
func (s *bwrapStatus) flush() {
	if len(s.partial) > 0 {
		s.line(s.partial)
		s.partial = nil
	}
}

func (s *bwrapStatus) line(b []byte) {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return
	}
	if v, ok := m["exit-code"].(float64); ok {
		s.code = int(v)
	}
	if v, ok := m["child-pid"].(float64); ok && s.childPid.Load() == 0 {
		s.childPid.Store(int64(v))
		if s.onChild != nil {
			s.onChild(int(v))
		}
	}
}

// seccompFile returns the read end of a pipe holding p's filter as
// bubblewrap's --seccomp reads it (the raw BPF instructions).
func seccompFile(p seccompPolicy) (int, error) {
	prog := seccompProgram(p)
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.NativeEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.NativeEndian.AppendUint32(b, f.K)
	}
	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		return -1, err
	}
	defer unix.Close(pp[1])
	if _, err := unix.Write(pp[1], b); err != nil { // far below a pipe's capacity
		unix.Close(pp[0])
		return -1, err
	}
	return pp[0], nil
}

// hostSockets lists the pathname unix sockets bound on this host (in
// hunk's network namespace, from /proc/net/unix) that exist outside the
// given directories.
func hostSockets(except []string) []string {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasPrefix(f[7], "/") {
			continue // unbound, or abstract (@name): no file to cover
		}
		// Covered where it really is (/var/run is often a link to /run).
		path, err := filepath.EvalSymlinks(strings.Join(f[7:], " "))
		if err != nil || seen[path] || Under(path, except) {
			continue
		}
		seen[path] = true
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			out = append(out, path)
		}
	}
	return out
}
