//go:build linux && !amd64 && !arm64

package sandbox

const (
	auditArch        = 0
	x32SyscallBit    = 0
	seccompSupported = false
)

var metadataCalls []uint32

var modeCalls map[uint32]struct{ flags, mode int }
