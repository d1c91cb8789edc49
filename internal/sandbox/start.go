package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// How a run's command starts confined, without a second process of hunk.
//
// Landlock, seccomp filters and no_new_privs are properties of a thread, and
// a process forked by a thread inherits that thread's: its credentials (which
// hold the Landlock domain), its filter, its no_new_privs flag, and — under
// cgroup v1, where a thread can sit in its own cgroup — its cgroups. So a run
// is supervised from start to end by one goroutine locked to its OS thread
// (runtime.LockOSThread), which confines that thread alone (no TSYNC, so no
// other thread of hunk is touched; a locked thread runs nothing but its own
// goroutine, and the runtime creates new threads from a clean template
// thread, never from a locked one), forks the command from it, and then
// watches the command's pipes, its pidfd and the deadline with poll(2) on
// that same thread. The goroutine exits still locked and the runtime
// destroys the tainted thread with it: never unlocked, never reused. The
// forking thread living as long as the command also keeps the command's
// parent-death signal (Pdeathsig, bound to the forking thread) from firing
// early.
//
// One thread for everything is also what makes a run cheap: no goroutine per
// pipe, no hand-off between threads to start, wait and drain (on a small
// virtual machine each wake-up of another thread costs a good fraction of a
// millisecond), and no os/exec, whose first Start clones a throw-away child
// to test pidfd support.
//
// This replaces a re-executed init (hunk started again as /proc/self/exe to
// confine itself and exec the command), which cost a second start of the
// whole Go binary — runtime and package initialisation, 3–4 ms — on every
// run.

// threadSetup is what the start thread applies to itself before forking.
type threadSetup struct {
	landlock *landlockPolicy
	seccomp  *seccompPolicy
	cg       *cgroup
}

// setupError is a failure to confine the start thread (nothing ran).
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// apply confines the calling (locked) thread and places it, or arranges for
// the command to be placed, in the run's cgroups. Files it needs later are
// opened first: once confined, the thread cannot open them.
func (s *threadSetup) apply(sys *syscall.SysProcAttr) error {
	if cg := s.cg; cg != nil {
		if err := cg.openForThread(); err != nil {
			return &setupError{err}
		}
		if cg.v2fd >= 0 {
			// cgroup v2: the child is cloned straight into its cgroup.
			sys.UseCgroupFD = true
			sys.CgroupFD = cg.v2fd
		}
	}
	if s.landlock != nil {
		if _, err := applyLandlock(*s.landlock); err != nil {
			return &setupError{err}
		}
	}
	if s.seccomp != nil {
		if err := installSeccomp(*s.seccomp); err != nil {
			return &setupError{err}
		}
	}
	if s.cg != nil {
		if err := s.cg.enterThread(); err != nil {
			return &setupError{err}
		}
	}
	return nil
}

// leave takes the thread back out of the run's v1 cgroups once the command
// has started, so it does not count against the run's limits.
func (s *threadSetup) leave() {
	if s.cg != nil {
		s.cg.leaveThread()
	}
}

// proc is the command a run starts: the program (path resolved), its
// argument vector, exactly its environment (never hunk's own), its working
// directory, and descriptors it gets as 3, 4, … (hunk's copies are closed
// once it has started).
type proc struct {
	path   string
	argv   []string
	env    []string
	dir    string
	setsid bool
	extra  []int
}

// command returns the proc for argv (path already resolved) with exactly env.
func command(path string, argv, env []string, dir string) *proc {
	if env == nil {
		env = []string{}
	}
	return &proc{path: path, argv: argv, env: env, dir: dir}
}

// start forks and execs p from the calling thread (locked, set up by the
// caller) with stdin, stdout and stderr as its first three descriptors. It
// returns the pid and a pidfd for it (-1 when the kernel has none).
func (p *proc) start(stdin, stdout, stderr int, sys *syscall.SysProcAttr) (pid, pidfd int, err error) {
	files := []uintptr{uintptr(stdin), uintptr(stdout), uintptr(stderr)}
	for _, fd := range p.extra {
		files = append(files, uintptr(fd))
	}
	sys.Setsid = p.setsid
	sys.Pdeathsig = syscall.SIGKILL
	pidfd = -1
	sys.PidFD = &pidfd
	attr := &syscall.ProcAttr{Dir: p.dir, Env: p.env, Files: files, Sys: sys}
	pid, err = syscall.ForkExec(p.path, p.argv, attr)
	if err == syscall.EINVAL || err == syscall.ENOSYS {
		// A kernel without CLONE_PIDFD (before 5.2): poll the pid instead.
		sys.PidFD, pidfd = nil, -1
		pid, err = syscall.ForkExec(p.path, p.argv, attr)
	}
	return pid, pidfd, err
}

// Exit codes of a command that could not be started, as shells use them.
const (
	exitNotExecutable = 126
	exitNotFound      = 127
	exitSandbox       = 125
)

// startFailure maps an exec failure to 126/127 and a message.
func startFailure(name string, err error) (int, string) {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound, fmt.Sprintf("%s: %v", name, err)
	}
	return exitNotExecutable, fmt.Sprintf("%s: %v", name, err)
}

// tid is the calling thread's id, as a cgroup v1 tasks file takes it.
func tid() []byte { return []byte(strconv.Itoa(unix.Gettid())) }

// envValue returns the value of key in env (K=V entries), the last one winning.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			v = kv[len(key)+1:]
		}
	}
	return v
}

// lookPath finds file the way a shell does with the command's PATH (not
// hunk's), relative paths resolved from dir. It returns the path, or an exit
// code (126 not executable, 127 not found) and a message.
func lookPath(file, pathEnv, dir string) (string, int, string) {
	check := func(p string) (int, string) {
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, full)
		}
		st, err := os.Stat(full)
		if err != nil {
			return exitNotFound, fmt.Sprintf("%s: No such file or directory", file)
		}
		if st.IsDir() {
			return exitNotExecutable, fmt.Sprintf("%s: Is a directory", file)
		}
		if unix.Access(full, unix.X_OK) != nil || st.Mode().Perm()&0o111 == 0 {
			return exitNotExecutable, fmt.Sprintf("%s: Permission denied", file)
		}
		return 0, ""
	}
	if strings.Contains(file, "/") {
		code, msg := check(file)
		if code == 0 && !filepath.IsAbs(file) {
			return filepath.Join(dir, file), 0, ""
		}
		return file, code, msg
	}
	firstErr, firstMsg := 0, ""
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, file)
		code, msg := check(p)
		if code == 0 {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			return p, 0, ""
		}
		if code == exitNotExecutable && firstErr == 0 {
			firstErr, firstMsg = code, msg
		}
	}
	if firstErr != 0 {
		return "", firstErr, firstMsg
	}
	return "", exitNotFound, fmt.Sprintf("%s: command not found", file)
}
