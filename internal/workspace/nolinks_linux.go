package workspace

import (
	"os"
	"path"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// rootFD is an O_PATH descriptor of the root for noLinks, opened once.
type rootFD struct {
	once sync.Once
	fd   int
	open bool
}

// noLinks reports, in one system call where the kernel has openat2 (Linux
// 5.6), that no component of name — or, when name does not exist, of the
// directory it would be made in — is a symbolic link: name is then its own
// real name, and the policy needs no walk. false means "look": a link, an
// error, or no openat2.
func (w *Workspace) noLinks(name string) bool {
	w.rfd.once.Do(func() {
		w.rfd.fd = -1
		if fd, err := unix.Open(w.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			w.rfd.fd, w.rfd.open = fd, true
		}
	})
	if !w.rfd.open {
		return false
	}
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
	for p := path.Clean(name); ; p = path.Dir(p) {
		fd, err := unix.Openat2(w.rfd.fd, p, how)
		if err == nil {
			unix.Close(fd)
			return true
		}
		if err != unix.ENOENT || p == "." {
			return false
		}
	}
}

// closeRootFD releases noLinks' descriptor.
func (w *Workspace) closeRootFD() {
	if w.rfd.open {
		unix.Close(w.rfd.fd)
		w.rfd.open = false
	}
}

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
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
	fd, err := unix.Openat2(bfd, filepath.Join(rel...), how)
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
