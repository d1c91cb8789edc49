package fsquery

import (
	"io/fs"
	"syscall"
	"time"
)

// fileTimes are a file's change and access times (its modification time
// where the system does not say).
func fileTimes(fi fs.FileInfo) (changed, accessed time.Time) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix()), time.Unix(st.Atim.Unix())
	}
	return fi.ModTime(), fi.ModTime()
}
