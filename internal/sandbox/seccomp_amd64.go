//go:build linux

package sandbox

// auditArch is the seccomp architecture of native system calls; x32 calls
// (numbers with bit 30 set) share it and are refused separately.
const (
	auditArch        = 0xc000003e // AUDIT_ARCH_X86_64
	x32SyscallBit    = 0x40000000
	seccompSupported = true
)
