package workspace

import "golang.org/x/sys/unix"

// oPath opens a directory only to walk from it (O_PATH: no read
// permission needed, no access to its content).
const oPath = unix.O_PATH

// openBeneath opens name below dirfd in one openat2(2) that fails
// (ELOOP, EXDEV) on any symbolic link or ".." on the way: the door's fast
// path. ENOSYS where the kernel has no openat2 (before Linux 5.6).
func openBeneath(dirfd int, name string, flags int) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(dirfd, name, how)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// renameat2 is renameat2(2) (RENAME_EXCHANGE: swap the two names).
func renameat2(olddir int, oldname string, newdir int, newname string, flags uint) error {
	return unix.Renameat2(olddir, oldname, newdir, newname, flags)
}

// renameExchangeFlag is renameat2's RENAME_EXCHANGE.
const renameExchangeFlag = unix.RENAME_EXCHANGE
