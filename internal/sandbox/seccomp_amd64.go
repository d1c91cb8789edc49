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

// metadataCalls change a file's mode, owner, times or extended attributes,
// which Landlock does not confine: the mediator does them (mediate.go).
var metadataCalls = []uint32{
	unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_CHOWN, unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
}
