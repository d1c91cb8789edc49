//go:build linux

package sandbox

import (
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter every confined command gets (the landlock driver's,
// and bubblewrap's --seccomp). Landlock confines the filesystem and, from
// ABI 6, signals and abstract sockets; the filter closes what it leaves:
//
//   - sockets (landlock driver only): socket(2) is refused for every
//     address family unless --network (EAFNOSUPPORT: programs give up at
//     once rather than retry); AF_UNIX is refused (EACCES) even with
//     --network unless the kernel's Landlock confines connections to
//     pathname sockets (ABI 9), because a root process that can reach
//     /run/docker.sock owns the host. socketpair(2) stays allowed.
//   - another process's memory, descriptors and keys: ptrace,
//     process_vm_readv/writev, pidfd_getfd, kcmp, the kernel keyrings
//     (keyctl, add_key, request_key), open_by_handle_at.
//   - the host: mount and friends, modules, kexec, reboot, swap, bpf, setns,
//     sethostname, the clocks, acct, quotactl, ioperm/iopl, perf events,
//     userfaultfd, io_uring (which performs socket operations without
//     passing through seccomp); new user namespaces (clone, unshare with
//     CLONE_NEWUSER; clone3 answers ENOSYS so libc falls back to clone,
//     whose flags can be checked).
//   - terminals: the TIOCSTI and TIOCLINUX ioctls, which push input into a
//     terminal.
//   - inode flags and leases: the FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR
//     ioctls (chattr, through a descriptor opened for reading) and
//     fcntl(F_SETLEASE) (a lease stalls every other opener of the file).
//   - other processes (landlock driver, which has no pid namespace): kill,
//     tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and pidfd_open
//     aimed at hunk, kill(-1), prlimit64 on another process, setpriority
//     on anything but the caller.
//   - metadata (landlock driver): chmod, chown, utimes and extended
//     attributes, which Landlock does not confine, go to hunk
//     (SECCOMP_RET_USER_NOTIF), which does each itself when its file lies in
//     a writable place and refuses it otherwise (mediate.go); setxattrat and
//     removexattrat answer ENOSYS (libc falls back to the older calls).
//   - system calls of another ABI (i386 on amd64, x32) are refused, so that
//     none of this can be bypassed through a second syscall table.

// seccompPolicy says what the filter allows.
type seccompPolicy struct {
	Sockets bool // filter socket(2) (the landlock driver; bwrap has a network namespace)
	Network bool // allow sockets of every family but AF_UNIX
	Unix    bool // allow AF_UNIX sockets (Landlock confines them)
	Guard   int  // a pid (hunk's) the command may not signal or open; 0: none (pid namespace)
	Mediate bool // send metadataCalls to the mediator (SECCOMP_RET_USER_NOTIF)
}

// alwaysDenied are refused with EPERM whatever the policy.
var alwaysDenied = []uint32{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_BPF, unix.SYS_SETNS,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD, unix.SYS_KCMP, unix.SYS_PROCESS_MADVISE,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_VHANGUP, unix.SYS_SYSLOG, unix.SYS_FANOTIFY_INIT,
}

const (
	bpfLdW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	offNr   = 0
	offArch = 4
	offArgs = 16 // low 32 bits of args[0] (little endian); each argument 8 bytes on
)

// fsIocFssetxattr is FS_IOC_FSSETXATTR, _IOW('X', 32, struct fsxattr).
const fsIocFssetxattr = 0x401c5820

func retErrno(e syscall.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// argCheck refuses a system call with ret when its argument arg (low 32
// bits) is val ('='), is not val ('!'), or has a bit of val set ('&'); a
// '^' check is a guard: the check after it applies only when arg has a bit
// of val set.
type argCheck struct {
	arg int
	op  byte // '=', '!', '&', '^'
	val uint32
	ret uint32
}

// seccompProgram builds the BPF program for p.
func seccompProgram(p seccompPolicy) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	eperm := retErrno(syscall.EPERM)
	prog := []unix.SockFilter{
		stmt(bpfLdW, offArch),
		jump(bpfJeq, auditArch, 1, 0),
		stmt(bpfRet, retErrno(syscall.ENOSYS)),
		stmt(bpfLdW, offNr),
	}
	if x32SyscallBit != 0 {
		prog = append(prog, jump(bpfJge, x32SyscallBit, 0, 1), stmt(bpfRet, retErrno(syscall.ENOSYS)))
	}
	for _, nr := range alwaysDenied {
		prog = append(prog, jump(bpfJeq, nr, 0, 1), stmt(bpfRet, eperm))
	}
	prog = append(prog, jump(bpfJeq, unix.SYS_CLONE3, 0, 1), stmt(bpfRet, retErrno(syscall.ENOSYS)))
	if p.Mediate {
		for _, nr := range []uint32{unix.SYS_SETXATTRAT, unix.SYS_REMOVEXATTRAT} {
			prog = append(prog, jump(bpfJeq, nr, 0, 1), stmt(bpfRet, retErrno(syscall.ENOSYS)))
		}
	}
	// openat2 hides its mode in a struct the filter cannot read: ENOSYS,
	// and callers fall back to openat.
	prog = append(prog, jump(bpfJeq, unix.SYS_OPENAT2, 0, 1), stmt(bpfRet, retErrno(syscall.ENOSYS)))

	checks := map[uint32][]argCheck{
		unix.SYS_IOCTL: {{1, '=', unix.TIOCSTI, eperm}, {1, '=', unix.TIOCLINUX, eperm}},
		unix.SYS_CLONE: {{0, '&', unix.CLONE_NEWUSER, eperm}},
		// unshare(CLONE_NEWUSER); the other namespaces need a capability
		// the command does not have.
		unix.SYS_UNSHARE: {{0, '&', unix.CLONE_NEWUSER, eperm}},
	}
	order := []uint32{unix.SYS_IOCTL, unix.SYS_CLONE, unix.SYS_UNSHARE}
	// Inode flags (chattr) through a descriptor opened for reading, which
	// Landlock does not confine, and leases, which stall the host's own
	// opens of a file the command can merely read (also on a read-only
	// bind).
	checks[unix.SYS_IOCTL] = append(checks[unix.SYS_IOCTL],
		argCheck{1, '=', unix.FS_IOC_SETFLAGS, eperm}, argCheck{1, '=', fsIocFssetxattr, eperm})
	checks[unix.SYS_FCNTL] = []argCheck{{1, '=', unix.F_SETLEASE, eperm}}
	order = append(order, unix.SYS_FCNTL)
	// No set-user-ID or set-group-ID file: a root command could leave a
	// setuid-root program in the workspace for whoever runs code there
	// later. Refused in every call that gives a file a mode.
	for nr, a := range modeCalls {
		var c []argCheck
		if a.flags >= 0 {
			c = append(c, argCheck{a.flags, '^', unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY), 0})
		}
		checks[nr] = append(c, argCheck{a.mode, '&', unix.S_ISUID | unix.S_ISGID, eperm})
		order = append(order, nr)
	}
	final := map[uint32]uint32{}
	if p.Mediate {
		for _, nr := range metadataCalls {
			final[nr] = unix.SECCOMP_RET_USER_NOTIF
			if _, ok := checks[nr]; !ok {
				order = append(order, nr)
			}
		}
	}
	slices.Sort(order) // a stable program for a given policy
	if p.Sockets {
		var sock []argCheck
		if !p.Unix {
			sock = append(sock, argCheck{0, '=', unix.AF_UNIX, retErrno(syscall.EACCES)})
		}
		if !p.Network {
			sock = append(sock, argCheck{0, '!', unix.AF_UNIX, retErrno(syscall.EAFNOSUPPORT)})
		}
		checks[unix.SYS_SOCKET] = sock
		order = append(order, unix.SYS_SOCKET)
	}
	if p.Guard > 0 {
		g := uint32(p.Guard)
		for _, nr := range []uint32{unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO, unix.SYS_PIDFD_OPEN} {
			checks[nr] = []argCheck{{0, '=', g, eperm}}
			order = append(order, nr)
		}
		checks[unix.SYS_KILL] = []argCheck{{0, '=', g, eperm}, {0, '=', uint32(^g + 1), eperm}, {0, '=', 0xffffffff, eperm}}
		checks[unix.SYS_PRLIMIT64] = []argCheck{{0, '!', 0, eperm}}
		checks[unix.SYS_SETPRIORITY] = []argCheck{{0, '!', unix.PRIO_PROCESS, eperm}, {1, '!', 0, eperm}}
		order = append(order, unix.SYS_KILL, unix.SYS_PRLIMIT64, unix.SYS_SETPRIORITY)
	}
	for _, nr := range order {
		var block []unix.SockFilter
		for _, c := range checks[nr] {
			block = append(block, stmt(bpfLdW, uint32(offArgs+8*c.arg)))
			switch c.op {
			case '=':
				block = append(block, jump(bpfJeq, c.val, 0, 1))
			case '!':
				block = append(block, jump(bpfJeq, c.val, 1, 0))
			case '&':
				block = append(block, jump(bpfJset, c.val, 0, 1))
			case '^':
				// A guard: without a bit of val, skip the next check
				// (its load, jump and return).
				block = append(block, jump(bpfJset, c.val, 0, 3))
				continue
			}
			block = append(block, stmt(bpfRet, c.ret))
		}
		ret, ok := final[nr]
		if !ok {
			ret = allow
		}
		block = append(block, stmt(bpfRet, ret))
		prog = append(prog, jump(bpfJeq, nr, 0, uint8(len(block))))
		prog = append(prog, block...)
	}
	return append(prog, stmt(bpfRet, allow))
}

// seccompAvailable reports whether the kernel takes seccomp filters.
func seccompAvailable() bool {
	if !seccompSupported {
		return false
	}
	// SECCOMP_GET_ACTION_AVAIL answers without changing anything.
	act := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&act)))
	return e == 0
}
