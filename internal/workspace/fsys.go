package workspace

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/history"
)

// FS is what the engines that change files (apply, edit, write) need of a
// workspace: reading and resolving names, locking them, and writing through
// one path — a transaction for many files (Begin) or a single file
// (WriteFile, a transaction of one operation). Disk is the real one; DryRun
// wraps any FS so that every write is planned and checked in full and then
// discarded. The engines never write any other way.
type FS interface {
	Resolve(p string) (string, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	FollowLinks(name string) (string, error)
	Readlink(name string) (string, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Open(name string) (*os.File, error)
	ReadFile(name string) ([]byte, error)
	Lock(names ...string) (unlock func(), err error)
	// DidYouMean adds near existing names to a NOT_FOUND error on name.
	DidYouMean(name string, err error) error
	// CheckWrite refuses a change of name the path policy denies (a dry
	// run too).
	CheckWrite(name string) error

	// Begin starts a transaction over many files.
	Begin() Txn

	// Changes atomic by themselves, each recorded as one operation of the
	// history (nothing written, nothing recorded, under DryRun):
	//
	// MkdirAll makes name and its missing parents (recorded: the
	// directories made, which an undo removes).
	MkdirAll(name string) error
	// Move renames from to to, which must not exist (recorded as one
	// change with its source, the image of what moved).
	Move(from, to string) error
	// RemoveEmptyDirs removes those of dirs that are empty directories,
	// deepest first (a directory left empty by the ones before it too),
	// and returns them — recorded as an operation of their own only when
	// the FS has recorded none yet (an undo that changed no file).
	RemoveEmptyDirs(dirs []string) ([]string, error)
	// WriteFile replaces (or creates) one file atomically; its content is
	// parts, written one after the other (an edit of a big file need not
	// join its unchanged parts into one more buffer).
	WriteFile(name string, parts [][]byte, opt WriteOptions) error
	// Done releases what the FS holds for one operation (open
	// directories); it may be used again afterwards.
	Done()
}

// Txn is a multi-file transaction: every staged write and removal becomes
// visible at Commit, or none does (see diskTxn for how). Stage, StageLink,
// Mkdir, Remove and RemoveDir must be safe for concurrent use: apply-patch
// stages a patch's files from several workers, one path by one worker.
type Txn interface {
	Stage(name string, data []byte, opt WriteOptions) error
	// StageParts is Stage of the content parts make, written one after
	// the other (a binary patch's result: slices of the old content and
	// of the delta, never joined).
	StageParts(name string, parts [][]byte, opt WriteOptions) error
	// StageLink stages name as a symbolic link to target (name itself is
	// replaced, never what it points to). The target is stored as given:
	// hunk never follows a link out of the workspace when it reads or
	// writes through it later.
	StageLink(name, target string) error
	// Mkdir creates an empty directory (and its parents) now; Abort and a
	// failed Commit remove what it created.
	Mkdir(name string) error
	// Remove records that name (a file or link, never what it points to)
	// is to be removed at Commit; RemoveDir, an empty directory.
	Remove(name string) error
	RemoveDir(name string) error
	// PruneEmptyDirs makes Commit remove the directories its removals
	// leave empty, up to the root (git apply's and GNU patch's way).
	PruneEmptyDirs()
	Commit() error
	Abort()
}

// Disk is the FS of a real workspace. Its accesses go through a Batch:
// one system call per access, not one per path component.
// A workspace with a gate (SetGate) gives it every change first.
func Disk(w *Workspace) FS {
	if w.gate != nil {
		return &gated{FS: &disk{w: w, b: w.Batch()}, g: w.gate}
	}
	return &disk{w: w, b: w.Batch()}
}

// Recorded is f (Disk, Restoring) with its commits recorded in the
// workspace's history as one operation each (rec: what to record them as;
// rec.ID gets the entry's id).
func Recorded(f FS, rec *Recording) FS {
	if g, ok := f.(*gated); ok {
		return &gated{FS: Recorded(g.FS, rec), g: g.g, ask: g.ask}
	}
	d, ok := f.(*disk)
	if !ok {
		return f // a dry run records nothing
	}
	r := *d
	r.rec = rec
	return &r
}

// Restoring is Recorded (rec nil: not recorded) for the history's
// restores — undo: its walks follow no symbolic link at all. A path the
// history recorded is where the change really landed, a real path; a link
// on its way now (a directory a command replaced by a link into .git) is
// refused as STALE, never followed.
func Restoring(w *Workspace, rec *Recording) FS {
	return &disk{w: w, b: w.ExactBatch(), rec: rec}
}

type disk struct {
	w   *Workspace
	b   *Batch
	rec *Recording // nil: not recorded
}

func (d *disk) Resolve(p string) (string, error)           { return d.w.Resolve(p) }
func (d *disk) Stat(name string) (fs.FileInfo, error)      { return d.w.Stat(name) }
func (d *disk) Lstat(name string) (fs.FileInfo, error)     { return d.b.Lstat(name) }
func (d *disk) FollowLinks(name string) (string, error)    { return d.b.FollowLinks(name) }
func (d *disk) Readlink(name string) (string, error)       { return d.w.Readlink(name) }
func (d *disk) ReadDir(name string) ([]fs.DirEntry, error) { return d.w.ReadDir(name) }
func (d *disk) Open(name string) (*os.File, error)         { return d.w.Open(name) }
func (d *disk) ReadFile(name string) ([]byte, error)       { return d.b.ReadFile(name) }
func (d *disk) Lock(names ...string) (func(), error)       { return d.b.Lock(names...) }
func (d *disk) DidYouMean(name string, err error) error    { return d.w.DidYouMean(name, err) }
func (d *disk) CheckWrite(name string) error               { return d.w.checkIn(d.b.c, name, true) }
func (d *disk) Begin() Txn                                 { return d.w.begin(d.b, d.rec) }
func (d *disk) Done()                                      { d.b.Close() }

func (d *disk) WriteFile(name string, parts [][]byte, opt WriteOptions) error {
	return d.w.writeOne(d.b, d.rec, name, parts, opt)
}

func (d *disk) MkdirAll(name string) error {
	// The directories this makes, outermost first: what an undo removes.
	var made []history.FileChange
	for dir := name; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
		if _, err := d.b.Lstat(dir); err == nil {
			break
		}
		made = append([]history.FileChange{{Path: dir, Post: &history.Image{Dir: true}}}, made...)
	}
	rec := d.rec
	if len(made) == 0 {
		rec = nil // nothing made: nothing to record
	}
	return d.w.recordOne(rec, made, func() error { return d.w.MkdirAll(name) })
}

func (d *disk) Move(from, to string) error {
	im, err := d.w.Image(from)
	if err != nil {
		return err
	}
	move := []history.FileChange{{Path: to, From: from, Pre: im, Post: im}}
	return d.w.recordOne(d.rec, move, func() error { return d.b.Rename(from, to) })
}

func (d *disk) RemoveEmptyDirs(dirs []string) ([]string, error) {
	gone := emptyDirs(d.b, dirs)
	var changes []history.FileChange
	for _, dir := range gone {
		changes = append(changes, history.FileChange{Path: dir, Pre: &history.Image{Dir: true}})
	}
	rec := d.rec
	if rec != nil && rec.ID != "" {
		rec = nil // part of the operation recorded already
	}
	var removed []string
	err := d.w.recordOne(rec, changes, func() error {
		for _, dir := range gone {
			if d.b.Remove(dir) == nil {
				removed = append(removed, dir)
			}
		}
		return nil
	})
	return removed, err
}

// emptyDirs are those of dirs (deepest first) that are directories left
// empty once those before them are gone.
func emptyDirs(b *Batch, dirs []string) []string {
	sorted := append([]string(nil), dirs...)
	sort.Slice(sorted, func(i, j int) bool { return strings.Count(sorted[i], "/") > strings.Count(sorted[j], "/") })
	gone := map[string]bool{}
	var out []string
	for _, dir := range sorted {
		fi, err := b.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		ents, err := b.ReadDir(dir)
		empty := err == nil
		for _, e := range ents {
			empty = empty && gone[path.Join(dir, e.Name())]
		}
		if empty {
			gone[dir] = true
			out = append(out, dir)
		}
	}
	return out
}

// DryRun wraps an FS so that nothing is written: reads, locks and checks
// are real, and what would be written is discarded. `--dry-run` is every
// engine run over this wrapper.
func DryRun(f FS) FS { return dryRun{f} }

type dryRun struct{ FS }

func (d dryRun) Begin() Txn { return &discard{check: d.CheckWrite} }
func (d dryRun) WriteFile(name string, _ [][]byte, _ WriteOptions) error {
	return d.CheckWrite(name)
}
func (d dryRun) MkdirAll(name string) error { return d.CheckWrite(name) }
func (d dryRun) Move(from, to string) error {
	if err := d.CheckWrite(from); err != nil {
		return err
	}
	return d.CheckWrite(to)
}

// RemoveEmptyDirs of a dry run removes none and names none: the files its
// transaction would have removed from them are still there.
func (d dryRun) RemoveEmptyDirs([]string) ([]string, error) { return nil, nil }

// discard is a dry run's transaction: changes checked against the policy,
// then dropped.
type discard struct{ check func(string) error }

func (t *discard) Stage(name string, _ []byte, _ WriteOptions) error { return t.check(name) }
func (t *discard) StageParts(name string, _ [][]byte, _ WriteOptions) error {
	return t.check(name)
}
func (t *discard) Remove(name string) error       { return t.check(name) }
func (t *discard) RemoveDir(name string) error    { return t.check(name) }
func (t *discard) StageLink(name, _ string) error { return t.check(name) }
func (t *discard) Mkdir(name string) error        { return t.check(name) }
func (*discard) PruneEmptyDirs()                  {}
func (*discard) Commit() error                    { return nil }
func (*discard) Abort()                           {}
