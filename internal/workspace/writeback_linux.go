package workspace

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing fd's bytes [off, off+n)
// (n = 0: to the end) to disk now, without waiting, so that a later flush
// of the file has less left to wait for.
func startWriteback(fd int, off, n int64) {
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// fdatasync flushes fd's data.
func fdatasync(fd int) error { return unix.Fdatasync(fd) }

// volatileFS reports whether dir lies on tmpfs or ramfs.
func volatileFS(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}
