//go:build linux && !amd64

package sandbox

import "syscall"

// decodeLegacy: only amd64 has metadata calls besides the *at forms.
func decodeLegacy(uint32, [6]uint64, *metaCall, procMem) syscall.Errno { return syscall.ENOSYS }
