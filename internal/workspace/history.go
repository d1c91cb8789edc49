package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// Recording asks that the changes of one operation be recorded in the
// workspace's history (package history): Disk(w).Recording(r) writes
// through transactions that, when they commit, leave one entry naming
// every file's pre-image (kept as a blob: a transaction's backup, linked
// rather than removed) and post-image. A history that cannot be written
// never stops the operation: Warn says what was not recorded.
type Recording struct {
	Command string // the command or tool ("apply-patch", "edit", "write_file", …)
	Session string // --session or the MCP session's id ("" none)
	Tool    bool   // made by a tool call (hunk mcp, hunk call), not a person's command
	Undoes  string // the entry an undo takes back
	Check   string // the check the change is made under (history.Entry.Check)
	Warn    func(string)
	// ID is the recorded entry's id, once the operation committed ("" when
	// nothing was recorded).
	ID string
}

func (r *Recording) warn(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
	}
}

// History opens the workspace's history (once; made when missing), or
// says why there is none: no state directory, history turned off
// (Options.History.Off), or one that cannot be used. An operation a killed hunk
// left open is settled against the tree (holdsPost) by the next one to
// record or list (its Notes say so).
func (w *Workspace) History() (*history.Store, error) {
	w.histOnce.Do(func() {
		switch {
		case w.opts.History.Off:
			w.histErr = errors.New("history is off")
			return
		}
		dir, err := w.StateDir("history")
		if err != nil {
			w.histErr = err
			return
		}
		w.hist, w.histErr = history.Open(dir, w.HistoryLimit(), w.holdsPost)
		if w.histErr == nil {
			// Every workspace's history together, bounded by any run
			// (history.Collect): a workspace used once leaves one no
			// later run of its own would prune.
			w.hist.NoteOwner(w.dir)
			_, _ = history.Collect(filepath.Dir(dir), dir, w.HistoryLimit(), time.Now())
		}
	})
	return w.hist, w.histErr
}

// StateDir is this workspace's private directory of kind ("history",
// "output") in hunk's state, made when missing, or why there is none.
func (w *Workspace) StateDir(kind string) (string, error) {
	if w.stateBase == "" {
		return "", errors.New("there is no state directory (set HOME or XDG_STATE_HOME)")
	}
	return PrivateDir(w.stateBase, "hunk", kind, w.stateRel[len(w.stateRel)-1])
}

// Approvals is the workspace's store of a person's out-of-band yeses
// (hunk approve), in hunk's state beside the history, or why there is none.
func (w *Workspace) Approvals() (*approval.Store, error) {
	dir, err := w.StateDir("approvals")
	if err != nil {
		return nil, err
	}
	return approval.Open(dir), nil
}

// HistoryLimit is what the history keeps.
func (w *Workspace) HistoryLimit() history.Limits {
	if l := w.opts.History.Limits; l != nil {
		return *l
	}
	return history.DefaultLimits
}

// holdsPost reports whether the workspace holds f's post-image.
func (w *Workspace) holdsPost(f history.FileChange) bool {
	cur, err := w.Image(f.Path)
	if err != nil {
		return false
	}
	return SameImage(cur, f.Post)
}

// Image is what name is now (nil: nothing there), as history records it:
// found by an exact walk, which follows no symbolic link (a link on the way
// is LinkOnWay: a STALE error naming it).
func (w *Workspace) Image(name string) (*history.Image, error) {
	c := exactCache()
	defer c.close()
	fi, err := w.statIn(c, name, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || result.As(err).Code == result.NotFound {
			return nil, nil
		}
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := w.readlinkIn(c, name)
		return &history.Image{Link: t}, err
	case fi.IsDir():
		return &history.Image{Dir: true, Mode: fi.Mode().Perm()}, nil
	}
	data, err := w.readFileIn(c, name, false)
	if err != nil {
		return nil, err
	}
	return &history.Image{Hash: history.Hash(data), Mode: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}, nil
}

// SameImage reports whether a (what is there now) is b in content: the
// same bytes, the same link target, a directory for a directory, nothing
// for nothing. Modes are not compared.
func SameImage(a, b *history.Image) bool {
	switch {
	case a == nil || b == nil:
		return a == nil && b == nil
	case b.Dir || a.Dir:
		return a.Dir == b.Dir
	case b.Link != "" || a.Link != "":
		return a.Link == b.Link && a.Hash == "" && b.Hash == ""
	}
	return a.Hash == b.Hash
}

// ReadFileRaw reads name's content without asking the path policy: what
// history keeps and compares, never handed to a command's caller. Its walk
// follows no symbolic link: the history names real paths.
func (w *Workspace) ReadFileRaw(name string) ([]byte, error) {
	c := exactCache()
	defer c.close()
	return w.readFileIn(c, name, false)
}

// openNoFollow opens name for reading, never following a last-component
// link.
func (b *Batch) openNoFollow(name string) (*os.File, *unix.Stat_t, error) {
	fd, base, ok := b.at(name)
	if !ok {
		return nil, nil, pathErr("open", name, unix.ENOENT)
	}
	f, err := openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, pathErr("open", name, err)
	}
	st, err := b.w.regularStat(name, f)
	if err != nil {
		return nil, nil, err
	}
	return blocking(f, unix.O_RDONLY, name), st, nil
}

// preImage stores what name holds now as a blob of op and returns its
// image: a link's target, a directory, or a file's content (linked into
// the history when link is true — name is a backup nothing else will
// change — copied otherwise).
func (t *diskTxn) preImage(op *history.Op, name string, link bool) (*history.Image, error) {
	if link {
		// A backup nothing else names: one fstatat and one linkat, nothing
		// read — its hash is taken later, by the prune (history.Op.LinkNew).
		if fd, base, ok := t.b.at(name); ok {
			var st unix.Stat_t
			if unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 {
				im, err := op.LinkNew(st.Size, func(to string) error { return unix.Linkat(fd, base, unix.AT_FDCWD, to, 0) })
				if err == nil {
					im.Mode = modeOf(uint32(st.Mode))
					return im, nil
				}
			}
		}
	}
	fi, err := t.b.Lstat(name)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := t.w.Readlink(name)
		return &history.Image{Link: target}, err
	case fi.IsDir():
		return &history.Image{Dir: true, Mode: fi.Mode().Perm()}, nil
	}
	f, st, err := t.b.openNoFollow(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im, err := op.PutFile(f)
	if err != nil {
		return nil, err
	}
	im.Mode = modeOf(uint32(st.Mode))
	return im, nil
}

// modeOf is a stat(2) mode's permission bits as an fs.FileMode, setuid,
// setgid and sticky included.
func modeOf(m uint32) fs.FileMode {
	out := fs.FileMode(m).Perm()
	if m&unix.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// prepareHistory begins recording the transaction: each file's pre-image
// stored (before is true before the steps, when the target still holds
// it; otherwise after them, from the backups), its entry written pending.
// Any failure is said and leaves the transaction unrecorded (nil).
func (t *diskTxn) prepareHistory(before bool) *history.Op {
	rec := t.rec
	store, err := t.w.History()
	if err != nil {
		if t.w.Records() {
			rec.warn("history: this operation is not recorded: " + err.Error())
		}
		return nil
	}
	hop, err := store.Begin()
	if err != nil {
		rec.warn("history: this operation is not recorded: " + err.Error())
		return nil
	}
	e := &history.Entry{Command: rec.Command, Session: rec.Session, Tool: rec.Tool, Undoes: rec.Undoes, Check: rec.Check}
	// Each file's images, on the commit's workers (a backup is linked
	// into the history; a small copy joins the pack under the Op's lock).
	files := make([]history.FileChange, len(t.ops))
	errs := make([]error, len(t.ops))
	t.parallel(func(i int) {
		op := t.ops[i]
		fc := history.FileChange{Path: op.target}
		var err error
		switch {
		case op.dirOnly: // made at commit: among laterDirs below
		case op.replaceDir:
			fc.Pre = &history.Image{Dir: true} // its files are the removals' own changes
			fc.Post = &history.Image{Hash: op.hash, Mode: op.mode, Link: op.linkTarget}
		case op.remove:
			src, link := t.backupNow(op), true
			if before {
				src, link = op.target, false
			}
			fc.Pre, err = t.preImage(hop, src, link)
		default:
			if op.existed {
				src, link := op.backup, true
				if before || src == "" {
					src, link = op.target, false
				}
				fc.Pre, err = t.preImage(hop, src, link)
			}
			fc.Post = &history.Image{Hash: op.hash, Mode: op.mode, Link: op.linkTarget}
		}
		files[i], errs[i] = fc, err
	})
	for i, err := range errs {
		if err != nil {
			hop.Abort()
			rec.warn(fmt.Sprintf("history: this operation is not recorded: %s: %v", t.ops[i].name, err))
			return nil
		}
	}
	e.Files = files[:0]
	at := map[string]int{}
	for i, fc := range files {
		if !t.ops[i].dirOnly {
			at[fc.Path] = len(e.Files)
			e.Files = append(e.Files, fc)
		}
	}
	for _, d := range append(t.dirs, t.laterDirs...) { // an undo removes them again, when empty
		if i, ok := at[d]; ok { // where a removed file stood: one change of the path
			e.Files[i].Post = &history.Image{Dir: true}
			continue
		}
		e.Files = append(e.Files, history.FileChange{Path: d, Post: &history.Image{Dir: true}})
	}
	// By path: the staging order is the order concurrent stages ended.
	sort.Slice(e.Files, func(i, j int) bool { return e.Files[i].Path < e.Files[j].Path })
	if err := hop.Prepare(e); err != nil {
		hop.Abort()
		rec.warn("history: this operation is not recorded: " + err.Error())
		return nil
	}
	rec.ID = e.ID
	return hop
}

// commitHistory makes the prepared entry part of the history.
func (t *diskTxn) commitHistory(hop *history.Op) {
	if hop == nil {
		return
	}
	if err := hop.Commit(); err != nil {
		t.rec.warn("history: " + err.Error())
	}
}

// abortHistory drops the prepared entry: the transaction rolled back.
func (t *diskTxn) abortHistory(hop *history.Op) {
	if hop != nil {
		hop.Abort()
		t.rec.ID = ""
	}
}

// recordOne runs change — one step that is atomic by itself (a rename, a
// mkdir) — as an operation of the history whose files are files: the
// entry is written pending before it and committed after it, dropped if it
// fails. A history that cannot be written never stops the change.
func (w *Workspace) recordOne(rec *Recording, files []history.FileChange, change func() error) error {
	if rec == nil {
		return change()
	}
	store, err := w.History()
	if err != nil {
		if w.Records() {
			rec.warn("history: this operation is not recorded: " + err.Error())
		}
		return change()
	}
	hop, err := store.Begin()
	if err == nil {
		e := &history.Entry{Command: rec.Command, Session: rec.Session, Tool: rec.Tool, Undoes: rec.Undoes, Check: rec.Check, Files: files}
		if err = hop.Prepare(e); err != nil {
			hop.Abort()
		} else {
			rec.ID = e.ID
		}
	}
	if err != nil {
		rec.warn("history: this operation is not recorded: " + err.Error())
		return change()
	}
	if err := change(); err != nil {
		hop.Abort()
		rec.ID = ""
		return err
	}
	if err := hop.Commit(); err != nil {
		rec.warn("history: " + err.Error())
	}
	return nil
}
