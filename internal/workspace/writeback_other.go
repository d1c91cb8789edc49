//go:build !linux

package workspace

import "golang.org/x/sys/unix"

func startWriteback(fd int, off, n int64) {}

func fdatasync(fd int) error { return unix.Fsync(fd) }

func volatileFS(dir string) bool { return false }
