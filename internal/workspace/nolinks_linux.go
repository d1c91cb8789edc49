package workspace

import (
	"path"
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
