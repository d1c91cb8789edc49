package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's bytes [off, off+n)
// to disk now, without waiting, so that the final fsync of a big file has
// less left to wait for.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// startWritebackFd starts writing fd's dirty pages back, without waiting.
func startWritebackFd(fd int) { _ = unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE) }

// fdatasync flushes fd's data.
func fdatasync(fd int) error { return unix.Fdatasync(fd) }

// renameExchange swaps two names of the directory dirfd atomically.
func renameExchange(dirfd int, a, b string) error {
	return unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
}

// volatileFS reports whether dir lies on tmpfs or ramfs.
func volatileFS(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}
