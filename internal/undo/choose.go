// Package undo is the engine that takes operations back from a workspace's
// history (package history): which operations a request names, whether each
// file still holds what they left there (or is STALE), and the restore
// itself — every file's content, mode or link target before them, in one
// transaction over a workspace.FS whose walks follow no link (Restoring),
// the directories they made removed, a move taken back. It also reads the
// history for the log: what undid what, an operation's change as a diff.
// It knows nothing of commands, tools or output: ops asks, and renders.
package undo

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// Choice names the operations to take back: one way of ID, N and Path
// (none: the newest one; with only Session, all of that session's), among
// those neither undone nor undos themselves (an ID may name any, and is
// refused when undone already). Session scopes each way: an ID must be of
// that session, -n N and a path count only its operations.
type Choice struct {
	ID      string
	N       int
	Session string
	// Path, a resolved workspace name: the newest operation that changed it.
	Path string
	// OwnOnly keeps the choice, an ID too, to operations tool calls of
	// session Own made (a tool's undo: never a person's change).
	OwnOnly bool
	Own     string
	// IDs are exactly these operations, oldest first (a failed check's
	// rollback: the change and what its check wrote), but for those
	// undone since (STALE when every one was).
	IDs []string
}

// Choose picks the operations c names from list (newest first), newest
// first.
func Choose(store *history.Store, list []*history.Entry, c Choice) ([]*history.Entry, error) {
	if len(c.IDs) > 0 {
		undone := UndoneBy(list)
		chosen := make([]*history.Entry, 0, len(c.IDs))
		for i := len(c.IDs) - 1; i >= 0; i-- {
			e, err := store.Find(c.IDs[i])
			if err != nil {
				return nil, result.Errorf(result.NotFound, "%v", err)
			}
			if undone[e.ID] == "" {
				chosen = append(chosen, e)
			}
		}
		if len(chosen) == 0 {
			return nil, result.Errorf(result.Stale, "operations %s were undone already", strings.Join(c.IDs, ", "))
		}
		return chosen, nil
	}
	given := 0
	for _, b := range []bool{c.ID != "", c.N != 0, c.Path != ""} {
		if b {
			given++
		}
	}
	if given > 1 {
		return nil, result.Usagef("name the operations one way: an id, -n N or a path (--session S narrows any of them)")
	}
	if c.N < 0 {
		return nil, result.Usagef("-n must be 1 or more, not %d", c.N)
	}
	if c.ID != "" {
		e, err := store.Find(c.ID)
		if err == nil && c.OwnOnly && !OwnEntry(e, c.Own) {
			err = fmt.Errorf("operation %s is not this session's: a tool call takes back only its own session's changes", e.ID)
		} else if err == nil && c.Session != "" && e.Session != c.Session {
			err = fmt.Errorf("operation %s is not of session %q", e.ID, c.Session)
		}
		if err != nil {
			return nil, result.Errorf(result.NotFound, "%v", err).WithHint("hunk log lists the operations and their ids")
		}
		if by := UndoneBy(list)[e.ID]; by != "" {
			return nil, result.Errorf(result.Stale, "operation %s was undone already (by %s)", e.ID, by).
				WithHint("to bring it back, undo the undo: hunk undo " + by)
		}
		return []*history.Entry{e}, nil
	}
	undone := UndoneBy(list)
	n := c.N
	if n == 0 && (c.Session == "" || c.Path != "") {
		n = 1
	}
	var out []*history.Entry
	for _, e := range list {
		if undone[e.ID] != "" || e.Undoes != "" {
			continue
		}
		if c.Session != "" && e.Session != c.Session || c.OwnOnly && !OwnEntry(e, c.Own) {
			continue
		}
		if c.Path != "" && !touches(e, c.Path) {
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
		case c.Session != "":
			what = fmt.Sprintf("no operation of session %q to undo in the history", c.Session)
		case c.Path != "":
			what = fmt.Sprintf("no change to %s to undo in the history", c.Path)
		}
		return nil, result.Errorf(result.NotFound, "%s", what).WithHint("hunk log lists what the history holds")
	}
	return out, nil
}

// OwnEntry reports whether e was made by a tool call of session s.
func OwnEntry(e *history.Entry, s string) bool { return e.Tool && e.Session == s }

func touches(e *history.Entry, name string) bool {
	for _, f := range e.Files {
		if f.Path == name {
			return true
		}
	}
	return false
}

// UndoneBy maps each operation that stands undone to the undo that took it
// back: an undo that was itself undone brings its operations back. list is
// newest first.
func UndoneBy(list []*history.Entry) map[string]string {
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
