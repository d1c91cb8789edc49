//go:build !linux

package execrun

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is a file's inode change time and inode number (where the
// system says; the modification time otherwise).
func changeTime(fi fs.FileInfo) (time.Time, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctimespec.Unix()), uint64(st.Ino)
	}
	return fi.ModTime(), 0
}
