package workspace

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// privateDirFast is PrivateDir's quick check of a directory made before:
// base/rel… opened in one openat2(2) that follows no symbolic link below
// base, then checked as PrivateDir checks the last component (hunk's
// user's, mode 0700). ok false: let PrivateDir walk (and make) it.
func privateDirFast(base string, rel []string) (string, bool) {
	bfd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(bfd)
	fd, err := openBeneath(bfd, filepath.Join(rel...), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() || st.Mode&0o777 != 0o700 {
		return "", false
	}
	return filepath.Join(append([]string{base}, rel...)...), true
}
