//go:build !linux

package workspace

import "golang.org/x/sys/unix"

// oPath: where there is no O_PATH, directories are opened for reading.
const oPath = unix.O_RDONLY

// openBeneath is the fast path where there is no openat2: none (ENOSYS,
// the door walks).
func openBeneath(dirfd int, name string, flags int) (int, error) { return -1, unix.ENOSYS }

// renameat2 is not available: callers fall back to a plain rename.
func renameat2(olddir int, oldname string, newdir int, newname string, flags uint) error {
	return unix.ENOSYS
}

// renameExchangeFlag: renameat2 is not available (renameat2 says ENOSYS).
const renameExchangeFlag = 2
