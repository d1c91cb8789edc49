//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How a run's command is started: hunk forks it itself and confines the
// child alone, between fork and exec.
//
// Landlock, seccomp filters, no_new_privs and capabilities are properties
// of a thread. Applying them to a thread of hunk and forking from it (an
// earlier design) put the command in the same Landlock domain as a live
// thread of hunk: the command could then ptrace that thread (and with it
// rewrite hunk's code), signal it, take its descriptors with pidfd_getfd and
// read its environment. So nothing of hunk is ever confined: the child
// applies everything to itself after fork, and hunk stays outside its
// domain, where Landlock forbids the command to trace, signal (ABI 6) or
// inspect it.
//
// Go's syscall.ForkExec has no hook for code between fork and exec, so the
// fork is done here, the way the syscall package does it: every argument is
// prepared in the parent (no allocation in the child), signals are blocked
// around clone3 so that no Go signal handler runs in the child, and the
// child runs only nosplit functions that make raw system calls. The child
// is a copy (no CLONE_VM): it cannot disturb the parent's memory or stack.
//
// In the child, in order: a new session (no controlling terminal, so no
// TIOCSTI into the caller's terminal), the parent-death signal, the
// descriptors moved into place, the working directory, capabilities cut to
// the kept set, no_new_privs, the Landlock domain, every other descriptor
// marked close-on-exec (nothing inherited from hunk's caller reaches the
// command), the seccomp filter last, the signal mask restored, exec.

// childSpec is everything the child needs, prepared by the parent.
type childSpec struct {
	argv0 *byte
	argv  **byte
	envv  **byte
	dir   *byte

	files  [maxChildFiles]int // descriptors that become 0, 1, 2, …
	nfiles int

	setsid     bool
	ppid       int
	dropCaps   bool   // cut the bounding, permitted, effective and inheritable sets to keepCaps
	keepCaps   uint64 // capability mask kept by a root command
	noNewPrivs bool
	landlockFD int             // ruleset to restrict the child to; -1: none
	seccomp    *unix.SockFprog // filter installed last; nil: none
	errPipe    int             // write end: the child reports a failure here

	// With a mediated filter (seccompPolicy.Mediate) the child sends the
	// filter's listener to hunk over notifySock (-1: none) with notifyMsg,
	// whose descriptor slot is notifyFD, and closes it before exec: the
	// command never holds it.
	notifySock int
	notifyMsg  *unix.Msghdr
	notifyFD   *int32

	sigmask uint64 // the parent thread's mask, restored before exec

	// The child's scratch space (its own copy after fork).
	tmp     [maxChildFiles]int
	report  [2]uint32 // stage, errno
	capHdr  capHeader
	capData [2]capData
}

const maxChildFiles = 8

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective, permitted, inheritable uint32
}

type cloneArgs struct {
	flags      uint64
	pidFD      uint64
	childTID   uint64
	parentTID  uint64
	exitSignal uint64
	stack      uint64
	stackSize  uint64
	tls        uint64
	setTID     uint64
	setTIDSize uint64
	cgroup     uint64
}

// kernelSigaction is struct sigaction as rt_sigaction takes it on amd64
// and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// Stages of the child, reported with the errno of the step that failed.
const (
	stageSetsid = iota + 1
	stagePdeathsig
	stageFiles
	stageChdir
	stageCaps
	stageNoNewPrivs
	stageLandlock
	stageCloseRange
	stageSeccomp
	stageNotify
	stageExec
)

var stageNames = [...]string{
	stageSetsid: "setsid", stagePdeathsig: "prctl(PR_SET_PDEATHSIG)", stageFiles: "descriptors",
	stageChdir: "chdir", stageCaps: "dropping capabilities", stageNoNewPrivs: "prctl(PR_SET_NO_NEW_PRIVS)",
	stageLandlock: "landlock_restrict_self", stageCloseRange: "close_range", stageSeccomp: "seccomp",
	stageNotify: "sending the seccomp listener", stageExec: "exec",
}

// confinement is what a driver asks the child to apply to itself.
type confinement struct {
	landlock *landlockPolicy // nil: no Landlock domain
	seccomp  *seccompPolicy  // nil: no filter
	dropCaps bool            // a root command keeps only keptCaps
	// mediate, with seccomp.Mediate, is where the mediator lets the
	// command change metadata (mediate.go).
	mediate *mediatePolicy
}

// keptCaps are the capabilities a root command keeps under the landlock
// driver: enough to own and change files in the workspace as root does
// (Landlock still confines where), nothing that reaches beyond the
// filesystem rules — no CAP_SYS_ADMIN, CAP_MKNOD, CAP_SYS_PTRACE,
// CAP_SYS_TIME, CAP_SYS_RESOURCE, CAP_DAC_READ_SEARCH (open_by_handle_at),
// CAP_KILL, CAP_NET_RAW, CAP_NET_ADMIN, CAP_SETFCAP.
var keptCaps = capMask(unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_FSETID,
	unix.CAP_SETGID, unix.CAP_SETUID, unix.CAP_NET_BIND_SERVICE)

func capMask(caps ...int) uint64 {
	var m uint64
	for _, c := range caps {
		m |= 1 << uint(c)
	}
	return m
}

// forkError is a failure of the child before exec: a confinement step
// (setup) or the exec itself.
type forkError struct {
	stage int
	errno syscall.Errno
}

func (e *forkError) Error() string {
	if e.stage == stageExec {
		return e.errno.Error()
	}
	name := "start"
	if e.stage > 0 && e.stage < len(stageNames) {
		name = stageNames[e.stage]
	}
	return fmt.Sprintf("confining the command: %s: %v", name, e.errno)
}

func (e *forkError) Unwrap() error { return e.errno }

// start forks and execs p with stdin, stdout, stderr and p.extra as its
// descriptors 0, 1, 2, 3, …, applying c in the child; cgroupFD >= 0 clones
// it straight into that cgroup v2. It returns the pid and a pidfd.
func (p *proc) start(stdin, stdout, stderr int, c confinement, cgroupFD int) (pid, pidfd int, err error) {
	var cs childSpec
	files := append([]int{stdin, stdout, stderr}, p.extra...)
	if len(files) > maxChildFiles {
		return 0, -1, fmt.Errorf("too many descriptors for the command (%d)", len(files))
	}
	cs.nfiles = copy(cs.files[:], files)
	argv, envv, err := cs.setCommand(p)
	if err != nil {
		return 0, -1, err
	}
	cs.setsid = p.setsid
	cs.ppid = os.Getpid()
	cs.landlockFD = -1
	if c.landlock != nil {
		fd, err := landlockRuleset(*c.landlock)
		if err != nil {
			return 0, -1, &setupError{err}
		}
		defer unix.Close(fd)
		cs.landlockFD = fd
		cs.noNewPrivs = true
	}
	var prog []unix.SockFilter
	if c.seccomp != nil {
		if !seccompSupported {
			return 0, -1, &setupError{fmt.Errorf("seccomp filters are not built for this architecture")}
		}
		prog = seccompProgram(*c.seccomp)
		cs.seccomp = &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		cs.noNewPrivs = true
	}
	if c.dropCaps {
		cs.dropCaps, cs.keepCaps = true, keptCaps
		cs.capHdr.version = unix.LINUX_CAPABILITY_VERSION_3
	}
	var ep [2]int
	if err := unix.Pipe2(ep[:], unix.O_CLOEXEC); err != nil {
		return 0, -1, err
	}
	defer unix.Close(ep[0])
	cs.errPipe = ep[1]
	cs.notifySock = -1
	var ns [2]int
	var notifyBuf [1]byte
	var notifyIov unix.Iovec
	var notifyMsg unix.Msghdr
	var rights []byte
	if c.seccomp != nil && c.seccomp.Mediate {
		if ns, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return 0, -1, &setupError{err}
		}
		defer unix.Close(ns[0])
		defer unix.Close(ns[1])
		notifyIov.Base = &notifyBuf[0]
		notifyIov.SetLen(1)
		rights = unix.UnixRights(-1)
		notifyMsg.Iov = &notifyIov
		notifyMsg.SetIovlen(1)
		notifyMsg.Control = &rights[0]
		notifyMsg.SetControllen(len(rights))
		cs.notifySock, cs.notifyMsg = ns[1], &notifyMsg
		cs.notifyFD = (*int32)(unsafe.Pointer(&rights[unix.CmsgLen(0)]))
	}

	pidfd32 := int32(-1)
	args := cloneArgs{flags: unix.CLONE_PIDFD, exitSignal: uint64(syscall.SIGCHLD)}
	args.pidFD = uint64(uintptr(unsafe.Pointer(&pidfd32)))
	if cgroupFD >= 0 {
		args.flags |= unix.CLONE_INTO_CGROUP
		args.cgroup = uint64(cgroupFD)
	}
	// The command must never trace or read hunk: not dumpable (belt and
	// braces; Landlock and the dropped CAP_SYS_PTRACE already forbid it).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	r, e := forkChild(&cs, &args)
	unix.Close(ep[1])
	keepAlive(argv, envv, prog, rights, &notifyBuf, &notifyIov, &notifyMsg)
	if e != 0 {
		return 0, -1, e
	}
	pid, pidfd = int(r), int(pidfd32)
	if n, rep := readReport(ep[0]); n != 0 { // the exec failed: the child says where
		reap(pid, pidfd)
		return 0, -1, forkFailure(rep)
	}
	if cs.notifySock >= 0 {
		if p.listener, err = recvListener(ns[0]); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			reap(pid, pidfd)
			return 0, -1, &setupError{fmt.Errorf("receiving the seccomp listener: %w", err)}
		}
	}
	return pid, pidfd, nil
}

// forkFailure is the error of the child's report of a failed step.
func forkFailure(rep [8]byte) error {
	fe := &forkError{stage: int(*(*uint32)(unsafe.Pointer(&rep[0]))), errno: syscall.Errno(*(*uint32)(unsafe.Pointer(&rep[4])))}
	if fe.stage == stageExec || fe.stage == stageChdir {
		return fe // reported as the command's own failure (126/127)
	}
	return &setupError{fe}
}

//go:noinline
func keepAlive(...any) {}

// setCommand sets the child's program, arguments, environment and working
// directory from p; the slices it returns must stay alive until the fork.
func (cs *childSpec) setCommand(p *proc) (argv, envv []*byte, err error) {
	if cs.argv0, err = syscall.BytePtrFromString(p.path); err != nil {
		return nil, nil, err
	}
	if argv, err = syscall.SlicePtrFromStrings(p.argv); err != nil {
		return nil, nil, err
	}
	if envv, err = syscall.SlicePtrFromStrings(p.env); err != nil {
		return nil, nil, err
	}
	cs.argv, cs.envv = &argv[0], &envv[0]
	if cs.dir, err = syscall.BytePtrFromString(p.dir); err != nil {
		return nil, nil, err
	}
	return argv, envv, nil
}

// readReport reads the child's report from the error pipe: nothing (n 0)
// when the exec succeeded (the pipe is close-on-exec), else the step that
// failed and its errno.
func readReport(fd int) (n int, rep [8]byte) {
	for {
		m, err := unix.Read(fd, rep[n:])
		if err == unix.EINTR {
			continue
		}
		if m <= 0 || err != nil {
			return n, rep
		}
		n += m
		if n == len(rep) {
			return n, rep
		}
	}
}

// reap waits for a child that did not become the command and releases its
// pidfd.
func reap(pid, pidfd int) {
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
}

// recvListener takes the seccomp listener the child sent before its exec.
func recvListener(sock int) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor in the message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("no descriptor in the message")
	}
	return fds[0], nil
}

// forkChild blocks signals, clones, and in the child runs childMain (which
// never returns); in the parent it restores the signal mask and returns the
// child's pid. It must not grow the stack or touch the race detector: the
// child runs it too.
//
//go:nosplit
//go:norace
func forkChild(cs *childSpec, args *cloneArgs) (uintptr, syscall.Errno) {
	all := ^uint64(0)
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&cs.sigmask)), 8, 0, 0)
	r, _, e := syscall.RawSyscall6(unix.SYS_CLONE3, uintptr(unsafe.Pointer(args)), unsafe.Sizeof(*args), 0, 0, 0, 0)
	if e == syscall.ENOSYS && args.flags&unix.CLONE_INTO_CGROUP == 0 {
		// Linux before 5.3: plain clone, no pidfd (the supervisor polls).
		r, _, e = syscall.RawSyscall6(unix.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	}
	if e == 0 && r == 0 {
		childMain(cs)
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&cs.sigmask)), 0, 8, 0, 0)
	return r, e
}

// childMain is the child between fork and exec (see the top of this file).
//
//go:nosplit
//go:norace
func childMain(c *childSpec) {
	var (
		r     uintptr
		e     syscall.Errno
		stage int
		i     int
	)
	if c.setsid {
		stage = stageSetsid
		if _, _, e = syscall.RawSyscall(unix.SYS_SETSID, 0, 0, 0); e != 0 {
			goto fail
		}
	}
	stage = stagePdeathsig
	if _, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0, 0); e != 0 {
		goto fail
	}
	if r, _, _ = syscall.RawSyscall(unix.SYS_GETPPID, 0, 0, 0); int(r) != c.ppid {
		// hunk died before the signal was armed.
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 253, 0, 0)
	}

	// Every descriptor to a number above the targets first, then into place.
	stage = stageFiles
	for i = 0; i < c.nfiles; i++ {
		if r, _, e = syscall.RawSyscall(unix.SYS_FCNTL, uintptr(c.files[i]), unix.F_DUPFD_CLOEXEC, uintptr(c.nfiles)); e != 0 {
			goto fail
		}
		c.tmp[i] = int(r)
	}
	if r, _, e = syscall.RawSyscall(unix.SYS_FCNTL, uintptr(c.errPipe), unix.F_DUPFD_CLOEXEC, uintptr(c.nfiles)); e != 0 {
		goto fail
	}
	c.errPipe = int(r)
	if c.notifySock >= 0 {
		if r, _, e = syscall.RawSyscall(unix.SYS_FCNTL, uintptr(c.notifySock), unix.F_DUPFD_CLOEXEC, uintptr(c.nfiles)); e != 0 {
			goto fail
		}
		c.notifySock = int(r)
	}
	if c.landlockFD >= 0 {
		if r, _, e = syscall.RawSyscall(unix.SYS_FCNTL, uintptr(c.landlockFD), unix.F_DUPFD_CLOEXEC, uintptr(c.nfiles)); e != 0 {
			goto fail
		}
		c.landlockFD = int(r)
	}
	for i = 0; i < c.nfiles; i++ {
		if _, _, e = syscall.RawSyscall(unix.SYS_DUP3, uintptr(c.tmp[i]), uintptr(i), 0); e != 0 {
			goto fail
		}
	}

	stage = stageChdir
	if _, _, e = syscall.RawSyscall(unix.SYS_CHDIR, uintptr(unsafe.Pointer(c.dir)), 0, 0); e != 0 {
		goto fail
	}

	if c.dropCaps {
		stage = stageCaps
		for i = 0; i < 64; i++ {
			if c.keepCaps&(1<<uint(i)) == 0 {
				// EINVAL past the last capability; EPERM when not root,
				// whose bounding set is not ours to change (and holds
				// nothing it could use).
				syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(i), 0, 0, 0, 0)
			}
		}
		syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
		if _, _, e = syscall.RawSyscall(unix.SYS_CAPGET, uintptr(unsafe.Pointer(&c.capHdr)), uintptr(unsafe.Pointer(&c.capData[0])), 0); e != 0 {
			goto fail
		}
		for i = 0; i < 2; i++ {
			k := uint32(c.keepCaps >> (32 * uint(i)))
			c.capData[i].effective &= k
			c.capData[i].permitted &= k
			c.capData[i].inheritable &= k
		}
		if _, _, e = syscall.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&c.capHdr)), uintptr(unsafe.Pointer(&c.capData[0])), 0); e != 0 {
			goto fail
		}
	}
	if c.noNewPrivs {
		stage = stageNoNewPrivs
		if _, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			goto fail
		}
	}
	if c.landlockFD >= 0 {
		stage = stageLandlock
		if _, _, e = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(c.landlockFD), 0, 0); e != 0 {
			goto fail
		}
	}

	// Nothing but 0..nfiles-1 survives the exec: whatever hunk inherited
	// from its caller is closed on exec.
	stage = stageCloseRange
	if _, _, e = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, uintptr(c.nfiles), ^uintptr(0), unix.CLOSE_RANGE_CLOEXEC); e != 0 {
		// Before Linux 5.11: one descriptor at a time.
		for i = c.nfiles; i < 4096; i++ {
			syscall.RawSyscall(unix.SYS_FCNTL, uintptr(i), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}

	if c.seccomp != nil {
		stage = stageSeccomp
		if c.notifySock < 0 {
			if _, _, e = syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(c.seccomp))); e != 0 {
				goto fail
			}
		} else {
			if r, _, e = syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(c.seccomp))); e != 0 {
				goto fail
			}
			stage = stageNotify
			*c.notifyFD = int32(r)
			if _, _, e = syscall.RawSyscall(unix.SYS_SENDMSG, uintptr(c.notifySock), uintptr(unsafe.Pointer(c.notifyMsg)), 0); e != 0 {
				goto fail
			}
			syscall.RawSyscall(unix.SYS_CLOSE, r, 0, 0)
		}
	}

	// Go's handlers go (exec resets them anyway; this closes the window
	// before it), then hunk's signal mask is the command's.
	for i = 1; i <= 64; i++ {
		var old kernelSigaction
		if _, _, e = syscall.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(i), 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
			continue
		}
		if old.handler > 1 { // neither SIG_DFL nor SIG_IGN
			var dfl kernelSigaction
			syscall.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(i), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		}
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&c.sigmask)), 0, 8, 0, 0)

	stage = stageExec
	_, _, e = syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(c.argv0)), uintptr(unsafe.Pointer(c.argv)), uintptr(unsafe.Pointer(c.envv)))

fail:
	c.report[0], c.report[1] = uint32(stage), uint32(e)
	syscall.RawSyscall(unix.SYS_WRITE, uintptr(c.errPipe), uintptr(unsafe.Pointer(&c.report[0])), 8)
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 253, 0, 0)
	}
}
