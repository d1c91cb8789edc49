//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// auditArch is the seccomp architecture of native system calls; x32 calls
// (numbers with bit 30 set) share it and are refused separately.
const (
	auditArch        = 0xc000003e // AUDIT_ARCH_X86_64
	x32SyscallBit    = 0x40000000
	seccompSupported = true
)

// modeCalls give a file a mode: the argument indexes of the open flags
// (-1: none, the call always creates or changes) and of the mode.
var modeCalls = map[uint32]struct{ flags, mode int }{
	unix.SYS_OPEN: {1, 2}, unix.SYS_OPENAT: {2, 3}, unix.SYS_CREAT: {-1, 1},
	unix.SYS_MKNOD: {-1, 1}, unix.SYS_MKNODAT: {-1, 2},
	unix.SYS_CHMOD: {-1, 1}, unix.SYS_FCHMOD: {-1, 1}, unix.SYS_FCHMODAT: {-1, 2}, unix.SYS_FCHMODAT2: {-1, 2},
}

// metadataCalls change a file's mode, owner, times or extended attributes,
// which Landlock does not confine: the mediator does them (mediate.go).
var metadataCalls = []uint32{
	unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_CHOWN, unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
}
