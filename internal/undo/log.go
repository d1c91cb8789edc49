package undo

import (
	"fmt"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/history"
)

// Operation is one operation of the history as hunk log shows it.
type Operation struct {
	ID       string    `json:"id"`
	Seq      int64     `json:"seq"`
	Time     time.Time `json:"time"`
	Command  string    `json:"command"`
	Session  string    `json:"session,omitempty"`
	Undoes   []string  `json:"undoes,omitempty" jsonschema:"the operations this undo took back"`
	UndoneBy string    `json:"undoneBy,omitempty" jsonschema:"the undo that took this operation back"`
	Check    string    `json:"check,omitempty" jsonschema:"the check the change was made under (verify); on an undo, the check whose failure took the change back"`
	Summary  Summary   `json:"summary"`
}

// Summary lists the paths an operation added, modified and deleted.
type Summary struct {
	Added    []string `json:"added" jsonschema:"paths the operation created"`
	Modified []string `json:"modified" jsonschema:"paths the operation changed (a moved file by its new path)"`
	Deleted  []string `json:"deleted" jsonschema:"paths the operation removed"`
}

// Describe is e as the log shows it (undoneBy: UndoneBy of the history).
func Describe(e *history.Entry, undoneBy map[string]string) Operation {
	op := Operation{ID: e.ID, Seq: e.Seq, Time: e.Time, Command: e.Command, Session: e.Session, UndoneBy: undoneBy[e.ID], Check: e.Check}
	if e.Undoes != "" {
		op.Undoes = strings.Split(e.Undoes, ",")
	}
	op.Summary.Added, op.Summary.Modified, op.Summary.Deleted = Changes(e)
	return op
}

// Line is the operation's heading line: id, time, command, session, and
// what undid it or what it undid.
func (op Operation) Line() string {
	s := fmt.Sprintf("%s  %s  %s", op.ID, op.Time.Local().Format("2006-01-02 15:04:05"), op.Command)
	if op.Session != "" {
		s += "  session " + op.Session
	}
	switch {
	case len(op.Undoes) > 0 && op.Check != "":
		s += "  (undoes " + strings.Join(op.Undoes, ", ") + ": the check " + op.Check + " failed)"
	case len(op.Undoes) > 0:
		s += "  (undoes " + strings.Join(op.Undoes, ", ") + ")"
	case op.Check != "":
		s += "  (checked: " + op.Check + ")"
	}
	if op.UndoneBy != "" {
		s += "  (undone by " + op.UndoneBy + ")"
	}
	return s
}

// Listing is the log of list (newest first): at most n operations (0: all)
// of session ("" any), each with its line and its files (A, M, D).
func Listing(list []*history.Entry, undoneBy map[string]string, session string, n int) ([]Operation, string) {
	ops := []Operation{}
	var b strings.Builder
	for _, e := range list {
		if session != "" && e.Session != session {
			continue
		}
		if n > 0 && len(ops) == n {
			break
		}
		op := Describe(e, undoneBy)
		ops = append(ops, op)
		b.WriteString(op.Line() + "\n")
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
	if len(ops) == 0 {
		return ops, "No operations in the history."
	}
	return ops, strings.TrimSuffix(b.String(), "\n")
}
