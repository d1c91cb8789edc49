package workspace

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/result"
)

// The workspace's file operations by name. Each resolves its names through
// the door once (door.go) and acts on what the walk opened; the path
// policy decides the name the walk found. The ...In forms take the
// directories of one operation (a Batch's), the plain ones walk afresh.

// maxRaces is how often an operation walks again when the last component
// became a symbolic link between the walk and the access (a command
// swapping links): then it is refused as a loop.
const maxRaces = 3

// Open opens name for reading.
func (w *Workspace) Open(name string) (*os.File, error) {
	f, _, err := w.openIn(nil, name, os.O_RDONLY, 0, true)
	return f, err
}

// OpenFile opens name with flags and perm: read-only opens are decided as
// reads, the others as writes. Only regular files and directories are
// opened (a FIFO, a device or a socket is refused before anything waits on
// it).
func (w *Workspace) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := w.openIn(nil, name, flag, perm, true)
	return f, err
}

// writes reports whether open flags change the file.
func writes(flag int) bool {
	return flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
}

// openIn is OpenFile through c, deciding the policy when check; it returns
// the real name opened too.
func (w *Workspace) openIn(c *dirCache, name string, flag int, perm fs.FileMode, check bool) (*os.File, string, error) {
	fd, real, st, err := w.openFD(c, name, flag, perm, check)
	if err != nil {
		return nil, "", err
	}
	if flag&unix.O_NONBLOCK != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return os.NewFile(uintptr(fd), name), real, nil
	}
	return blocking(fd, flag, name), real, nil
}

// blocking is a regular file's descriptor, opened with flag and
// O_NONBLOCK (the door's guard against waiting on a FIFO), as an *os.File
// that reads and writes blocking: os would otherwise try, and fail, to put
// it in its poller. The status flags asked for (O_APPEND) stay.
func blocking(fd, flag int, name string) *os.File {
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flag&unix.O_APPEND)
	return os.NewFile(uintptr(fd), name)
}

// openFD is openIn's descriptor (the caller closes it), with its stat.
func (w *Workspace) openFD(c *dirCache, name string, flag int, perm fs.FileMode, check bool) (int, string, *unix.Stat_t, error) {
	write := writes(flag)
	if !write && c == nil && w.confined && check {
		// The fast path: a name with no link on its way is its own real name.
		fd, err := openBeneath(w.rootFD, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
		if err == nil {
			if err := w.decide(name, name, false); err != nil {
				unix.Close(fd)
				return -1, "", nil, err
			}
			st, err := w.regularStat(name, fd)
			return fd, name, st, err
		}
		if err == unix.ENOENT || err == unix.EISDIR || err == unix.EACCES || err == unix.ENXIO {
			return -1, "", nil, w.missing(c, name, false, err)
		}
	}
	follow := false // a link in the last component is followed when met (ELOOP)
	for race := 0; ; race++ {
		p, err := w.resolve(c, name, follow)
		if err != nil {
			return -1, "", nil, w.missing(c, name, write, err)
		}
		if check {
			if err := w.decide(name, p.real, write); err != nil {
				c.release(p.dir)
				return -1, "", nil, err
			}
		}
		fd, err := openat(p.dir.fd, p.base, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
		c.release(p.dir)
		if err == unix.ELOOP && race < maxRaces {
			// A link (or one put there since the walk): walk where it
			// leads, and decide that.
			follow = true
			continue
		}
		if err != nil {
			return -1, "", nil, w.Error(name, pathErr("open", name, err))
		}
		st, err := w.regularStat(name, fd)
		return fd, p.real, st, err
	}
}

// regularStat refuses an opened descriptor fd that is neither a regular
// file nor a directory — reading a FIFO or a device waits or never ends —
// and returns its stat; fd is closed when it fails.
func (w *Workspace) regularStat(name string, fd int) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, w.Error(name, pathErr("stat", name, err))
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
		unix.Close(fd)
		return nil, special(name, statInfo(path.Base(name), &st).Mode())
	}
	return &st, nil
}

// special is the refusal of a file that is not a regular file, a directory
// or a symbolic link: never opened to wait on (a FIFO) or read without end
// (a device).
func special(name string, mode fs.FileMode) error {
	return result.Errorf(result.InvalidArgument, "%s: not a regular file or directory (%s)", Quote(name), TypeName(mode)).
		WithHint("hunk reads and writes regular files only: a pipe or a device could block or never end").At(name)
}

// TypeName names a file's type as find -type and stat do, in a word.
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m.IsRegular():
		return "file"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "char-device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}

// missing is the error for a name the door could not open (err): DENIED
// when the policy denies the name as far as it leads, else err's own.
func (w *Workspace) missing(c *dirCache, name string, write bool, err error) error {
	if derr := w.checkIn(c, name, write); derr != nil {
		return derr
	}
	return w.Error(name, pathErr("open", name, err))
}

// ReadFile reads the whole of name.
func (w *Workspace) ReadFile(name string) ([]byte, error) { return w.readFileIn(nil, name, true) }

// readFileIn reads name through c, deciding the policy when check.
func (w *Workspace) readFileIn(c *dirCache, name string, check bool) ([]byte, error) {
	fd, _, st, err := w.openFD(c, name, os.O_RDONLY, 0, check)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, w.Error(name, pathErr("read", name, syscall.EISDIR))
	}
	data := make([]byte, 0, st.Size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, w.Error(name, pathErr("read", name, err))
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
		if int64(len(data)) == st.Size {
			return data, nil // all of it, as it was when opened
		}
	}
}

// Stat follows symlinks (inside the root only).
func (w *Workspace) Stat(name string) (fs.FileInfo, error) { return w.statIn(nil, name, true) }

// Lstat does not follow a final symlink.
func (w *Workspace) Lstat(name string) (fs.FileInfo, error) { return w.statIn(nil, name, false) }

// statIn is Stat (follow) or Lstat through c.
func (w *Workspace) statIn(c *dirCache, name string, follow bool) (fs.FileInfo, error) {
	deep := false // the last component followed, once it is met as a link
	for race := 0; ; race++ {
		p, err := w.resolve(c, name, deep)
		if err != nil {
			return nil, w.Error(name, pathErr("lstat", name, err))
		}
		var st unix.Stat_t
		err = fstatat(p.dir.fd, p.base, &st, unix.AT_SYMLINK_NOFOLLOW)
		c.release(p.dir)
		if err != nil {
			return nil, w.Error(name, pathErr("lstat", name, err))
		}
		if follow && st.Mode&unix.S_IFMT == unix.S_IFLNK && race < maxRaces {
			deep = true
			continue
		}
		return statInfo(path.Base(p.base), &st), nil
	}
}

// Readlink returns a symlink's target as stored.
func (w *Workspace) Readlink(name string) (string, error) { return w.readlinkIn(nil, name) }

func (w *Workspace) readlinkIn(c *dirCache, name string) (string, error) {
	p, err := w.resolve(c, name, false)
	if err != nil {
		return "", w.Error(name, pathErr("readlink", name, err))
	}
	defer c.release(p.dir)
	t, err := readlinkat(p.dir.fd, p.base)
	return t, w.Error(name, pathErr("readlink", name, err))
}

// ReadDir lists a directory, sorted by name; entries the policy denies
// reading are left out.
func (w *Workspace) ReadDir(name string) ([]fs.DirEntry, error) {
	c := newDirCache()
	defer c.close()
	return w.readDirIn(c, name)
}

// readDirIn is ReadDir through c.
func (w *Workspace) readDirIn(c *dirCache, name string) ([]fs.DirEntry, error) {
	f, real, err := w.openIn(c, name, os.O_RDONLY|unix.O_DIRECTORY, 0, true)
	if err != nil {
		return nil, err
	}
	list, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, w.Error(name, err)
	}
	ents := make([]fs.DirEntry, len(list))
	for i, e := range list {
		ents[i] = dirEntry{DirEntry: e, w: w, c: c, name: joinReal(real, e.Name())}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	if !w.Restricted() {
		return ents, nil
	}
	kept := ents[:0]
	for _, e := range ents {
		if !w.hiddenIn(c, name, real, e) {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// dirEntry is an entry of a listing whose Info is looked up through the
// door, by the entry's real name (an os.File's entries look theirs up by
// the file's name, relative to the process's working directory).
type dirEntry struct {
	fs.DirEntry
	w    *Workspace
	c    *dirCache // the listing's batch's: the entry's directory walked once, not again per entry
	name string
}

func (e dirEntry) Info() (fs.FileInfo, error) { return e.w.statIn(e.c, e.name, false) }

// hiddenIn reports whether a listing of dir (whose real name is real)
// leaves the entry e out: reading it is denied, as named, as it really is
// and, for a link, where it leads.
func (w *Workspace) hiddenIn(c *dirCache, dir, real string, e fs.DirEntry) bool {
	named := joinName(dir, e.Name())
	if w.decide(named, joinReal(real, e.Name()), false) != nil {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	return w.checkIn(c, named, false) != nil
}

// Remove removes a file, an empty directory, or a symlink itself (never its target).
func (w *Workspace) Remove(name string) error { return w.removeIn(nil, name) }

func (w *Workspace) removeIn(c *dirCache, name string) error {
	p, err := w.resolve(c, name, false)
	if err != nil {
		return w.missing(c, name, true, err)
	}
	defer c.release(p.dir)
	if !IsTemp(p.base) {
		if err := w.decide(name, p.real, true); err != nil {
			return err
		}
	}
	err = unix.Unlinkat(p.dir.fd, p.base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		err = unix.Unlinkat(p.dir.fd, p.base, unix.AT_REMOVEDIR)
	}
	c.forget(name)
	return w.Error(name, pathErr("remove", name, err))
}

// RemoveEmptyDir removes name when it is an empty directory, and nothing
// else (a file that took a directory's place stays).
func (w *Workspace) RemoveEmptyDir(name string) error {
	var c *dirCache
	p, err := w.resolve(c, name, false)
	if err != nil {
		return w.missing(c, name, true, err)
	}
	defer c.release(p.dir)
	if err := w.decide(name, p.real, true); err != nil {
		return err
	}
	return w.Error(name, pathErr("rmdir", name, unix.Unlinkat(p.dir.fd, p.base, unix.AT_REMOVEDIR)))
}

// Rename renames oldname to newname, replacing newname atomically.
func (w *Workspace) Rename(oldname, newname string) error {
	return w.renameIn(nil, oldname, newname, 0)
}

// renameIn renames through c; flags are renameat2's (RENAME_EXCHANGE).
func (w *Workspace) renameIn(c *dirCache, oldname, newname string, flags uint) error {
	po, err := w.resolve(c, oldname, false)
	if err != nil {
		return w.missing(c, oldname, true, err)
	}
	defer c.release(po.dir)
	pn, err := w.resolve(c, newname, false)
	if err != nil {
		return w.missing(c, newname, true, err)
	}
	defer c.release(pn.dir)
	for _, x := range []struct{ name, real, base string }{{oldname, po.real, po.base}, {newname, pn.real, pn.base}} {
		if !IsTemp(x.base) {
			if err := w.decide(x.name, x.real, true); err != nil {
				return err
			}
			// And where the name leads, as CheckWrite (and hunk policy
			// check) decides it: a link to a denied file is not moved or
			// replaced though the rename touches the link alone.
			if err := w.checkIn(c, x.name, true); err != nil {
				return err
			}
		}
	}
	if flags != 0 {
		err = renameat2(po.dir.fd, po.base, pn.dir.fd, pn.base, flags)
	} else {
		err = unix.Renameat(po.dir.fd, po.base, pn.dir.fd, pn.base)
	}
	c.forget(oldname, newname)
	if flags != 0 {
		return err
	}
	return w.Error(newname, pathErr("rename", newname, err))
}

// Link creates newname as a hard link to oldname.
func (w *Workspace) Link(oldname, newname string) error { return w.linkIn(nil, oldname, newname) }

func (w *Workspace) linkIn(c *dirCache, oldname, newname string) error {
	po, err := w.resolve(c, oldname, false)
	if err != nil {
		return w.missing(c, oldname, false, err)
	}
	defer c.release(po.dir)
	if !IsTemp(po.base) {
		if err := w.decide(oldname, po.real, false); err != nil {
			return err
		}
	}
	pn, err := w.resolve(c, newname, false)
	if err != nil {
		return w.missing(c, newname, true, err)
	}
	defer c.release(pn.dir)
	if !IsTemp(pn.base) {
		if err := w.decide(newname, pn.real, true); err != nil {
			return err
		}
	}
	err = unix.Linkat(po.dir.fd, po.base, pn.dir.fd, pn.base, 0)
	c.forget(newname)
	return w.Error(newname, pathErr("link", newname, err))
}

// symlinkIn creates name as a symbolic link to target (stored as given).
func (w *Workspace) symlinkIn(c *dirCache, target, name string) error {
	p, err := w.resolve(c, name, false)
	if err != nil {
		return w.missing(c, name, true, err)
	}
	defer c.release(p.dir)
	if !IsTemp(p.base) {
		if err := w.decide(name, p.real, true); err != nil {
			return err
		}
	}
	return w.Error(name, pathErr("symlink", name, unix.Symlinkat(target, p.dir.fd, p.base)))
}

// mkdirIn creates the directory name (its parent must exist).
func (w *Workspace) mkdirIn(c *dirCache, name string) error {
	p, err := w.resolve(c, name, false)
	if err != nil {
		return w.missing(c, name, true, err)
	}
	defer c.release(p.dir)
	if err := w.decide(name, p.real, true); err != nil {
		return err
	}
	err = unix.Mkdirat(p.dir.fd, p.base, 0o777)
	c.forget(name)
	return pathErr("mkdir", name, err)
}

// MkdirAll creates name and its parents.
func (w *Workspace) MkdirAll(name string) error {
	if err := w.CheckWrite(name); err != nil {
		return err
	}
	c := newDirCache()
	defer c.close()
	var missing []string
	for d := name; d != "." && d != "/" && d != ""; d, _ = splitName(d) {
		fi, err := w.statIn(c, d, true)
		if err == nil {
			switch {
			case !fi.IsDir() && d == name:
				return result.Errorf(result.AlreadyExists, "%s is a file, not a directory: nothing was made", Quote(name)).At(name).
					WithHint("choose another name for the directory, or remove the file first")
			case !fi.IsDir():
				return result.Errorf(result.NotFound, "%s: a component of the path is not a directory (%s is a file)", Quote(name), Quote(d)).At(name)
			}
			break
		}
		if result.As(err).Code != result.NotFound {
			return err
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := w.mkdirIn(c, missing[i]); err != nil && !os.IsExist(err) {
			return w.Error(missing[i], err)
		}
	}
	return nil
}

// FollowLinks returns the name that a write to name really replaces: where
// every link on its way, and in its last component, leads (resolved from
// the link's directory; an absolute target must lie inside the root). A
// dangling symlink resolves to its (missing) target. Anything that leads
// outside, or a loop, is OUTSIDE_WORKSPACE. A missing name is returned as
// it is.
func (w *Workspace) FollowLinks(name string) (string, error) { return w.followIn(nil, name) }

func (w *Workspace) followIn(c *dirCache, name string) (string, error) {
	p, err := w.resolve(c, name, true)
	if err != nil {
		if e := w.Error(name, err); result.As(e).Code != result.NotFound {
			return "", e
		}
		return name, nil
	}
	c.release(p.dir)
	return p.real, nil
}
