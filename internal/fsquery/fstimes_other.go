//go:build !linux

package fsquery

import (
	"io/fs"
	"time"
)

// fileTimes: the modification time for both, off Linux.
func fileTimes(fi fs.FileInfo) (changed, accessed time.Time) { return fi.ModTime(), fi.ModTime() }
