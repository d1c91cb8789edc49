//go:build !linux

package workspace

import "golang.org/x/sys/unix"

func startWriteback(fd int, off, n int64) {}

func fdatasync(fd int) error { return unix.Fsync(fd) }

// renameExchange is not available: callers fall back to a plain rename.
func renameExchange(dirfd int, a, b string) error { return unix.ENOSYS }

func volatileFS(dir string) bool { return false }
