//go:build unix

package policy

import (
	"os"
	"syscall"
)

// links is the number of names (hard links) of the file fi describes.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
