package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// diskTxn is the Txn of a real workspace: all of a patch's writes and
// removals succeed together or none is visible.
//
// Stage writes each new content to a temporary file beside its target as soon
// as it is known (so the caller need not hold every file in memory) and
// starts writing it to disk; Remove records a removal. Commit then makes the
// staged data durable when the workspace is Durable (fdatasync of each staged file, many at a time, so
// the filesystem joins them into few journal commits — and only the
// transaction's own files, never the rest of the filesystem as syncfs(2)
// would) and renames every temporary file over its target. Before a target
// is replaced or removed, its old content is kept under a backup name (the
// temporary name itself after an atomic exchange, a hard link or a copy
// where exchange is not supported; a removal is a rename to the backup
// name), so that a failure at any step rolls back the steps already taken.
// On success the backups are removed and the changed directories are
// fsynced, so that a reported success is on disk.
//
// Each single file is replaced by rename(2) and is therefore old or new at
// any instant, also across a crash. A crash in the middle of Commit can
// leave some files new and others old, plus backup files (named like every
// hunk temporary file, see IsTemp); a failure that is not a crash never does.
//
// Stage and Remove may be called from several goroutines; Commit and Abort
// from one.
type diskTxn struct {
	w        *Workspace
	b        *Batch
	ownBatch bool // b is closed when the transaction ends
	mu       sync.Mutex
	ops      []*txnOp
	dirs     []string // directories created for staged files, in creation order
	done     bool

	j journal // the recovery record while the transaction runs (journal.go)
	// single marks a transaction of one operation (writeOne): its one
	// rename is atomic by itself, so it keeps no journal (log) and no
	// backup.
	single bool

	prune bool // PruneEmptyDirs was asked

	// rec, when set, records the transaction in the workspace's history
	// (history.go).
	rec *Recording

	// failAt, when > 0, makes the failAt-th commit step fail (tests only).
	failAt int
}

type txnOp struct {
	name       string // as the caller named it (for messages)
	target     string // the file replaced or removed (links followed for writes)
	tmp        string // staged content ("" for a removal)
	remove     bool
	link       bool // tmp is a symbolic link (not flushed: there is no data)
	createOnly bool
	existed    bool   // the target existed when staged
	backup     string // old content, once the step is done
	applied    bool

	// The post-image, for the history: the staged content's SHA-256 (when
	// recording or journaled), its mode, a link's target.
	hash       string
	mode       fs.FileMode
	linkTarget string
}

// Begin starts a transaction on the workspace. Its file operations go
// through b (nil: a Batch of its own), which the caller keeps open until
// the transaction is finished.
func (w *Workspace) Begin(b *Batch) Txn { return w.begin(b, nil) }

func (w *Workspace) begin(b *Batch, rec *Recording) *diskTxn {
	if b == nil {
		return &diskTxn{w: w, b: w.Batch(), ownBatch: true, j: journal{w: w}, rec: rec}
	}
	return &diskTxn{w: w, b: b, j: journal{w: w}, rec: rec}
}

// writeOne replaces or creates one file atomically, through b (nil: a
// Batch of its own): a transaction of that one write.
func (w *Workspace) writeOne(b *Batch, rec *Recording, name string, parts [][]byte, opt WriteOptions) error {
	if err := w.checkIn(b.cache(), name, true); err != nil {
		return err
	}
	t := w.begin(b, rec)
	t.single = true
	if err := t.stage(name, parts, opt); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// Stage writes data to a temporary file beside name's target (a symlink
// inside the root is followed, as WriteFile does), creating missing parent
// directories unless opt.NoParents. The target is untouched until Commit. An
// existing file's mode (and owner, when we may) is given to the new content;
// opt.CreateOnly makes Commit refuse a target that exists by then.
func (t *diskTxn) Stage(name string, data []byte, opt WriteOptions) error {
	if err := t.w.checkIn(t.b.c, name, true); err != nil {
		return err
	}
	return t.stage(name, [][]byte{data}, opt)
}

func (t *diskTxn) stage(name string, parts [][]byte, opt WriteOptions) error {
	w, b := t.w, t.b
	target := name
	fi, err := b.Lstat(name)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 && !opt.ReplaceLink {
		if target, err = w.FollowLinks(name); err != nil {
			return err
		}
		fi, err = b.Lstat(target)
	}
	perm := opt.Perm
	if perm == 0 {
		perm = 0o666
	}
	old, err := replaceable(name, fi, err, opt)
	if err != nil {
		return err
	}
	dir, _ := splitName(target)
	if !opt.NoParents && dir != "." && old == nil {
		if err := t.mkdirAll(dir); err != nil {
			return err
		}
	}
	tmp := TempName(target)
	chown, uid, gid := false, 0, 0
	inherit := old != nil && old.Mode()&fs.ModeSymlink == 0 // a replaced link gives no mode
	if inherit {
		perm = old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if opt.ForcePerm && opt.Perm != 0 {
			perm = opt.Perm
		}
		if st, ok := old.Sys().(*syscall.Stat_t); ok && euid == 0 && (int(st.Uid) != euid || int(st.Gid) != egid) {
			chown, uid, gid = true, int(st.Uid), int(st.Gid)
		}
	}
	var sum string
	if !t.single || t.rec != nil { // the hash reads all of the content: only for a journal or the history
		var n int
		sum, n = hashParts(parts)
		t.log(journalEntry{Op: "stage", Target: target, Tmp: tmp, Existed: old != nil, CreateOnly: opt.CreateOnly, Hash: fmt.Sprintf("%s-%d", sum, n)})
	}
	exact := inherit || opt.ExactPerm
	if err := b.create(tmp, parts, perm, exact, chown, uid, gid, true); err != nil {
		return w.Error(name, unwrapPath(err))
	}
	mode := perm
	if !exact {
		mode &^= fs.FileMode(umask())
	}
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: target, tmp: tmp, createOnly: opt.CreateOnly, existed: old != nil, hash: sum, mode: mode})
	t.mu.Unlock()
	return nil
}

var (
	umaskOnce sync.Once
	umaskVal  uint32
	// The process's effective ids, to decide whether a new file needs the
	// old one's owner.
	euid, egid = os.Geteuid(), os.Getegid()
)

// umask reads the process umask once (setting it is the only way to read it).
func umask() uint32 {
	umaskOnce.Do(func() {
		umaskVal = uint32(syscall.Umask(0o022))
		syscall.Umask(int(umaskVal))
	})
	return umaskVal
}

// StageLink stages name as a symbolic link to target: a temporary link
// beside it, renamed over it at Commit (the old file or link kept as the
// backup, as for Stage).
func (t *diskTxn) StageLink(name, target string) error {
	if err := t.w.CheckWrite(name); err != nil {
		return err
	}
	w, b := t.w, t.b
	fi, err := b.Lstat(name)
	old, err := replaceable(name, fi, err, WriteOptions{})
	if err != nil {
		return err
	}
	if dir, _ := splitName(name); dir != "." && old == nil {
		if err := t.mkdirAll(dir); err != nil {
			return err
		}
	}
	tmp := TempName(name)
	t.log(journalEntry{Op: "stage", Target: name, Tmp: tmp, Existed: old != nil, Link: true, Hash: contentHash([]byte(target))})
	if err := b.symlink(target, tmp); err != nil {
		return w.Error(name, unwrapPath(err))
	}
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: name, tmp: tmp, link: true, existed: old != nil, linkTarget: target})
	t.mu.Unlock()
	return nil
}

// Mkdir creates the directory name and its missing parents, which a
// rollback removes again.
func (t *diskTxn) Mkdir(name string) error {
	if err := t.w.CheckWrite(name); err != nil {
		return err
	}
	return t.mkdirAll(name)
}

// Remove records that name is to be removed at Commit. name itself is
// removed: a symlink is removed, never its target. It must exist and not be
// a directory.
func (t *diskTxn) Remove(name string) error {
	if err := t.w.CheckWrite(name); err != nil {
		return err
	}
	return t.remove(name, false)
}

// RemoveDir is Remove for an empty directory (a submodule's, which git
// apply removes): it is renamed aside at Commit, restored on a rollback.
func (t *diskTxn) RemoveDir(name string) error {
	if err := t.w.CheckWrite(name); err != nil {
		return err
	}
	return t.remove(name, true)
}

func (t *diskTxn) remove(name string, emptyDir bool) error {
	fi, err := t.b.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() && !emptyDir {
		return result.Errorf(result.IsDirectory, "%s: is a directory", name)
	}
	if fi.IsDir() {
		if ents, err := t.w.ReadDir(name); err != nil || len(ents) > 0 {
			return result.Errorf(result.IsDirectory, "%s: is a directory that is not empty", name)
		}
	}
	t.log(journalEntry{Op: "remove", Target: name})
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: name, remove: true})
	t.mu.Unlock()
	return nil
}

// mkdirAll creates dir and its missing parents, remembering each one it
// created so that a rollback can remove them again.
func (t *diskTxn) mkdirAll(dir string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d, _ = splitName(d) {
		fi, err := t.b.Lstat(d) // cached: many new files share directories
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			fi, err = t.w.Stat(d)
		}
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
		err := t.w.mkdirIn(t.b.c, missing[i])
		t.b.forget(missing[i])
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return t.w.Error(missing[i], err)
		}
		t.dirs = append(t.dirs, missing[i])
	}
	return nil
}

// log records e in the journal, unless the transaction is single.
func (t *diskTxn) log(e journalEntry) {
	if !t.single {
		t.j.log(e)
	}
}

// Len is the number of staged writes and removals.
func (t *diskTxn) Len() int { return len(t.ops) }

// Commit makes every staged change visible, in staging order, or — on any
// failure — none: the changes already made are rolled back from their
// backups, and every temporary file and created directory is removed.
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
		if other, ok := seen[op.target]; ok {
			t.cleanup()
			return result.Errorf(result.InvalidArgument, "%s and %s are the same file (through a symlink); refusing to change it twice", other, op.name)
		}
		seen[op.target] = op.name
	}
	if err := t.flushStaged(); err != nil {
		t.rollback(0)
		return err
	}
	var hop *history.Op
	if t.rec != nil && t.single {
		// No journal and no backup: the pre-image is stored and the entry
		// written pending before the one rename.
		hop = t.prepareHistory(true)
	}
	// The steps are independent (one target each), so two workers share
	// them; on a failure the others stop and every step done is undone.
	var failed atomic.Bool
	var firstErr error
	var errOnce sync.Once
	t.parallel(func(i int) {
		if failed.Load() {
			return
		}
		if err := t.step(i, t.ops[i]); err != nil {
			failed.Store(true)
			errOnce.Do(func() { firstErr = err })
		}
	})
	if failed.Load() {
		t.rollback(len(t.ops))
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
		if op := t.ops[i]; op.backup != "" {
			_ = t.b.Remove(op.backup)
		}
	})
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
		_ = t.w.Remove(d) // only succeeds when empty
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

// step applies one staged change, first keeping the old content under a
// backup name.
func (t *diskTxn) step(i int, op *txnOp) error {
	w, b := t.w, t.b
	if t.failAt > 0 && i+1 == t.failAt {
		return result.Errorf(result.IOError, "%s: injected failure", op.name)
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

// rollback undoes steps [0, n) in reverse order and removes every temporary
// file and created directory.
func (t *diskTxn) rollback(n int) {
	w := t.b
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
		_ = t.w.Remove(t.dirs[i]) // only succeeds when empty
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
