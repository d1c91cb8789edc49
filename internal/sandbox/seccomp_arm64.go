//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch        = 0xc00000b7 // AUDIT_ARCH_AARCH64
	x32SyscallBit    = 0          // no second ABI sharing the architecture
	seccompSupported = true
)

// modeCalls: see seccomp_amd64.go.
var modeCalls = map[uint32]struct{ flags, mode int }{
	unix.SYS_OPENAT: {2, 3}, unix.SYS_MKNODAT: {-1, 2},
	unix.SYS_FCHMOD: {-1, 1}, unix.SYS_FCHMODAT: {-1, 2}, unix.SYS_FCHMODAT2: {-1, 2},
}

// metadataCalls: see seccomp_amd64.go (arm64 has only the *at forms).
var metadataCalls = []uint32{
	unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
}
