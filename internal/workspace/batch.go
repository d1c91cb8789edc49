package workspace

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/result"
)

// Batch is a view of the workspace for work on many files — one
// operation's: it walks each directory once, through the door (door.go),
// and works relative to that descriptor with *at(2) system calls on a
// single name component that is never followed if it is a symlink
// (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW) — one system call per access, and every
// access to a directory's files (the policy's decision, the staging, the
// rename) on the one descriptor its walk gave. Safe for concurrent use;
// Close releases the directories.
//
// A batch remembers what Lstat found for each name (a patch asks about the
// same name when locking, planning and staging) until the batch itself
// changes that name; it is meant for one operation, not to watch a tree.
type Batch struct {
	w     *Workspace
	c     *dirCache
	mu    sync.Mutex
	stats map[string]lstatResult

	volOnce sync.Once
	vol     bool
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// Batch opens a batch view of the workspace.
func (w *Workspace) Batch() *Batch {
	return &Batch{w: w, c: newDirCache(), stats: map[string]lstatResult{}}
}

// ExactBatch is a Batch whose walks follow no symbolic link (Restoring).
func (w *Workspace) ExactBatch() *Batch {
	b := w.Batch()
	b.c.exact = true
	return b
}

// ReadDir is Workspace.ReadDir through the batch's directories.
func (b *Batch) ReadDir(name string) ([]fs.DirEntry, error) { return b.w.readDirIn(b.c, name) }

// Open is Workspace.Open through the batch's directories: a tree's files
// opened with one system call each (search).
func (b *Batch) Open(name string) (*os.File, error) {
	f, _, err := b.w.openIn(b.c, name, os.O_RDONLY, 0, true)
	return f, err
}

// skipFlush reports whether commits skip the durability flushes: when the
// workspace is not Durable (--fsync off, the default: each file is still
// replaced atomically by rename, as for every other command), or when it
// lies on a filesystem that keeps nothing across a restart anyway.
func (b *Batch) skipFlush() bool {
	return !b.w.opts.Durable || b.volatile()
}

// volatile is Workspace.volatile, asked once per batch.
func (b *Batch) volatile() bool {
	b.volOnce.Do(func() { b.vol = b.w.volatile() })
	return b.vol
}

// forget drops what the batch remembers of names it is about to change.
func (b *Batch) forget(names ...string) {
	b.mu.Lock()
	for _, n := range names {
		delete(b.stats, n)
	}
	b.mu.Unlock()
	b.c.forget(names...)
}

// Close releases the directories the batch opened.
func (b *Batch) Close() {
	b.c.close()
	b.mu.Lock()
	b.stats = map[string]lstatResult{}
	b.mu.Unlock()
}

// at returns the batch's descriptor of the directory holding name and
// name's last component (never followed); ok is false when the door cannot
// open that directory.
func (b *Batch) at(name string) (fd int, base string, ok bool) {
	p, err := b.w.resolve(b.c, name, false)
	if err != nil || p.base == "." {
		return 0, "", false
	}
	return p.dir.fd, p.base, true
}

// cache is the batch's directories (nil for no batch).
func (b *Batch) cache() *dirCache {
	if b == nil {
		return nil
	}
	return b.c
}

// dirFD is the batch's directory dir opened for reading (flock, fsync).
func (b *Batch) dirFD(dir string) (int, error) {
	d, err := b.c.dir(b.w, dir)
	if err != nil {
		return -1, err
	}
	return d.readable()
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
	r.fi, r.err = b.w.statIn(b.c, name, false)
	if r.err == nil || result.As(r.err).Code == result.NotFound {
		b.mu.Lock()
		b.stats[name] = r
		b.mu.Unlock()
	}
	return r.fi, r.err
}

// ReadFile is Workspace.ReadFile through the batch's directories.
func (b *Batch) ReadFile(name string) ([]byte, error) { return b.w.readFileIn(b.c, name, true) }

// FollowLinks is Workspace.FollowLinks through the batch's directories,
// with one Lstat for a name that is not a symlink.
func (b *Batch) FollowLinks(name string) (string, error) {
	fi, err := b.Lstat(name)
	if err != nil {
		if re := result.As(err); re.Code == result.NotFound {
			return name, nil
		}
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		// Not a link: where its directory really is, and its name.
		p, err := b.w.resolve(b.c, name, false)
		if err != nil {
			return name, nil
		}
		return p.real, nil
	}
	return b.w.followIn(b.c, name)
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
	p, err := b.w.resolve(b.c, name, false)
	if err != nil {
		return b.w.missing(b.c, name, true, err)
	}
	defer b.c.release(p.dir)
	if !IsTemp(p.base) {
		if err := b.w.decide(name, p.real, true); err != nil {
			return err
		}
	}
	fd, base := p.dir.fd, p.base
	f, err := openat(fd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm&fs.ModePerm))
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
	return b.w.symlinkIn(b.c, target, name)
}

// Remove is Workspace.Remove for a file or symlink (never followed).
func (b *Batch) Remove(name string) error {
	b.forget(name)
	return b.w.removeIn(b.c, name)
}

// Rename is Workspace.Rename through the batch's directories.
func (b *Batch) Rename(oldname, newname string) error {
	b.forget(oldname, newname)
	return b.w.renameIn(b.c, oldname, newname, 0)
}

// errNoExchange reports that the filesystem cannot exchange two names.
var errNoExchange = errors.New("renameat2 RENAME_EXCHANGE not supported")

// Exchange swaps two names atomically (renameat2 with RENAME_EXCHANGE);
// errNoExchange where that is not available.
func (b *Batch) Exchange(a, c string) error {
	b.forget(a, c)
	err := b.w.renameIn(b.c, a, c, renameExchangeFlag)
	switch err {
	case nil:
		return nil
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return errNoExchange
	}
	if _, ok := err.(unix.Errno); ok {
		return b.w.Error(c, pathErr("rename", c, err))
	}
	return err
}

// Link is Workspace.Link through the batch's directories.
func (b *Batch) Link(oldname, newname string) error {
	b.forget(oldname, newname)
	return b.w.linkIn(b.c, oldname, newname)
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
	var dirs []string
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
	return b.w.lockDirs(dirs, b.dirFD)
}
