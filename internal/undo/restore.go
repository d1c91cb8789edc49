package undo

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Workspace is what the engine reads besides the FS it writes through:
// what a file is now as the history records it (found by a walk that
// follows no link), its bytes for a diff, and the checks of a name the
// history gives. *workspace.Workspace is one.
type Workspace interface {
	Image(name string) (*history.Image, error)
	ReadFileRaw(name string) ([]byte, error)
	CheckRead(name string) error
	Resolve(name string) (string, error)
	Confined() bool
}

// Options say how to take operations back.
type Options struct {
	// Force restores files changed since the operations (their current
	// content is kept in the history as the undo's).
	Force bool
	// DryRun: fsys is a dry run; the result says what would be restored.
	DryRun bool
	// Diff adds a unified diff of the restore (never of a file the path
	// policy keeps from being read).
	Diff bool
	// Keep leaves the files changed since the operations as they are
	// (Result.Kept) and restores the rest: a rollback (a change whose
	// check failed) never overwrites what someone else wrote meanwhile.
	Keep bool
}

// Result is what an undo did (or, dry, would do).
type Result struct {
	Undone                   []string // the operations taken back
	Added, Modified, Deleted []string // a removed directory ends in "/"
	// Forced are the files restored over later changes (Force), each with
	// how it had changed.
	Forced []string
	// Kept are the files left as they are (Keep), each with how it had
	// changed.
	Kept []string
	Diff string
	// Moved is the move taken back (its Path went back to its From).
	Moved *history.FileChange
}

// Run takes the chosen operations (newest first) back through fsys, an FS
// whose walks follow no link (workspace.Restoring, or a dry run over it),
// in one transaction: every file gets the content, mode or link target it
// had before the oldest of them, or none does. A file that no longer holds
// what the newest left there is STALE unless opt.Force. The directories the
// operations made go when the restore leaves them empty. A move is taken
// back alone. fsys records the undo as it was made (its Undoes set by the
// caller); nothing is recorded under a dry run.
func Run(ws Workspace, fsys workspace.FS, store *history.Store, chosen []*history.Entry, opt Options) (*Result, error) {
	ids := IDs(chosen)
	if mv, err := moveOf(chosen); err != nil || mv != nil {
		if err != nil {
			return nil, err
		}
		return undoMove(ws, fsys, chosen[0].ID, mv, opt)
	}
	plans := plansOf(chosen)
	stale, err := check(ws, plans)
	if err != nil {
		return nil, err
	}
	var kept []string
	if len(stale) > 0 && opt.Keep {
		kept, stale = stale, nil
		plans = slices.DeleteFunc(plans, func(p *plan) bool { return p.stale })
	}
	if len(stale) > 0 && !opt.Force {
		return nil, result.Errorf(result.Stale, "cannot undo %s: %s changed since: %s", strings.Join(ids, ", "),
			plural(len(stale), "a file", "files"), strings.Join(stale, "; ")).
			WithHint("look at them (hunk log --diff ID shows what the operation did); --force restores them anyway, keeping their current content in the history as the undo's")
	}
	names := make([]string, 0, len(plans))
	for _, p := range plans {
		names = append(names, p.path)
	}
	unlock, err := fsys.Lock(names...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := &restore{ws: ws, store: store, opt: opt, ids: ids,
		res: &Result{Undone: ids, Added: []string{}, Modified: []string{}, Deleted: []string{}, Forced: stale, Kept: kept}}
	made, err := r.run(fsys.Begin(), plans)
	if err != nil {
		return nil, err
	}
	// The directories the operations made go when the undo left them empty,
	// deepest first (recorded as an operation of its own when the undo
	// changed no file: an undone create_directory). A failure to remove one
	// leaves it, and says nothing: it was the operations' scaffolding.
	removed, _ := fsys.RemoveEmptyDirs(made)
	for _, d := range removed {
		r.res.Deleted = append(r.res.Deleted, d+"/")
	}
	r.res.Diff = r.diffs.String()
	return r.res, nil
}

// IDs are the operations' ids, in their order.
func IDs(list []*history.Entry) []string {
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.ID
	}
	return ids
}

// moveOf is the move among chosen, which must then be alone (a move's
// undo is a rename, not a restore).
func moveOf(chosen []*history.Entry) (*history.FileChange, error) {
	for _, e := range chosen {
		for _, f := range e.Files {
			if f.From == "" {
				continue
			}
			if len(chosen) > 1 || len(e.Files) > 1 {
				return nil, result.Usagef("operation %s moved %s to %s: undo it alone (hunk undo %s)", e.ID, f.From, f.Path, e.ID)
			}
			return &f, nil
		}
	}
	return nil, nil
}

// plan is one file's restore: what the oldest chosen operation found
// there (restored) and what the newest left (checked).
type plan struct {
	path      string
	pre, post *history.Image
	stale     bool // the file no longer holds what the newest left (check)
}

// madeDir reports whether the operations made the directory for a file:
// removed after the restore, if it is left empty.
func (p *plan) madeDir() bool { return p.post != nil && p.post.Dir && p.pre == nil }

// plansOf are the chosen operations' files, in the order the oldest
// operation first touched them.
func plansOf(chosen []*history.Entry) []*plan {
	var plans []*plan
	byPath := map[string]*plan{}
	for i := len(chosen) - 1; i >= 0; i-- {
		for _, f := range chosen[i].Files {
			if p, ok := byPath[f.Path]; ok {
				p.post = f.Post
				continue
			}
			p := &plan{path: f.Path, pre: f.Pre, post: f.Post}
			byPath[f.Path] = p
			plans = append(plans, p)
		}
	}
	return plans
}

// check refuses a name hunk would never write and lists the files that no
// longer hold what the operations left (how each changed).
func check(ws Workspace, plans []*plan) (stale []string, err error) {
	for _, p := range plans {
		if err := CheckPath(ws, p.path); err != nil {
			return nil, err
		}
		cur, err := ws.Image(p.path)
		if err != nil {
			return nil, err
		}
		if !p.madeDir() && !workspace.SameImage(cur, p.post) {
			p.stale = true
			stale = append(stale, fmt.Sprintf("%s (%s)", p.path, describeChange(cur, p.post)))
		}
	}
	return stale, nil
}

// restore stages the plans in one transaction.
type restore struct {
	ws    Workspace
	store *history.Store
	opt   Options
	ids   []string
	res   *Result
	diffs strings.Builder
}

// run stages each plan and commits; it returns the directories the
// operations made, for removal once they are empty.
func (r *restore) run(txn workspace.Txn, plans []*plan) (made []string, err error) {
	for _, p := range plans {
		if p.madeDir() {
			made = append(made, p.path)
			continue
		}
		if err := r.stage(txn, p); err != nil {
			txn.Abort()
			return nil, err
		}
	}
	return made, txn.Commit()
}

// stage puts back what p found: removes what it made, makes the directory
// it removed, restores a link or a file with its mode.
func (r *restore) stage(txn workspace.Txn, p *plan) error {
	cur, _ := r.ws.Image(p.path)
	if workspace.SameImage(cur, p.pre) && (p.pre == nil || p.pre.Mode == 0 || cur.Mode == p.pre.Mode || p.pre.Link != "") {
		return nil // already as it was
	}
	var oldData []byte
	showDiff := r.opt.Diff && r.ws.CheckRead(p.path) == nil // a read-denied file's content is never shown
	if cur != nil && cur.Hash != "" && showDiff {
		oldData, _ = r.ws.ReadFileRaw(p.path)
	}
	switch {
	case p.pre == nil:
		if cur == nil {
			return nil
		}
		r.res.Deleted = append(r.res.Deleted, p.path)
		if showDiff && oldData != nil {
			r.diffs.WriteString(deletion(p.path, oldData))
		}
		if cur.Dir {
			return txn.RemoveDir(p.path)
		}
		return txn.Remove(p.path)
	case p.pre.Dir:
		if cur != nil && cur.Dir {
			return nil
		}
		if cur != nil {
			// A file the operations put in the directory's place (a diff
			// replacing d/f by d): it goes, and the directory comes back
			// at commit, its files with it.
			r.res.Deleted = append(r.res.Deleted, p.path)
			if showDiff && oldData != nil {
				r.diffs.WriteString(deletion(p.path, oldData))
			}
			if err := txn.Remove(p.path); err != nil {
				return err
			}
			r.res.Added = append(r.res.Added, p.path+"/") // beside "D d": the directory
			return txn.Mkdir(p.path)
		}
		r.res.Added = append(r.res.Added, p.path)
		return txn.Mkdir(p.path)
	case p.pre.Link != "":
		r.addOrModify(p.path, cur)
		return txn.StageLink(p.path, p.pre.Link)
	}
	data, err := r.store.Blob(p.pre)
	if err != nil {
		return result.Errorf(result.NotFound, "cannot undo %s: the history no longer holds %s's content before it (%v)", strings.Join(r.ids, ", "), p.path, err).
			WithHint("nothing was changed; the history keeps a bounded number of operations (history-max-operations, -bytes, -age in the config)")
	}
	r.addOrModify(p.path, cur)
	if showDiff {
		r.diffs.WriteString(fileDiff(p.path, oldData, data, cur == nil))
	}
	// Where the operations made a directory of the file (a diff replacing
	// x by x/y), the directory goes at commit, emptied by the undo.
	return txn.Stage(p.path, data, workspace.WriteOptions{Perm: p.pre.Mode, ForcePerm: true, ExactPerm: true, ReplaceLink: true, ReplaceDir: cur != nil && cur.Dir})
}

func (r *restore) addOrModify(name string, cur *history.Image) {
	if cur == nil {
		r.res.Added = append(r.res.Added, name)
	} else {
		r.res.Modified = append(r.res.Modified, name)
	}
}

// undoMove takes back a move (move_file): the file or directory goes back
// where it was, when it is still as the move left it and nothing took its
// old place.
func undoMove(ws Workspace, fsys workspace.FS, id string, f *history.FileChange, opt Options) (*Result, error) {
	for _, p := range []string{f.Path, f.From} {
		if err := CheckPath(ws, p); err != nil {
			return nil, err
		}
		if err := fsys.CheckWrite(p); err != nil {
			return nil, err
		}
	}
	cur, err := ws.Image(f.Path)
	if err != nil {
		return nil, err
	}
	if !workspace.SameImage(cur, f.Post) && !opt.Force {
		return nil, result.Errorf(result.Stale, "cannot undo %s: %s changed since it was moved there (%s)", id, f.Path, describeChange(cur, f.Post)).
			WithHint("--force moves it back anyway")
	}
	if cur == nil {
		return nil, result.Errorf(result.NotFound, "cannot undo %s: %s is gone", id, f.Path)
	}
	if old, _ := ws.Image(f.From); old != nil {
		return nil, result.Errorf(result.AlreadyExists, "cannot undo %s: %s exists again; nothing was moved", id, f.From).
			WithHint("move or remove it first")
	}
	res := &Result{Undone: []string{id}, Added: []string{f.From}, Modified: []string{}, Deleted: []string{f.Path}, Moved: f}
	if opt.DryRun {
		return res, nil
	}
	unlock, err := fsys.Lock(f.Path, f.From)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := fsys.Move(f.Path, f.From); err != nil {
		return nil, err
	}
	return res, nil
}

// CheckPath refuses a path an entry names that hunk would never write: one
// that leaves the workspace or enters a repository's .git (the history
// lies outside every sandbox, but an undo writes what it names).
func CheckPath(ws Workspace, name string) error {
	if name == "" || path.IsAbs(name) && ws.Confined() || strings.HasPrefix(name, "../") || name == ".." {
		return result.Errorf(result.OutsideWorkspace, "the history names %q, outside the workspace; refusing to undo", name)
	}
	for _, c := range strings.Split(name, "/") {
		if strings.EqualFold(c, ".git") {
			return result.Errorf(result.Denied, "the history names %q, inside a repository's .git; refusing to undo", name)
		}
	}
	if _, err := ws.Resolve(name); err != nil {
		return err
	}
	return nil
}

// describeChange says how cur differs from want, for a STALE message.
func describeChange(cur, want *history.Image) string {
	switch {
	case want == nil:
		return "it exists again"
	case cur == nil:
		return "it was removed"
	case cur.Dir != want.Dir:
		return "a directory and a file changed places"
	case want.Link != "" || cur.Link != "":
		return "its link target changed"
	}
	return fmt.Sprintf("now sha256 %s, the operation left %s", short(cur.Hash), short(want.Hash))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf("%d %s", n, many)
}
