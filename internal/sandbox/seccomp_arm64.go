//go:build linux

package sandbox

const (
	auditArch        = 0xc00000b7 // AUDIT_ARCH_AARCH64
	x32SyscallBit    = 0          // no second ABI sharing the architecture
	seccompSupported = true
)
