// Package ops is hunk's operations layer: each operation is a typed request
// run against an Env, returning an Output or a typed *result.Error. It needs
// no cobra, viper or terminal: the command line, `hunk call` and `hunk mcp`
// are thin front-ends over it, none holding logic another needs.
package ops

import (
	"io"

	"github.com/hunk-dev/hunk/internal/readtrack"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Env is what operations run against: the workspace, the limits from the
// configuration, and the streams an exec may use.
type Env struct {
	Workspace *workspace.Workspace
	Limits    Limits
	// ToolResult says the Output becomes a tool result for a program: its
	// details complete (hashes, diffs) and read's images as data, where a
	// person at a terminal gets the short text and a description.
	ToolResult bool
	// Stdin is the exec command's stdin (nil: empty).
	Stdin io.Reader
	// Stdout and Stderr, when set, get a live copy of an exec command's
	// output (a person watching); the Output keeps the captured copy.
	Stdout, Stderr io.Writer
	// Warn reports a warning (nil: dropped).
	Warn func(msg string)
	// AllowPlaceholders lets an edit write a placeholder comment in place
	// of lines it leaves out (placeholder.Find; LAZY_EDIT otherwise).
	AllowPlaceholders bool
	// Session tags the operations' history entries (--session, the MCP
	// session) and keys read tracking ("" none).
	Session string
	// Reads, when set, tracks what the session read (read tracking):
	// writes over what it has not seen are refused as STALE.
	Reads *readtrack.Tracker
	// Tool names the tool being called ("" the command line): what its
	// changes are recorded as in the history.
	Tool string
	// Agent marks operations run for an agent's tool call (hunk mcp, hunk
	// call): recorded as a tool's, and a tool's undo reaches only those of
	// its own session — never a person's change.
	Agent bool
	// Gate, when set, is the tool call's part in deciding a change a
	// write.ask rule names (its client's elicitation, its access log).
	Gate *workspace.CallGate
	// Recorded, when set, gets every recording made (package verify: what
	// a failed check takes back); Check is the check they are made under.
	Recorded *[]*workspace.Recording
	Check    string
}

// Limits are the size limits of the configuration (0: none).
type Limits struct {
	ReadLimit     int   // lines per read page
	ReadMaxBytes  int   // bytes per read page
	WriteMaxBytes int64 // content of a write
	EditMaxBytes  int64 // file an edit or insert may change
	PatchMaxBytes int64 // patch text
}

// FS is the workspace as the engines that change files take it: the disk,
// or under dryRun the disk with every write discarded. The caller calls
// Done when the operation is over.
//
// A real run's commits are recorded in the workspace's history as the
// operation command (rec.ID is the entry's id once it committed; rec is nil
// for a dry run, which records nothing).
//
// In a session that tracks its reads (e.Reads), the writes are checked
// against what the session read (readtrack.Tracker): command "write" replaces
// files whole, the others change regions of them.
func (e *Env) FS(dryRun bool, command string) (fsys workspace.FS, rec *workspace.Recording) {
	return e.fs(dryRun, command, workspace.Disk)
}

// restoreFS is FS for the history's restores (undo): its walks follow no
// symbolic link (workspace.Restoring).
func (e *Env) restoreFS(dryRun bool) (workspace.FS, *workspace.Recording) {
	return e.fs(dryRun, "undo", func(w *workspace.Workspace) workspace.FS { return workspace.Restoring(w, nil) })
}

// fs is FS over the FS disk makes (its recording added by Recorded).
func (e *Env) fs(dryRun bool, command string, disk func(*workspace.Workspace) workspace.FS) (fsys workspace.FS, rec *workspace.Recording) {
	switch {
	case dryRun:
		fsys = workspace.DryRun(disk(e.Workspace))
	case !e.Workspace.Records():
		fsys = workspace.Asking(disk(e.Workspace), e.Gate)
	default:
		rec = e.recording(command)
		fsys = workspace.Asking(workspace.Recorded(disk(e.Workspace), rec), e.Gate)
	}
	if e.Reads != nil {
		fsys = readtrack.FS(fsys, e.Reads, command == "write", dryRun)
	}
	return fsys, rec
}

// recording is what a change made outside a transaction (a move, a new
// directory) is recorded as; nil when the history is off.
func (e *Env) recording(command string) *workspace.Recording {
	if !e.Workspace.Records() {
		return nil
	}
	if e.Tool != "" {
		command = e.Tool
	}
	r := &workspace.Recording{Command: command, Session: e.Session, Tool: e.Agent || e.Tool != "", Warn: e.Warn, Check: e.Check}
	if e.Recorded != nil {
		*e.Recorded = append(*e.Recorded, r)
	}
	return r
}

// opID is the id of what rec recorded ("" none).
func opID(rec *workspace.Recording) string {
	if rec == nil {
		return ""
	}
	return rec.ID
}

func (e *Env) warn(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
}

// Output is a successful operation's result: Text is what a model reads,
// Details the facts for programs. Message and Diff are the same text split
// for a person (the diff colored on a terminal; DiffFirst prints it before
// the message).
type Output struct {
	Text      string
	Details   any
	Images    []result.Content
	Message   string
	Diff      string
	DiffFirst bool
	// Data marks output that is the data asked for (a page, a listing), not
	// a status line: -q does not hide it.
	Data bool
	// Media: the tool result is the Images blocks alone, without Text.
	Media bool
	// Failure, when set, makes the tool result an error result that still
	// carries Text and Details (exec timed out, interrupted, out of memory).
	Failure *result.Error
	// ExitCode is the process exit code the command line ends with (exec
	// passes its command's through).
	ExitCode int
	// For a person, each in Text already: Hint is advice (exec: why the
	// command may have failed), Stderr a line the streamed output lacks
	// (why exec's command could not start), Notice a remark (exec: why a
	// first run was slow).
	Hint, Stderr, Notice string
}

// ToolResult is o as the tool result document.
func (o *Output) ToolResult() result.ToolResult {
	r := result.Success(o.Text, o.Details)
	if o.Media {
		r.Content = nil
	}
	r.Content = append(r.Content, o.Images...)
	if o.Failure != nil {
		r.IsError, r.Error, r.Code = true, o.Failure.Msg, o.Failure.Code
	}
	return r
}
