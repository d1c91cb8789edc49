package ops

import (
	"strings"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/undo"
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

// LogOperation is one operation of the history (undo.Operation).
type LogOperation = undo.Operation

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
	undoneBy := undo.UndoneBy(list)
	if req.Diff != "" {
		e, err := store.Find(req.Diff)
		if err != nil {
			return nil, result.Errorf(result.NotFound, "%v", err).WithHint("hunk log lists the operations and their ids")
		}
		d := undo.EntryDiff(env.Workspace, store, list, e)
		op := undo.Describe(e, undoneBy)
		return &Output{Text: op.Line() + "\n" + d, Message: op.Line(), Diff: d, Data: true,
			Details: &LogDetails{Operations: []LogOperation{op}, Skipped: skipped, Diff: d, Dir: store.Dir()}}, nil
	}
	ops, text := undo.Listing(list, undoneBy, req.Session, req.N)
	return &Output{Text: text, Message: text, Data: true, Details: &LogDetails{Operations: ops, Skipped: skipped, Dir: store.Dir()}}, nil
}

// UndoRequest takes operations back (hunk undo, the undo tool).
type UndoRequest struct {
	ID      string `json:"id,omitempty" jsonschema:"the operation to take back (its id, as a change's result gives it in opId, or 4 or more of its first characters); default: the newest one not undone"`
	N       int    `json:"n,omitempty" jsonschema:"take back the newest N operations not undone"`
	Session string `json:"session,omitempty" jsonschema:"take back every operation of this session not undone"`
	// Path takes back the newest operation that changed this file
	// (Anthropic's undo_edit).
	Path   string `json:"path,omitempty" jsonschema:"take back the newest operation not undone that changed this file"`
	Force  bool   `json:"force,omitempty" jsonschema:"take back even files changed since the operation (their current content is kept in the history as the undo's)"`
	DryRun bool   `json:"dryRun,omitempty" jsonschema:"say what would be restored and write nothing"`
	Diff   bool   `json:"diff,omitempty" jsonschema:"add a unified diff of the restore to the result"`
	// IDs and Keep: a failed check's rollback (package verify) — exactly
	// these operations, the files changed since left as they are.
	IDs  []string `json:"-"`
	Keep bool     `json:"-"`
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
	Kept    []string     `json:"kept,omitempty" jsonschema:"files changed since, left as they are"`
}

// Undo takes the operations req names back (the undo engine, package
// undo), recorded as an undo of them: STALE when a file no longer holds
// what they left there, unless Force.
func Undo(env *Env, req UndoRequest) (*Output, error) {
	out, _, err := UndoDetailed(env, req)
	return out, err
}

// UndoDetailed is Undo with its details as their type.
func UndoDetailed(env *Env, req UndoRequest) (*Output, *UndoDetails, error) {
	store, list, _, err := listHistory(env)
	if err != nil {
		return nil, nil, err
	}
	c := undo.Choice{ID: req.ID, N: req.N, Session: req.Session, OwnOnly: req.ownOnly, Own: req.own, IDs: req.IDs}
	if req.Path != "" {
		if c.Path, err = env.Workspace.Resolve(req.Path); err != nil {
			return nil, nil, err
		}
	}
	chosen, err := undo.Choose(store, list, c)
	if err != nil {
		return nil, nil, err
	}
	fsys, rec := env.restoreFS(req.DryRun)
	defer fsys.Done()
	if rec != nil {
		rec.Undoes = strings.Join(undo.IDs(chosen), ",")
	}
	res, err := undo.Run(env.Workspace, fsys, store, chosen, undo.Options{Force: req.Force, DryRun: req.DryRun, Diff: req.Diff, Keep: req.Keep})
	if err != nil {
		return nil, nil, err
	}
	msg := res.Message(req.DryRun)
	d := &UndoDetails{Undone: res.Undone, DryRun: req.DryRun, OpID: opID(rec), Kept: res.Kept,
		Summary: PatchSummary{Added: res.Added, Modified: res.Modified, Deleted: res.Deleted}}
	out := &Output{Text: msg, Message: msg, Details: d}
	if res.Moved == nil && req.Diff && res.Diff != "" {
		out.Diff, d.Diff = res.Diff, res.Diff
		out.Text += "\n" + strings.TrimSuffix(out.Diff, "\n")
	}
	return out, d, nil
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
