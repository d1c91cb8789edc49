package workspace

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/result"
)

// Txn is a multi-file transaction: all of a patch's writes and removals
// succeed together or none is visible.
//
// Stage writes each new content to a temporary file beside its target as soon
// as it is known (so the caller need not hold every file in memory); Remove
// records a removal. Commit then makes the staged data durable once (one
// syncfs(2) of the workspace's filesystem rather than an fsync per file) and
// renames every temporary file over its target, in staging order. Before a
// target is replaced or removed, its old content is kept under a backup name
// (a hard link, or a copy where links are not supported; a removal is a
// rename to the backup name), so that a failure at any step rolls back the
// steps already taken. On success the backups are removed and the
// filesystem is synced again, so that a reported success is on disk.
//
// Each single file is replaced by rename(2) and is therefore old or new at
// any instant, also across a crash. A crash in the middle of Commit can
// leave some files new and others old, plus backup files (named like every
// hunk temporary file, see IsTemp); a failure that is not a crash never does.
//
// Stage and Remove may be called from several goroutines; Commit and Abort
// from one.
type Txn struct {
	w    *Workspace
	mu   sync.Mutex
	ops  []*txnOp
	dirs []string // directories created for staged files, in creation order
	done bool

	// failAt, when > 0, makes the failAt-th commit step fail (tests only).
	failAt int
}

type txnOp struct {
	name       string // as the caller named it (for messages)
	target     string // the file replaced or removed (links followed for writes)
	tmp        string // staged content ("" for a removal)
	remove     bool
	createOnly bool
	backup     string // old content, once the step is done
	applied    bool
}

// Begin starts a transaction on the workspace.
func (w *Workspace) Begin() *Txn { return &Txn{w: w} }

// Stage writes data to a temporary file beside name's target (a symlink
// inside the root is followed, as WriteFile does), creating missing parent
// directories unless opt.NoParents. The target is untouched until Commit. An
// existing file's mode (and owner, when we may) is given to the new content;
// opt.CreateOnly makes Commit refuse a target that exists by then.
func (t *Txn) Stage(name string, data []byte, opt WriteOptions) error {
	w := t.w
	target, err := w.FollowLinks(name)
	if err != nil {
		return err
	}
	perm := opt.Perm
	if perm == 0 {
		perm = 0o666
	}
	var old fs.FileInfo
	if fi, err := w.Lstat(target); err == nil {
		if fi.IsDir() {
			return result.Errorf(result.IsDirectory, "%s: is a directory", name)
		}
		if opt.CreateOnly {
			return result.Errorf(result.AlreadyExists, "%s: file already exists", name)
		}
		old = fi
	} else if re := result.As(err); re.Code != result.NotFound {
		return err
	}
	dir, _ := splitName(target)
	if !opt.NoParents && dir != "." && old == nil {
		if err := t.mkdirAll(dir); err != nil {
			return err
		}
	}
	tmp := TempName(target)
	f, err := w.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return w.Error(name, unwrapPath(err))
	}
	fail := func(err error) error {
		f.Close()
		_ = w.Remove(tmp)
		return w.Error(name, unwrapPath(err))
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if old != nil {
		if err := f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return fail(err)
		}
		if st, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			_ = f.Chown(int(st.Uid), int(st.Gid))
		}
	}
	if err := f.Close(); err != nil {
		_ = w.Remove(tmp)
		return w.Error(name, unwrapPath(err))
	}
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: target, tmp: tmp, createOnly: opt.CreateOnly})
	t.mu.Unlock()
	return nil
}

// Remove records that name is to be removed at Commit. name itself is
// removed: a symlink is removed, never its target. It must exist and not be
// a directory.
func (t *Txn) Remove(name string) error {
	fi, err := t.w.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return result.Errorf(result.IsDirectory, "%s: is a directory", name)
	}
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: name, remove: true})
	t.mu.Unlock()
	return nil
}

// mkdirAll creates dir and its missing parents, remembering each one it
// created so that a rollback can remove them again.
func (t *Txn) mkdirAll(dir string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d, _ = splitName(d) {
		fi, err := t.w.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return result.Errorf(result.NotFound, "%s: a component of the path is not a directory", dir)
			}
			break
		}
		if re := result.As(err); re.Code != result.NotFound {
			return err
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := t.w.mkdir(missing[i]); err != nil && !errors.Is(err, fs.ErrExist) {
			return t.w.Error(missing[i], err)
		}
		t.dirs = append(t.dirs, missing[i])
	}
	return nil
}

func (w *Workspace) mkdir(name string) error {
	if w.root != nil {
		return w.root.Mkdir(name, 0o777)
	}
	return os.Mkdir(w.host(name), 0o777)
}

// Len is the number of staged writes and removals.
func (t *Txn) Len() int { return len(t.ops) }

// Commit makes every staged change visible, in staging order, or — on any
// failure — none: the changes already made are rolled back from their
// backups, and every temporary file and created directory is removed.
func (t *Txn) Commit() error {
	if t.done {
		return errors.New("workspace: transaction already finished")
	}
	t.done = true
	if len(t.ops) == 0 {
		return nil
	}
	seen := make(map[string]string, len(t.ops))
	for _, op := range t.ops {
		if other, ok := seen[op.target]; ok {
			t.cleanup()
			return result.Errorf(result.InvalidArgument, "%s and %s are the same file (through a symlink); refusing to change it twice", other, op.name)
		}
		seen[op.target] = op.name
	}
	if err := t.sync(); err != nil {
		t.rollback(0)
		return err
	}
	for i, op := range t.ops {
		if err := t.step(i, op); err != nil {
			t.rollback(i)
			return err
		}
	}
	for _, op := range t.ops {
		if op.backup != "" {
			_ = t.w.Remove(op.backup)
		}
	}
	// The renames themselves are durable once their directories are synced;
	// one more syncfs covers them all.
	return t.sync()
}

// step applies one staged change, first keeping the old content under a
// backup name.
func (t *Txn) step(i int, op *txnOp) error {
	w := t.w
	if t.failAt > 0 && i+1 == t.failAt {
		return result.Errorf(result.IOError, "%s: injected failure", op.name)
	}
	if op.remove {
		op.backup = TempName(op.target)
		if err := w.Rename(op.target, op.backup); err != nil {
			op.backup = ""
			return w.Error(op.name, unwrapPath(err))
		}
		op.applied = true
		return nil
	}
	if op.createOnly {
		// link(2) refuses an existing target: no window for a clobber.
		if err := w.Link(op.tmp, op.target); err != nil {
			return w.Error(op.name, unwrapPath(err))
		}
		_ = w.Remove(op.tmp)
		op.tmp = ""
		op.applied = true
		return nil
	}
	if fi, err := w.Lstat(op.target); err == nil && fi.Mode().IsRegular() {
		if err := t.keepOld(op); err != nil {
			return err
		}
	}
	if err := w.Rename(op.tmp, op.target); err != nil {
		return w.Error(op.name, unwrapPath(err))
	}
	op.tmp = ""
	op.applied = true
	return nil
}

// keepOld saves the target's current content under a backup name: a hard
// link where the filesystem allows it, a copy otherwise.
func (t *Txn) keepOld(op *txnOp) error {
	w := t.w
	b := TempName(op.target)
	if err := w.Link(op.target, b); err == nil {
		op.backup = b
		return nil
	}
	data, err := w.ReadFile(op.target)
	if err != nil {
		return err
	}
	f, err := w.OpenFile(b, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return w.Error(op.name, unwrapPath(err))
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = w.Remove(b)
		return w.Error(op.name, unwrapPath(err))
	}
	op.backup = b
	return nil
}

// rollback undoes steps [0, n) in reverse order and removes every temporary
// file and created directory.
func (t *Txn) rollback(n int) {
	w := t.w
	for i := n - 1; i >= 0; i-- {
		op := t.ops[i]
		if !op.applied {
			continue
		}
		switch {
		case op.backup != "":
			_ = w.Rename(op.backup, op.target)
			op.backup = ""
		default: // a new file: remove it
			_ = w.Remove(op.target)
		}
	}
	t.cleanup()
}

// Abort discards a transaction that was not committed: temporary files and
// created directories are removed; no target was ever touched.
func (t *Txn) Abort() {
	if t.done {
		return
	}
	t.done = true
	t.cleanup()
}

func (t *Txn) cleanup() {
	for _, op := range t.ops {
		if op.tmp != "" {
			_ = t.w.Remove(op.tmp)
		}
		if op.backup != "" {
			_ = t.w.Remove(op.backup)
		}
	}
	for i := len(t.dirs) - 1; i >= 0; i-- {
		_ = t.w.Remove(t.dirs[i]) // only succeeds when empty
	}
}

// sync flushes the workspace's filesystem with one syncfs(2) — far cheaper
// than an fsync per file for a large patch, and the same guarantee for the
// rename that follows: the new content is on disk before it is visible.
func (t *Txn) sync() error {
	var fd int
	if t.w.root != nil {
		f, err := t.w.root.Open(".")
		if err != nil {
			return t.w.Error(".", err)
		}
		defer f.Close()
		fd = int(f.Fd())
	} else {
		f, err := os.Open(t.w.dir)
		if err != nil {
			return t.w.Error(".", err)
		}
		defer f.Close()
		fd = int(f.Fd())
	}
	if err := unix.Syncfs(fd); err != nil && !errors.Is(err, syscall.ENOSYS) {
		return result.Wrap(result.IOError, err, "syncing the workspace")
	}
	return nil
}
