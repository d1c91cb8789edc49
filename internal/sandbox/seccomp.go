package sandbox

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The landlock driver's seccomp filter. Landlock confines the filesystem but,
// on the kernels most machines run, not sockets: TCP is covered from ABI 4,
// UDP only from ABI 10, and connecting to a pathname unix socket (the Docker
// socket) only from ABI 9. The filter closes those holes by system call:
//
//   - socket(2) is refused (EACCES) for every address family, unless
//     --network; AF_UNIX is refused even with --network unless the kernel's
//     Landlock confines unix-socket connections to the writable directories
//     (ABI 9), because a root process that can reach /run/docker.sock owns
//     the host. socketpair(2), which reaches no one, stays allowed.
//   - io_uring_setup(2) is refused: io_uring performs socket and connect
//     operations without passing through seccomp.
//   - mounting, module loading, kexec, reboot, swap, bpf and setns are
//     refused, so that a root process cannot undo the confinement.
//   - system calls of another ABI (i386 on amd64, x32) are refused, so that
//     the checks above cannot be bypassed through a second syscall table.

// seccompPolicy says what the filter allows.
type seccompPolicy struct {
	Network bool `json:"network"` // allow sockets of every family but AF_UNIX
	Unix    bool `json:"unix"`    // allow AF_UNIX sockets (Landlock confines them)
}

// alwaysDenied are refused with EPERM whatever the policy.
var alwaysDenied = []uint32{
	unix.SYS_IO_URING_SETUP,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_BPF, unix.SYS_SETNS,
}

const (
	bpfLdW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] (little endian)
)

func retErrno(e syscall.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// seccompProgram builds the BPF program for p.
func seccompProgram(p seccompPolicy) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	allow := uint32(unix.SECCOMP_RET_ALLOW)
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
		prog = append(prog, jump(bpfJeq, nr, 0, 1), stmt(bpfRet, retErrno(syscall.EPERM)))
	}
	unixRet, otherRet := retErrno(syscall.EACCES), retErrno(syscall.EACCES)
	if p.Unix {
		unixRet = allow
	}
	if p.Network {
		otherRet = allow
	}
	prog = append(prog,
		jump(bpfJeq, unix.SYS_SOCKET, 1, 0),
		stmt(bpfRet, allow),
		stmt(bpfLdW, offArg0),
		jump(bpfJeq, unix.AF_UNIX, 0, 1),
		stmt(bpfRet, unixRet),
		stmt(bpfRet, otherRet),
	)
	return prog
}

// installSeccomp installs the filter on the calling thread only (the caller
// has locked its goroutine to the thread and execs from it). It sets
// no_new_privs, which the kernel requires of an unprivileged filter.
func installSeccomp(p seccompPolicy) error {
	if !seccompSupported {
		return fmt.Errorf("seccomp filters are not built for this architecture")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	prog := seccompProgram(p)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	return nil
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
