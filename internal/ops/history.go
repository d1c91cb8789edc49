package ops

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// LogRequest lists the workspace's history (hunk log).
type LogRequest struct {
	N       int    `json:"n,omitempty" jsonschema:"list at most this many operations, newest first (0: all)"`
	Session string `json:"session,omitempty" jsonschema:"only the operations of this session"`
	// Diff names one operation whose change is shown as a diff.
	Diff string `json:"diff,omitempty" jsonschema:"show what the operation with this id changed, as a diff"`
}

// LogDetails are hunk log's facts.
type LogDetails struct {
	Operations []LogOperation `json:"operations" jsonschema:"the operations, newest first"`
	Skipped    []string       `json:"skipped,omitempty" jsonschema:"history files that could not be read, and why"`
	Diff       string         `json:"diff,omitempty" jsonschema:"the operation's change, as a unified diff (--diff)"`
	Dir        string         `json:"dir" jsonschema:"where the history lives"`
}

// LogOperation is one operation of the history.
type LogOperation struct {
	ID       string       `json:"id"`
	Seq      int64        `json:"seq"`
	Time     time.Time    `json:"time"`
	Command  string       `json:"command"`
	Session  string       `json:"session,omitempty"`
	Undoes   []string     `json:"undoes,omitempty" jsonschema:"the operations this undo took back"`
	UndoneBy string       `json:"undoneBy,omitempty" jsonschema:"the undo that took this operation back"`
	Summary  PatchSummary `json:"summary"`
}

// history opens the workspace's history, a NOT_FOUND error saying why
// there is none.
func openHistory(env *Env) (*history.Store, error) {
	s, err := env.Workspace.History()
	if err != nil {
		return nil, result.Errorf(result.NotFound, "no history: %v", err).
			WithHint("hunk records each change in $XDG_STATE_HOME/hunk/history unless --no-history or history: false")
	}
	return s, nil
}

// listHistory opens the history and lists it, newest first, warning what
// it could not read and what it settled.
func listHistory(env *Env) (*history.Store, []*history.Entry, []string, error) {
	store, err := openHistory(env)
	if err != nil {
		return nil, nil, nil, err
	}
	list, skipped, err := store.List()
	if err != nil {
		return nil, nil, nil, result.Wrap(result.IOError, err, "history")
	}
	for _, s := range skipped {
		env.warn("history: skipped " + s)
	}
	for _, n := range store.Notes {
		env.warn(n)
	}
	store.Notes = nil
	return store, list, skipped, nil
}

// Log lists the history, newest first, or shows one operation's diff.
func Log(env *Env, req LogRequest) (*Output, error) {
	store, list, skipped, err := listHistory(env)
	if err != nil {
		return nil, err
	}
	undoneBy := undoneBy(list)
	if req.Diff != "" {
		e, err := store.Find(req.Diff)
		if err != nil {
			return nil, result.Errorf(result.NotFound, "%v", err).WithHint("hunk log lists the operations and their ids")
		}
		d := entryDiff(env, store, list, e)
		text := logLine(opOf(e, undoneBy)) + "\n"
		return &Output{Text: text + d, Message: strings.TrimSuffix(text, "\n"), Diff: d, Data: true,
			Details: &LogDetails{Operations: []LogOperation{opOf(e, undoneBy)}, Skipped: skipped, Diff: d, Dir: store.Dir()}}, nil
	}
	details := &LogDetails{Operations: []LogOperation{}, Skipped: skipped, Dir: store.Dir()}
	var b strings.Builder
	for _, e := range list {
		if req.Session != "" && e.Session != req.Session {
			continue
		}
		if req.N > 0 && len(details.Operations) == req.N {
			break
		}
		op := opOf(e, undoneBy)
		details.Operations = append(details.Operations, op)
		b.WriteString(logLine(op) + "\n")
		for _, p := range op.Summary.Added {
			b.WriteString("  A " + p + "\n")
		}
		for _, p := range op.Summary.Modified {
			b.WriteString("  M " + p + "\n")
		}
		for _, p := range op.Summary.Deleted {
			b.WriteString("  D " + p + "\n")
		}
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(details.Operations) == 0 {
		text = "No operations in the history."
	}
	return &Output{Text: text, Message: text, Data: true, Details: details}, nil
}

// logLine is an operation's heading line: id, time, command, session, and
// what undid it or what it undid.
func logLine(op LogOperation) string {
	s := fmt.Sprintf("%s  %s  %s", op.ID, op.Time.Local().Format("2006-01-02 15:04:05"), op.Command)
	if op.Session != "" {
		s += "  session " + op.Session
	}
	if len(op.Undoes) > 0 {
		s += "  (undoes " + strings.Join(op.Undoes, ", ") + ")"
	}
	if op.UndoneBy != "" {
		s += "  (undone by " + op.UndoneBy + ")"
	}
	return s
}

func opOf(e *history.Entry, undoneBy map[string]string) LogOperation {
	op := LogOperation{ID: e.ID, Seq: e.Seq, Time: e.Time, Command: e.Command, Session: e.Session,
		UndoneBy: undoneBy[e.ID], Summary: PatchSummary{Added: []string{}, Modified: []string{}, Deleted: []string{}}}
	if e.Undoes != "" {
		op.Undoes = strings.Split(e.Undoes, ",")
	}
	for _, f := range e.Files {
		switch {
		case f.From != "":
			op.Summary.Added = append(op.Summary.Added, f.Path)
			op.Summary.Deleted = append(op.Summary.Deleted, f.From)
		case f.Pre == nil:
			op.Summary.Added = append(op.Summary.Added, f.Path)
		case f.Post == nil:
			op.Summary.Deleted = append(op.Summary.Deleted, f.Path)
		default:
			op.Summary.Modified = append(op.Summary.Modified, f.Path)
		}
	}
	return op
}

// undoneBy maps each operation that stands undone to the undo that took it
// back: an undo that was itself undone brings its operations back.
func undoneBy(list []*history.Entry) map[string]string {
	m := map[string]string{}
	for i := len(list) - 1; i >= 0; i-- { // oldest first
		e := list[i]
		if e.Undoes == "" {
			continue
		}
		for _, id := range strings.Split(e.Undoes, ",") {
			m[id] = e.ID
			if u := find(list, id); u != nil && u.Undoes != "" {
				for _, back := range strings.Split(u.Undoes, ",") {
					delete(m, back)
				}
			}
		}
	}
	return m
}

func find(list []*history.Entry, id string) *history.Entry {
	for _, e := range list {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// entryDiff renders what e changed, file by file: its pre-images against
// its post-images, as far as the history (or the file, where it still
// holds the post-image) has them. A file the path policy keeps from being
// read is named, not shown.
func entryDiff(env *Env, store *history.Store, list []*history.Entry, e *history.Entry) string {
	// A post-image is stored as a later operation's pre-image, if at all.
	byHash := map[string]*history.Image{}
	for _, o := range list {
		for _, f := range o.Files {
			if f.Pre.Stored() {
				byHash[f.Pre.Hash] = f.Pre
			}
		}
	}
	var b strings.Builder
	for _, f := range e.Files {
		if (f.Pre != nil && f.Pre.Dir) || (f.Post != nil && f.Post.Dir) {
			continue
		}
		if err := env.Workspace.CheckRead(f.Path); err != nil {
			fmt.Fprintf(&b, "# %s: not shown (%v)\n", f.Path, result.As(err).Msg)
			continue
		}
		oldData, okOld := imageData(env, store, byHash, f.Path, f.Pre)
		newData, okNew := imageData(env, store, byHash, f.Path, f.Post)
		if !okOld || !okNew {
			fmt.Fprintf(&b, "# %s: not shown (the history no longer holds its content)\n", f.Path)
			continue
		}
		if f.Post == nil {
			b.WriteString(deletionDiff(f.Path, oldData))
			continue
		}
		b.WriteString(FileDiff(f.Path, oldData, newData, f.Pre == nil))
	}
	return b.String()
}

// imageData is im's content: a link's target, a blob, or the workspace's
// file when it still holds im.
func imageData(env *Env, store *history.Store, byHash map[string]*history.Image, name string, im *history.Image) ([]byte, bool) {
	switch {
	case im == nil:
		return nil, true
	case im.Link != "":
		return []byte(im.Link), true
	}
	for _, c := range []*history.Image{im, byHash[im.Hash]} {
		if c == nil {
			continue
		}
		if data, err := store.Blob(c); err == nil {
			return data, true
		}
	}
	if data, err := env.Workspace.ReadFileRaw(name); err == nil && history.Hash(data) == im.Hash {
		return data, true
	}
	return nil, false
}

func deletionDiff(name string, old []byte) string {
	d := FileDiff(name, old, nil, false)
	return strings.Replace(d, "+++ b/"+name, "+++ /dev/null", 1)
}

// UndoRequest takes operations back (hunk undo, the undo tool).
type UndoRequest struct {
	ID      string `json:"id,omitempty" jsonschema:"the operation to take back (its id, or 4 or more of its first characters; hunk log lists them); default: the newest one not undone"`
	N       int    `json:"n,omitempty" jsonschema:"take back the newest N operations not undone"`
	Session string `json:"session,omitempty" jsonschema:"take back every operation of this session not undone"`
	// Path takes back the newest operation that changed this file
	// (Anthropic's undo_edit).
	Path   string `json:"path,omitempty" jsonschema:"take back the newest operation not undone that changed this file"`
	Force  bool   `json:"force,omitempty" jsonschema:"take back even files changed since the operation (their current content is kept in the history as the undo's)"`
	DryRun bool   `json:"dryRun,omitempty" jsonschema:"say what would be restored and write nothing"`
	Diff   bool   `json:"diff,omitempty" jsonschema:"add a unified diff of the restore to the result"`
	// own and ownOnly keep the choice to the tool calls of session own
	// (UndoOwn).
	own     string
	ownOnly bool
}

// UndoDetails are undo's facts.
type UndoDetails struct {
	Undone  []string     `json:"undone" jsonschema:"the operations taken back"`
	Summary PatchSummary `json:"summary" jsonschema:"what the undo added, modified and deleted"`
	DryRun  bool         `json:"dryRun" jsonschema:"nothing was written"`
	Diff    string       `json:"diff,omitempty" jsonschema:"the restore as a unified diff (when asked for)"`
	OpID    string       `json:"opId,omitempty" jsonschema:"the undo's own id in the history (it can be undone too)"`
}

// Undo restores the pre-images of the chosen operations' files in one
// transaction, refusing (STALE) when a file no longer holds what the
// operations left there, unless Force.
func Undo(env *Env, req UndoRequest) (*Output, error) {
	store, list, _, err := listHistory(env)
	if err != nil {
		return nil, err
	}
	chosen, err := chooseUndo(env, store, list, req)
	if err != nil {
		return nil, err
	}
	for _, e := range chosen {
		for _, f := range e.Files {
			if f.From == "" {
				continue
			}
			if len(chosen) > 1 || len(e.Files) > 1 {
				return nil, result.Usagef("operation %s moved %s to %s: undo it alone (hunk undo %s)", e.ID, f.From, f.Path, e.ID)
			}
			return undoMove(env, e, f, req)
		}
	}
	// Each file: what the oldest chosen operation found (restored) and
	// what the newest left (checked), oldest operation first.
	type plan struct {
		path      string
		pre, post *history.Image
	}
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
	ws := env.Workspace
	var stale []string
	for _, p := range plans {
		if err := checkHistoryPath(ws, p.path); err != nil {
			return nil, err
		}
		cur, err := ws.Image(p.path)
		if err != nil {
			return nil, err
		}
		if p.post != nil && p.post.Dir && p.pre == nil {
			continue // a directory made for a file: removed after, if empty
		}
		if !workspace.SameImage(cur, p.post) {
			stale = append(stale, fmt.Sprintf("%s (%s)", p.path, describeChange(cur, p.post)))
		}
	}
	ids := make([]string, len(chosen))
	for i, e := range chosen {
		ids[i] = e.ID
	}
	if len(stale) > 0 && !req.Force {
		return nil, result.Errorf(result.Stale, "cannot undo %s: %s changed since: %s", strings.Join(ids, ", "),
			plural2(len(stale), "a file", "files"), strings.Join(stale, "; ")).
			WithHint("look at them (hunk log --diff ID shows what the operation did); --force restores them anyway, keeping their current content in the history as the undo's")
	}
	fsys, rec := env.restoreFS(req.DryRun)
	defer fsys.Done()
	if rec != nil {
		rec.Undoes = strings.Join(ids, ",")
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
	txn := fsys.Begin()
	summary := PatchSummary{Added: []string{}, Modified: []string{}, Deleted: []string{}}
	var diffs strings.Builder
	var madeDirs []string
	for _, p := range plans {
		cur, _ := ws.Image(p.path)
		if p.post != nil && p.post.Dir && p.pre == nil {
			madeDirs = append(madeDirs, p.path)
			continue
		}
		if workspace.SameImage(cur, p.pre) && (p.pre == nil || p.pre.Mode == 0 || cur.Mode == p.pre.Mode || p.pre.Link != "") {
			continue // already as it was
		}
		var oldData []byte
		showDiff := req.Diff && ws.CheckRead(p.path) == nil // a read-denied file's content is never shown
		if cur != nil && cur.Hash != "" && showDiff {
			oldData, _ = ws.ReadFileRaw(p.path)
		}
		switch {
		case p.pre == nil:
			if cur == nil {
				continue
			}
			if cur.Dir {
				err = txn.RemoveDir(p.path)
			} else {
				err = txn.Remove(p.path)
			}
			summary.Deleted = append(summary.Deleted, p.path)
			if showDiff && oldData != nil {
				diffs.WriteString(deletionDiff(p.path, oldData))
			}
		case p.pre.Dir:
			if cur != nil && cur.Dir {
				continue
			}
			err = txn.Mkdir(p.path)
			summary.Added = append(summary.Added, p.path)
		case p.pre.Link != "":
			err = txn.StageLink(p.path, p.pre.Link)
			addOrModify(&summary, p.path, cur)
		default:
			data, berr := store.Blob(p.pre)
			if berr != nil {
				txn.Abort()
				return nil, result.Errorf(result.NotFound, "cannot undo %s: the history no longer holds %s's content before it (%v)", strings.Join(ids, ", "), p.path, berr).
					WithHint("nothing was changed; the history keeps a bounded number of operations (history-max-operations, -bytes, -age in the config)")
			}
			err = txn.Stage(p.path, data, workspace.WriteOptions{Perm: p.pre.Mode, ForcePerm: true, ExactPerm: true, ReplaceLink: true})
			addOrModify(&summary, p.path, cur)
			if showDiff {
				diffs.WriteString(FileDiff(p.path, oldData, data, cur == nil))
			}
		}
		if err != nil {
			txn.Abort()
			return nil, err
		}
	}
	if err := txn.Commit(); err != nil {
		return nil, err
	}
	if !req.DryRun && len(madeDirs) > 0 {
		// The directories the operations made go when the undo left them
		// empty, deepest first — recorded as an operation of their own when
		// the undo changed no file (an undone create_directory).
		sort.Slice(madeDirs, func(i, j int) bool { return strings.Count(madeDirs[i], "/") > strings.Count(madeDirs[j], "/") })
		var removed []history.FileChange
		gone := map[string]bool{} // removed before their parents
		b := ws.ExactBatch()      // no link followed: the directories it recorded
		defer b.Close()
		for _, d := range madeDirs {
			fi, err := b.Lstat(d)
			if err != nil || !fi.IsDir() {
				continue
			}
			ents, err := b.ReadDir(d)
			empty := err == nil
			for _, e := range ents {
				empty = empty && gone[path.Join(d, e.Name())]
			}
			if empty {
				gone[d] = true
				removed = append(removed, history.FileChange{Path: d, Pre: &history.Image{Dir: true}})
			}
		}
		drec := rec
		if rec != nil && rec.ID != "" {
			drec = nil // recorded with the files' entry's undo already
		}
		_ = ws.RecordOne(drec, removed, func() error {
			for _, d := range removed {
				if b.Remove(d.Path) == nil {
					summary.Deleted = append(summary.Deleted, d.Path+"/")
				}
			}
			return nil
		})
	}
	n := len(summary.Added) + len(summary.Modified) + len(summary.Deleted)
	var b strings.Builder
	switch {
	case req.DryRun:
		fmt.Fprintf(&b, "Would undo %s (dry run: nothing was written).", strings.Join(ids, ", "))
	case n == 0:
		fmt.Fprintf(&b, "Undid %s: the files were as before it already; nothing was written.", strings.Join(ids, ", "))
	default:
		fmt.Fprintf(&b, "Undid %s. Updated the following files:", strings.Join(ids, ", "))
	}
	for _, p := range summary.Added {
		b.WriteString("\nA " + p)
	}
	for _, p := range summary.Modified {
		b.WriteString("\nM " + p)
	}
	for _, p := range summary.Deleted {
		b.WriteString("\nD " + p)
	}
	if len(stale) > 0 {
		b.WriteString("\nnote: --force: restored over later changes to " + strings.Join(stale, "; "))
	}
	msg := b.String()
	out := &Output{Text: msg, Message: msg, Details: &UndoDetails{Undone: ids, Summary: summary, DryRun: req.DryRun, OpID: opID(rec)}}
	if req.Diff && diffs.Len() > 0 {
		out.Diff = diffs.String()
		out.Text += "\n" + strings.TrimSuffix(out.Diff, "\n")
		out.Details.(*UndoDetails).Diff = out.Diff
	}
	return out, nil
}

// undoMove takes back a move (move_file): the file or directory goes back
// where it was, when it is still as the move left it and nothing took its
// old place.
func undoMove(env *Env, e *history.Entry, f history.FileChange, req UndoRequest) (*Output, error) {
	ws := env.Workspace
	for _, p := range []string{f.Path, f.From} {
		if err := checkHistoryPath(ws, p); err != nil {
			return nil, err
		}
		if err := ws.CheckWrite(p); err != nil {
			return nil, err
		}
	}
	cur, err := ws.Image(f.Path)
	if err != nil {
		return nil, err
	}
	if !workspace.SameImage(cur, f.Post) && !req.Force {
		return nil, result.Errorf(result.Stale, "cannot undo %s: %s changed since it was moved there (%s)", e.ID, f.Path, describeChange(cur, f.Post)).
			WithHint("--force moves it back anyway")
	}
	if cur == nil {
		return nil, result.Errorf(result.NotFound, "cannot undo %s: %s is gone", e.ID, f.Path)
	}
	if old, _ := ws.Image(f.From); old != nil {
		return nil, result.Errorf(result.AlreadyExists, "cannot undo %s: %s exists again; nothing was moved", e.ID, f.From).
			WithHint("move or remove it first")
	}
	msg := fmt.Sprintf("Would undo %s: move %s back to %s (dry run: nothing was written).", e.ID, f.Path, f.From)
	var rec *workspace.Recording
	if !req.DryRun {
		unlock, err := ws.Lock(f.Path, f.From)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if rec = env.recording("undo"); rec != nil {
			rec.Undoes = e.ID
		}
		back := []history.FileChange{{Path: f.From, From: f.Path, Pre: cur, Post: cur}}
		b := ws.ExactBatch() // no link followed: the paths it recorded
		defer b.Close()
		if err := ws.RecordOne(rec, back, func() error { return b.Rename(f.Path, f.From) }); err != nil {
			return nil, err
		}
		msg = fmt.Sprintf("Undid %s: moved %s back to %s.", e.ID, f.Path, f.From)
	}
	return &Output{Text: msg, Message: msg, Details: &UndoDetails{Undone: []string{e.ID}, DryRun: req.DryRun, OpID: opID(rec),
		Summary: PatchSummary{Added: []string{f.From}, Modified: []string{}, Deleted: []string{f.Path}}}}, nil
}

// UndoOwn is Undo for a tool call: it reaches only the operations tool
// calls of the calling session made (env.Session; without one, those made
// without a session) — never a person's change, nor another session's,
// whichever id, session or path the call names.
func UndoOwn(env *Env, req UndoRequest) (*Output, error) {
	if req.Session != "" && req.Session != env.Session {
		return nil, result.Errorf(result.NotFound, "session %q is not this session's: a tool call takes back only its own session's changes", req.Session).
			WithHint("hunk undo --session S, run by a person, takes back another session's changes")
	}
	req.Session, req.own, req.ownOnly = "", env.Session, true
	return Undo(env, req)
}

// chooseUndo picks the operations req names, newest first: an id; the
// newest N (default 1), a session's, or the newest that changed a path,
// among those that are neither undone nor undos themselves.
func chooseUndo(env *Env, store *history.Store, list []*history.Entry, req UndoRequest) ([]*history.Entry, error) {
	given := 0
	for _, b := range []bool{req.ID != "", req.N != 0, req.Session != "", req.Path != ""} {
		if b {
			given++
		}
	}
	if given > 1 {
		return nil, result.Usagef("name the operations one way: an id, -n N, --session S or a path")
	}
	if req.N < 0 {
		return nil, result.Usagef("-n must be 1 or more, not %d", req.N)
	}
	if req.ID != "" {
		e, err := store.Find(req.ID)
		if err == nil && req.ownOnly && !ownEntry(e, req.own) {
			err = fmt.Errorf("operation %s is not this session's: a tool call takes back only its own session's changes", e.ID)
		}
		if err != nil {
			return nil, result.Errorf(result.NotFound, "%v", err).WithHint("hunk log lists the operations and their ids")
		}
		if by := undoneBy(list)[e.ID]; by != "" {
			return nil, result.Errorf(result.Stale, "operation %s was undone already (by %s)", e.ID, by).
				WithHint("to bring it back, undo the undo: hunk undo " + by)
		}
		return []*history.Entry{e}, nil
	}
	var name string
	if req.Path != "" {
		var err error
		if name, err = env.Workspace.Resolve(req.Path); err != nil {
			return nil, err
		}
	}
	undone := undoneBy(list)
	n := req.N
	if n == 0 && req.Session == "" {
		n = 1
	}
	var out []*history.Entry
	for _, e := range list {
		if undone[e.ID] != "" || e.Undoes != "" {
			continue
		}
		if req.Session != "" && e.Session != req.Session || req.ownOnly && !ownEntry(e, req.own) {
			continue
		}
		if name != "" && !touches(e, name) {
			continue
		}
		out = append(out, e)
		if n > 0 && len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		what := "no operation to undo in the history"
		switch {
		case req.Session != "":
			what = fmt.Sprintf("no operation of session %q to undo in the history", req.Session)
		case name != "":
			what = fmt.Sprintf("no change to %s to undo in the history", name)
		}
		return nil, result.Errorf(result.NotFound, "%s", what).WithHint("hunk log lists what the history holds")
	}
	return out, nil
}

// ownEntry reports whether e was made by a tool call of session s.
func ownEntry(e *history.Entry, s string) bool { return e.Tool && e.Session == s }

func touches(e *history.Entry, name string) bool {
	for _, f := range e.Files {
		if f.Path == name {
			return true
		}
	}
	return false
}

// checkHistoryPath refuses a path an entry names that hunk would never
// write: one that leaves the workspace or enters a repository's .git (the
// history lies outside every sandbox, but an undo writes what it names).
func checkHistoryPath(ws *workspace.Workspace, name string) error {
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

func addOrModify(s *PatchSummary, name string, cur *history.Image) {
	if cur == nil {
		s.Added = append(s.Added, name)
	} else {
		s.Modified = append(s.Modified, name)
	}
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

func plural2(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf("%d %s", n, many)
}
