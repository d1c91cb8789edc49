package execrun

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is a file's inode change time (a write, a chmod, a rename
// over it: what no tool can set back), and its inode number.
func changeTime(fi fs.FileInfo) (time.Time, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix()), uint64(st.Ino)
	}
	return fi.ModTime(), 0
}
