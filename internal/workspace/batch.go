package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/result"
)

// Batch is a view of the workspace for work on many files: it opens each
// directory once, through the workspace's root (so it lies inside), and
// works relative to that descriptor with *at(2) system calls on a single
// name component that is never followed if it is a symlink (O_NOFOLLOW,
// AT_SYMLINK_NOFOLLOW) — one system call per access, rather than one per
// path component and the bookkeeping of an os.File. Anything else (a
// symlink to follow, an absolute path, host mode) goes through the
// workspace. Safe for concurrent use; Close releases the directories.
//
// A batch remembers what Lstat found for each name (a patch asks about the
// same name when locking, planning and staging) until the batch itself
// changes that name; it is meant for one operation, not to watch a tree.
type Batch struct {
	w     *Workspace
	mu    sync.Mutex
	dirs  map[string]*os.File
	stats map[string]lstatResult
	// missing are directories found absent (a patch's new directories,
	// asked about once for each of their files); forget clears one.
	missing map[string]bool

	volOnce sync.Once
	vol     bool
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// Batch opens a batch view of the workspace.
func (w *Workspace) Batch() *Batch {
	return &Batch{w: w, dirs: map[string]*os.File{}, stats: map[string]lstatResult{}, missing: map[string]bool{}}
}

// volatile is Workspace.volatile, asked once per batch.
// skipFlush reports whether commits skip the durability flushes: when the
// workspace is not Durable (--fsync off, the default: each file is still
// replaced atomically by rename, as for every other command), or when it
// lies on a filesystem that keeps nothing across a restart anyway.
func (b *Batch) skipFlush() bool {
	return !b.w.opts.Durable || b.volatile()
}

func (b *Batch) volatile() bool {
	b.volOnce.Do(func() { b.vol = b.w.volatile() })
	return b.vol
}

// forget drops what the batch remembers of names it is about to change.
func (b *Batch) forget(names ...string) {
	b.mu.Lock()
	for _, n := range names {
		delete(b.stats, n)
		delete(b.missing, n)
	}
	b.mu.Unlock()
}

// Close releases the directories the batch opened.
func (b *Batch) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.dirs {
		f.Close()
	}
	b.dirs = map[string]*os.File{}
	b.stats = map[string]lstatResult{}
	b.missing = map[string]bool{}
}

// at returns a descriptor of the directory holding name and name's last
// component; ok is false when the batch cannot serve name directly.
func (b *Batch) at(name string) (fd int, base string, ok bool) {
	if b.w.root == nil || filepath.IsAbs(name) {
		return 0, "", false
	}
	dir, base := splitName(name)
	if base == "." || base == ".." || base == "/" || base == "" {
		return 0, "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.dirs[dir]
	if !ok {
		if b.missing[dir] {
			return 0, "", false
		}
		var err error
		if f, err = b.w.root.Open(dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				b.missing[dir] = true
			}
			return 0, "", false // let the workspace report it
		}
		b.dirs[dir] = f
	}
	return int(f.Fd()), base, true
}

// inMissing reports whether name's directory was found absent.
func (b *Batch) inMissing(name string) bool {
	dir, _ := splitName(name)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.missing[dir]
}

// dirFile returns the Batch's open directory dir (opened once, through the
// root), or false where the Batch does not serve it.
func (b *Batch) dirFile(dir string) (*os.File, bool) {
	if b.w.root == nil || filepath.IsAbs(dir) {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.dirs[dir]
	if !ok {
		var err error
		if f, err = b.w.root.Open(dir); err != nil {
			return nil, false
		}
		b.dirs[dir] = f
	}
	return f, true
}

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Lstat is Workspace.Lstat (remembered: see Batch).
func (b *Batch) Lstat(name string) (fs.FileInfo, error) {
	b.mu.Lock()
	r, ok := b.stats[name]
	b.mu.Unlock()
	if ok {
		return r.fi, r.err
	}
	r.fi, r.err = b.lstat(name)
	if r.err == nil || result.As(r.err).Code == result.NotFound {
		b.mu.Lock()
		b.stats[name] = r
		b.mu.Unlock()
	}
	return r.fi, r.err
}

func (b *Batch) lstat(name string) (fs.FileInfo, error) {
	fd, base, ok := b.at(name)
	if !ok {
		if b.inMissing(name) {
			return nil, b.w.Error(name, pathErr("lstat", name, unix.ENOENT))
		}
		return b.w.Lstat(name)
	}
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return nil, b.w.Error(name, pathErr("lstat", name, err))
	}
	return statInfo(base, &st), nil
}

// ReadFile is Workspace.ReadFile. A final symlink is followed through the
// workspace (inside the root only).
func (b *Batch) ReadFile(name string) ([]byte, error) {
	if err := b.w.checkIn(b, name, false); err != nil {
		return nil, err
	}
	fd, base, ok := b.at(name)
	if !ok {
		return b.w.ReadFile(name)
	}
	var f int
	err := ignoringEINTR(func() (err error) {
		f, err = unix.Openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err == unix.ELOOP {
		return b.w.ReadFile(name)
	}
	if err != nil {
		return nil, b.w.Error(name, pathErr("open", name, err))
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return nil, b.w.Error(name, pathErr("stat", name, err))
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, b.w.Error(name, pathErr("read", name, syscall.EISDIR))
	}
	data := make([]byte, 0, st.Size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := unix.Read(f, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, b.w.Error(name, pathErr("read", name, err))
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
		if st.Mode&unix.S_IFMT == unix.S_IFREG && int64(len(data)) == st.Size {
			return data, nil // all of it, as it was when opened
		}
	}
}

// FollowLinks is Workspace.FollowLinks, with one Lstat for a name that is
// not a symlink.
func (b *Batch) FollowLinks(name string) (string, error) {
	fi, err := b.Lstat(name)
	if err != nil {
		if re := result.As(err); re.Code == result.NotFound {
			return name, nil
		}
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return name, nil
	}
	return b.w.FollowLinks(name)
}

// createExcl creates name (which must not exist) with mode perm less the
// umask — or, when exact, perm exactly — writes data and, when chown, gives
// it the owner uid:gid; it returns an error naming name.
func (b *Batch) createExcl(name string, data []byte, perm fs.FileMode, exact, chown bool, uid, gid int) error {
	return b.create(name, [][]byte{data}, perm, exact, chown, uid, gid, false)
}

// create is createExcl for content given as parts written one after the
// other; writeback also starts writing the data to disk
// (sync_file_range, no waiting), so that a later flush of this file mostly
// finds it done. Big content is written in chunks whose writeback starts at
// once, so the disk works while the rest is copied.
func (b *Batch) create(name string, parts [][]byte, perm fs.FileMode, exact, chown bool, uid, gid int, writeback bool) error {
	b.forget(name)
	fd, base, ok := b.at(name)
	if !ok {
		f, err := b.w.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		for _, data := range parts {
			if err == nil {
				_, err = f.Write(data)
			}
		}
		if err == nil && exact && (perm&^fs.ModePerm != 0 || uint32(perm&fs.ModePerm)&umask() != 0) {
			err = f.Chmod(perm)
		}
		if err == nil && chown {
			_ = f.Chown(uid, gid)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = b.w.Remove(name)
			return b.w.Error(name, err)
		}
		return nil
	}
	var f int
	err := ignoringEINTR(func() (err error) {
		f, err = unix.Openat(fd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm&fs.ModePerm))
		return err
	})
	if err != nil {
		return b.w.Error(name, pathErr("open", name, err))
	}
	fail := func(err error) error {
		unix.Close(f)
		_ = unix.Unlinkat(fd, base, 0)
		return b.w.Error(name, pathErr("write", name, err))
	}
	size := 0
	for _, data := range parts {
		for off := 0; off < len(data); {
			n, err := unix.Write(f, data[off:min(len(data), off+writebackChunk)])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fail(err)
			}
			if n == writebackChunk {
				startWriteback(f, int64(size), int64(n))
			}
			off += n
			size += n
		}
	}
	if exact && (perm&^fs.ModePerm != 0 || uint32(perm&fs.ModePerm)&umask() != 0) {
		mode := uint32(perm & fs.ModePerm)
		if perm&fs.ModeSetuid != 0 {
			mode |= unix.S_ISUID
		}
		if perm&fs.ModeSetgid != 0 {
			mode |= unix.S_ISGID
		}
		if perm&fs.ModeSticky != 0 {
			mode |= unix.S_ISVTX
		}
		if err := unix.Fchmod(f, mode); err != nil {
			return fail(err)
		}
	}
	if chown {
		_ = unix.Fchown(f, uid, gid)
	}
	if writeback && size > 0 && !b.skipFlush() {
		startWriteback(f, 0, 0)
	}
	if err := unix.Close(f); err != nil {
		_ = unix.Unlinkat(fd, base, 0)
		return b.w.Error(name, pathErr("close", name, err))
	}
	return nil
}

// symlink creates name as a symbolic link to target.
func (b *Batch) symlink(target, name string) error {
	b.forget(name)
	if fd, base, ok := b.at(name); ok {
		return pathErr("symlink", name, unix.Symlinkat(target, fd, base))
	}
	if b.w.root != nil {
		return b.w.root.Symlink(target, name)
	}
	return os.Symlink(target, b.w.host(name))
}

// Remove is Workspace.Remove for a file or symlink (never followed).
func (b *Batch) Remove(name string) error {
	b.forget(name)
	fd, base, ok := b.at(name)
	if !ok {
		return b.w.Remove(name)
	}
	err := unix.Unlinkat(fd, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		err = unix.Unlinkat(fd, base, unix.AT_REMOVEDIR)
	}
	return b.w.Error(name, pathErr("remove", name, err))
}

// Rename is Workspace.Rename (names in one directory are served directly).
func (b *Batch) Rename(oldname, newname string) error {
	b.forget(oldname, newname)
	if fd, obase, nbase, ok := b.pair(oldname, newname); ok {
		return b.w.Error(newname, pathErr("rename", newname, unix.Renameat(fd, obase, fd, nbase)))
	}
	return b.w.Rename(oldname, newname)
}

// errNoExchange reports that the filesystem cannot exchange two names.
var errNoExchange = errors.New("renameat2 RENAME_EXCHANGE not supported")

// Exchange swaps two names in one directory atomically (renameat2 with
// RENAME_EXCHANGE); errNoExchange where that is not available.
func (b *Batch) Exchange(a, c string) error {
	b.forget(a, c)
	fd, abase, cbase, ok := b.pair(a, c)
	if !ok {
		return errNoExchange
	}
	err := renameExchange(fd, abase, cbase)
	switch err {
	case nil:
		return nil
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return errNoExchange
	}
	return b.w.Error(c, pathErr("rename", c, err))
}

// Link is Workspace.Link (names in one directory are served directly).
func (b *Batch) Link(oldname, newname string) error {
	b.forget(oldname, newname)
	if fd, obase, nbase, ok := b.pair(oldname, newname); ok {
		return b.w.Error(newname, pathErr("link", newname, unix.Linkat(fd, obase, fd, nbase, 0)))
	}
	return b.w.Link(oldname, newname)
}

func (b *Batch) pair(oldname, newname string) (int, string, string, bool) {
	od, _ := splitName(oldname)
	nd, _ := splitName(newname)
	if od != nd {
		return 0, "", "", false
	}
	fd, obase, ok := b.at(oldname)
	if !ok {
		return 0, "", "", false
	}
	_, nbase := splitName(newname)
	if nbase == "." || nbase == ".." || nbase == "" {
		return 0, "", "", false
	}
	return fd, obase, nbase, true
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// Lock is Workspace.Lock for many names: the names are reduced to one per
// directory first.
func (b *Batch) Lock(names ...string) (func(), error) {
	seen := map[string]bool{}
	var reps, dirs []string
	for _, n := range names {
		t, err := b.FollowLinks(n)
		if err != nil {
			// A link that leads out is refused by whatever would follow
			// it; removing the link itself only needs its own directory.
			t = n
		}
		d, _ := splitName(t)
		if seen[d] {
			continue
		}
		seen[d] = true
		// Workspace.Lock locks the directory of each name it is given:
		// name a (never existing) child of d.
		reps = append(reps, joinName(d, TempPrefix+"lock"+TempSuffix))
		// Its rule, through the batch's cached lookups and directories
		// (a patch of thousands of files shares few directories): the
		// nearest directory that exists.
		dirs = append(dirs, nearestDir(d, func(d string) bool {
			fi, err := b.Lstat(d)
			if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				fi, err = b.w.Stat(d)
			}
			return err == nil && fi.IsDir()
		}))
	}
	unlock, err := b.w.lockDirs(dirs, func(d string) (*os.File, bool, error) {
		if f, ok := b.dirFile(d); ok {
			return f, false, nil // the batch's own: it closes them
		}
		return nil, false, errNotServed
	})
	if errors.Is(err, errNotServed) {
		return b.w.Lock(reps...) // names the batch does not serve
	}
	return unlock, err
}

// errNotServed: a directory the batch does not open itself (an absolute
// name, a workspace without a root).
var errNotServed = errors.New("not served by the batch")
