package workspace

// A transaction's commit: the staged files made durable (when asked),
// then put in place one step at a time under the journal, rolled back
// together on a failure.

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"golang.org/x/sys/unix"
)

// Commit makes every staged change visible — the removals, then the
// writes (phases.go) — or, on any failure, none: the changes already made
// are rolled back from their backups, and every temporary file and created
// directory is removed.
func (t *diskTxn) Commit() error {
	if t.done {
		return errors.New("workspace: transaction already finished")
	}
	t.done = true
	if t.ownBatch {
		defer t.b.Close()
	}
	if len(t.ops) == 0 {
		return nil
	}
	seen := make(map[string]string, len(t.ops))
	for _, op := range t.ops {
		if op.dirOnly {
			continue
		}
		if other, ok := seen[op.target]; ok {
			t.cleanup()
			return result.Errorf(result.InvalidArgument, "%s and %s are the same file (through a symlink); refusing to change it twice", other, op.name)
		}
		seen[op.target] = op.name
	}
	if err := t.checkLater(); err != nil {
		t.cleanup()
		return err
	}
	if err := t.flushStaged(); err != nil {
		t.rollback()
		return err
	}
	var hop *history.Op
	if t.rec != nil && t.single {
		// No journal and no backup: the pre-image is stored and the entry
		// written pending before the one rename.
		hop = t.prepareHistory(true)
	}
	// The steps of a phase are independent (one target each), so two
	// workers share them; on a failure the others stop and every step
	// done is undone. The removals go first: a directory the writes
	// replace holds only their backups by then, and a file the writes
	// need a directory in place of is gone.
	var failed atomic.Bool
	var firstErr error
	var errOnce sync.Once
	for _, removals := range []bool{true, false} {
		t.parallel(func(i int) {
			if op := t.ops[i]; failed.Load() || op.remove != removals {
				return
			}
			if err := t.step(i, t.ops[i]); err != nil {
				failed.Store(true)
				errOnce.Do(func() { firstErr = err })
			}
		})
	}
	if failed.Load() && errors.Is(firstErr, errCrash) {
		return firstErr
	}
	if failed.Load() {
		t.rollback()
		t.abortHistory(hop)
		return firstErr
	}
	if t.rec != nil && !t.single {
		// Every step done, the old contents in their backups: they become
		// the entry's blobs, and the entry is pending before the journal
		// says committed (a crash before that rolls the tree back and the
		// next hunk drops the entry; after it, keeps it).
		hop = t.prepareHistory(false)
	}
	t.log(journalEntry{Op: "committed"})
	t.parallel(func(i int) {
		if op := t.ops[i]; op.backup != "" && !op.replaceDir {
			_ = t.b.Remove(t.backupNow(op))
		}
	})
	for _, op := range t.ops {
		if op.replaceDir && op.backup != "" {
			removeAside(t.w, op.backup, 0) // after the backups it holds, which went with it
		}
	}
	// The renames are durable once their directories are.
	err := t.flushDirs()
	if t.prune {
		t.pruneDirs()
	}
	t.j.close()
	t.commitHistory(hop)
	return err
}

// PruneEmptyDirs asks Commit to remove the directories its removals leave
// empty (pruneDirs).
func (t *diskTxn) PruneEmptyDirs() { t.prune = true }

// pruneDirs removes the directories a removal left empty, up to the root,
// as git apply and GNU patch do (a file moved out of the last place in its
// directory leaves no empty directory behind). A directory that is not
// empty stays; it is tried only after the commit, so nothing to roll back.
func (t *diskTxn) pruneDirs() {
	seen := map[string]bool{}
	var dirs []string
	for _, op := range t.ops {
		if !op.remove {
			continue
		}
		for d, _ := splitName(op.target); d != "." && d != "/" && d != "" && !seen[d] && !filepath.IsAbs(d); d, _ = splitName(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	// Deepest first: a directory is empty only once those under it are gone.
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		_ = t.w.RemoveEmptyDir(d)
	}
}

// commitWorkers is how many goroutines run the steps of a commit.
const commitWorkers = 2

// parallel runs f(i) for every op index on commitWorkers goroutines.
func (t *diskTxn) parallel(f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < commitWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(t.ops) {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// errCrash is a step's injected kill (crashAt, tests only).
var errCrash = errors.New("workspace: injected crash")

// step applies one staged change, first keeping the old content under a
// backup name.
func (t *diskTxn) step(i int, op *txnOp) error {
	w, b := t.w, t.b
	if t.failAt > 0 && i+1 == t.failAt {
		return result.Errorf(result.IOError, "%s: injected failure", op.name)
	}
	if t.crashAt > 0 && i+1 == t.crashAt {
		return errCrash
	}
	if len(op.later) > 0 {
		if err := t.makeLater(op); err != nil {
			return err
		}
	}
	if op.dirOnly {
		return nil
	}
	if op.replaceDir {
		if err := t.putDirAside(op); err != nil {
			return err
		}
		if err := b.Rename(op.tmp, op.target); err != nil {
			_ = b.Rename(op.backup, op.target)
			op.backup = ""
			return w.Error(op.name, unwrapPath(err))
		}
		op.tmp = ""
		op.applied = true
		return nil
	}
	if op.remove {
		op.backup = TempName(op.target)
		t.log(journalEntry{Op: "backup", Target: op.target, Backup: op.backup})
		if err := b.Rename(op.target, op.backup); err != nil {
			op.backup = ""
			return w.Error(op.name, unwrapPath(err))
		}
		op.applied = true
		return nil
	}
	if op.createOnly {
		// link(2) refuses an existing target: no window for a clobber.
		if err := b.Link(op.tmp, op.target); err != nil {
			return w.Error(op.name, unwrapPath(err))
		}
		_ = b.Remove(op.tmp)
		op.tmp = ""
		op.applied = true
		return nil
	}
	if op.existed && !t.single {
		// Swap the new content in: the temporary name then holds the old
		// content, which is the backup (one atomic renameat2).
		switch err := b.Exchange(op.tmp, op.target); {
		case err == nil:
			op.backup, op.tmp = op.tmp, ""
			op.applied = true
			return nil
		case errors.Is(err, errNoExchange):
			if err := t.keepOld(op); err != nil {
				return err
			}
		default:
			return w.Error(op.name, unwrapPath(err))
		}
	}
	if err := b.Rename(op.tmp, op.target); err != nil {
		return w.Error(op.name, unwrapPath(err))
	}
	op.tmp = ""
	op.applied = true
	return nil
}

// keepOld saves the target's current content under a backup name: a hard
// link where the filesystem allows it, a copy otherwise.
func (t *diskTxn) keepOld(op *txnOp) error {
	w, bt := t.w, t.b
	b := TempName(op.target)
	t.log(journalEntry{Op: "backup", Target: op.target, Backup: b})
	if err := bt.Link(op.target, b); err == nil {
		op.backup = b
		return nil
	}
	data, err := bt.ReadFile(op.target)
	if err != nil {
		return err
	}
	if err := bt.createExcl(b, data, 0o600, false, false, 0, 0); err != nil {
		return w.Error(op.name, unwrapPath(err))
	}
	op.backup = b
	return nil
}

// rollback undoes the steps done, in reverse order: the writes, then
// (the directories made at commit gone) the removals; and removes every
// temporary file and created directory.
func (t *diskTxn) rollback() {
	w := t.b
	for _, removals := range []bool{false, true} {
		if removals {
			for i := len(t.laterDirs) - 1; i >= 0; i-- {
				_ = t.w.RemoveEmptyDir(t.laterDirs[i]) // empty again: its files are undone
				t.b.forget(t.laterDirs[i])
			}
		}
		for i := len(t.ops) - 1; i >= 0; i-- {
			op := t.ops[i]
			if !op.applied || op.remove != removals {
				continue
			}
			switch {
			case op.replaceDir:
				_ = w.Remove(op.target) // the new file; its directory comes back
				_ = w.Rename(op.backup, op.target)
				op.backup = ""
			case op.backup != "":
				_ = w.Rename(op.backup, op.target)
				op.backup = ""
			default: // a new file: remove it
				_ = w.Remove(op.target)
			}
		}
	}
	t.cleanup()
}

// Abort discards a transaction that was not committed: temporary files and
// created directories are removed; no target was ever touched.
func (t *diskTxn) Abort() {
	if t.done {
		return
	}
	t.done = true
	t.cleanup()
	if t.ownBatch {
		t.b.Close()
	}
}

func (t *diskTxn) cleanup() {
	defer t.j.close()
	for _, op := range t.ops {
		if op.tmp != "" {
			_ = t.b.Remove(op.tmp)
		}
		if op.backup != "" {
			_ = t.b.Remove(op.backup)
		}
	}
	for i := len(t.dirs) - 1; i >= 0; i-- {
		_ = t.w.RemoveEmptyDir(t.dirs[i])
	}
}

// flushWorkers is how many files are flushed at once: the filesystem joins
// concurrent flushes into one journal commit, so many at once cost little
// more than one.
const flushWorkers = 32

// flushStaged makes every staged file's data durable before the first
// rename (so that a crash never leaves a renamed file empty or torn): each
// file's writeback was started when it was staged; here each is flushed
// with fdatasync(2), many at a time. Only the transaction's own files are
// flushed — unlike syncfs(2) or sync(2), whose cost depends on what every
// other process has left unwritten on the filesystem.
func (t *diskTxn) flushStaged() error {
	if t.b.skipFlush() {
		return nil
	}
	var tmps []*txnOp
	for _, op := range t.ops {
		if op.tmp != "" && !op.link {
			tmps = append(tmps, op)
		}
	}
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for w := 0; w < min(flushWorkers, len(tmps)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tmps) {
					return
				}
				if err := t.b.fdatasync(tmps[i].tmp); err != nil {
					errOnce.Do(func() { firstErr = t.w.Error(tmps[i].name, unwrapPath(err)) })
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// flushDirs makes the renames and removals durable: fsync(2) of every
// directory a change was made in.
func (t *diskTxn) flushDirs() error {
	if t.b.skipFlush() {
		return nil
	}
	dirs := map[string]bool{}
	for _, op := range t.ops {
		d, _ := splitName(op.target)
		dirs[d] = true
	}
	for _, d := range t.dirs {
		p, _ := splitName(d)
		dirs[p] = true
	}
	for d := range dirs {
		if err := t.b.fsyncDir(d); err != nil {
			return t.w.Error(d, err)
		}
	}
	return nil
}

// volatile reports whether the workspace lies on a filesystem that keeps
// nothing across a restart (tmpfs, ramfs), where flushing is pure cost.
func (w *Workspace) volatile() bool {
	return volatileFS(w.dir)
}

// fdatasync flushes the data of the file name (never following a symlink).
func (b *Batch) fdatasync(name string) error {
	fd, base, ok := b.at(name)
	if !ok {
		return pathErr("open", name, unix.ENOENT)
	}
	f, err := openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathErr("open", name, err)
	}
	defer unix.Close(f)
	return pathErr("fdatasync", name, ignoringEINTR(func() error { return fdatasync(f) }))
}

// fsyncDir flushes directory dir's entries.
func (b *Batch) fsyncDir(dir string) error {
	fd, err := b.dirFD(dir)
	if err != nil {
		return err
	}
	if err := unix.Fsync(fd); err != nil && err != unix.EINVAL {
		return err
	}
	return nil
}
