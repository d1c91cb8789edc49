package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

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
	// laterDirs: directories made at commit, where a file the transaction
	// removed stood (phases.go), in creation order.
	laterDirs []string
	asides    bool // a directory was put aside (phases.go)
	done      bool

	j journal // the recovery record while the transaction runs (journal.go)
	// single marks a transaction of one operation (writeOne): its one
	// rename is atomic by itself, so it keeps no journal (log) and no
	// backup.
	single bool

	prune bool // PruneEmptyDirs was asked

	// rec, when set, records the transaction in the workspace's history
	// (history.go).
	rec *Recording

	// failAt, when > 0, makes the failAt-th commit step fail (tests only);
	// crashAt stops the commit dead there instead, no rollback, as a kill
	// would (the journal left for recovery).
	failAt, crashAt int
}

type txnOp struct {
	name      string // as the caller named it (for messages)
	target    string // the file replaced or removed (links followed for writes)
	tmp       string // staged content ("" for a removal)
	remove    bool
	removeDir bool // the removal is of an empty directory
	link      bool // tmp is a symbolic link (not flushed: there is no data)
	// later: the directories to make at commit before the rename, from
	// one where a file stands that the transaction removes (phases.go);
	// dirOnly: they are all the op makes (a Mkdir). replaceDir: the target
	// is a directory, put aside at commit as the backup.
	later      []string
	dirOnly    bool
	replaceDir bool
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

// StageParts is Stage of the content parts make, one after the other.
func (t *diskTxn) StageParts(name string, parts [][]byte, opt WriteOptions) error {
	if err := t.w.checkIn(t.b.c, name, true); err != nil {
		return err
	}
	return t.stage(name, parts, opt)
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
	replaceDir := err == nil && fi.IsDir() && opt.ReplaceDir && target == name
	var old fs.FileInfo
	if !replaceDir {
		if old, err = replaceable(name, fi, err, opt); err != nil {
			return err
		}
	}
	dir, _ := splitName(target)
	var later []string
	tmp := TempName(target)
	if !opt.NoParents && dir != "." && old == nil {
		l, wait, err := t.mkdirAll(dir)
		if err != nil {
			return err
		}
		if l != nil {
			later, tmp = l, laterTemp(wait, target)
		}
	}
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
		t.log(journalEntry{Op: "stage", Target: target, Tmp: tmp, Existed: old != nil, CreateOnly: opt.CreateOnly, Dir: replaceDir, Hash: fmt.Sprintf("%s-%d", sum, n)})
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
	t.ops = append(t.ops, &txnOp{name: name, target: target, tmp: tmp, createOnly: opt.CreateOnly, existed: old != nil, hash: sum, mode: mode, later: later, replaceDir: replaceDir})
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
	tmp := TempName(name)
	var later []string
	if dir, _ := splitName(name); dir != "." && old == nil {
		l, wait, err := t.mkdirAll(dir)
		if err != nil {
			return err
		}
		if l != nil {
			later, tmp = l, laterTemp(wait, name)
		}
	}
	t.log(journalEntry{Op: "stage", Target: name, Tmp: tmp, Existed: old != nil, Link: true, Hash: contentHash([]byte(target))})
	if err := b.symlink(target, tmp); err != nil {
		return w.Error(name, unwrapPath(err))
	}
	t.mu.Lock()
	t.ops = append(t.ops, &txnOp{name: name, target: name, tmp: tmp, link: true, existed: old != nil, linkTarget: target, later: later})
	t.mu.Unlock()
	return nil
}

// Mkdir creates the directory name and its missing parents, which a
// rollback removes again (at commit, where a file the transaction removes
// stands in the place of one).
func (t *diskTxn) Mkdir(name string) error {
	if err := t.w.CheckWrite(name); err != nil {
		return err
	}
	later, _, err := t.mkdirAll(name)
	if err == nil && later != nil {
		t.mu.Lock()
		t.ops = append(t.ops, &txnOp{name: name, target: name, later: later, dirOnly: true})
		t.mu.Unlock()
	}
	return err
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
	t.ops = append(t.ops, &txnOp{name: name, target: name, remove: true, removeDir: fi.IsDir()})
	t.mu.Unlock()
	return nil
}

// mkdirAll creates dir and its missing parents, remembering each one it
// created so that a rollback can remove them again. Where something that
// is not a directory stands in the place of one, it creates nothing and
// returns the directories from that one down (later: made at commit, once
// the removal Commit requires of it is done) and wait, the directory above
// it, where a file staged under them waits meanwhile.
func (t *diskTxn) mkdirAll(dir string) (later []string, wait string, err error) {
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
				later = []string{d}
				for i := len(missing) - 1; i >= 0; i-- {
					later = append(later, missing[i])
				}
				wait, _ = splitName(d)
				return later, wait, nil
			}
			break
		}
		if re := result.As(err); re.Code != result.NotFound {
			return nil, "", err
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := t.w.mkdirIn(t.b.c, missing[i])
		t.b.forget(missing[i])
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, "", t.w.Error(missing[i], err)
		}
		t.dirs = append(t.dirs, missing[i])
	}
	return nil, "", nil
}

// log records e in the journal, unless the transaction is single.
func (t *diskTxn) log(e journalEntry) {
	if !t.single {
		t.j.log(e)
	}
}

// Len is the number of staged writes and removals.
func (t *diskTxn) Len() int { return len(t.ops) }
