package workspace

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// PrivateDir makes (or opens) the directory base/rel[0]/rel[1]/… that only
// hunk's user may use — a workspace's build caches, its crash journals —
// and returns its real path. base, a directory of the user's (their cache
// or state directory), is taken as it is (it may be a link the user made);
// below it, each component of rel is made and opened without following a
// symbolic link and must be a real directory of hunk's user, the last one
// with mode 0700: a link or a foreign directory planted there (by a command
// whose workspace holds base) is refused with an error that says what to
// remove, never followed.
func PrivateDir(base string, rel ...string) (string, error) {
	if p, ok := privateDirFast(base, rel); ok {
		return p, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		return "", err
	}
	fd, err := unix.Open(realBase, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer func() { unix.Close(fd) }()
	path := realBase
	for i, c := range rel {
		path = filepath.Join(path, c)
		if err := unix.Mkdirat(fd, c, 0o700); err != nil && err != unix.EEXIST {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return "", fmt.Errorf("%s is not a directory of hunk's (a symbolic link or a file): remove it", path)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		unix.Close(fd)
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return "", err
		}
		if int(st.Uid) != os.Geteuid() {
			return "", fmt.Errorf("%s belongs to uid %d, not to hunk's user: remove it", path, st.Uid)
		}
		if i == len(rel)-1 && st.Mode&0o777 != 0o700 {
			return "", fmt.Errorf("%s has mode %04o, not 0700: chmod 700 it", path, st.Mode&0o777)
		}
	}
	return path, nil
}
