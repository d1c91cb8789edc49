package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/read"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// ExecInput is what a call may ask of exec; the rest is the session's policy.
type ExecInput struct {
	Command        string            `json:"command,omitempty" jsonschema:"a shell command line, run with /bin/sh -c"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"the command and its arguments, run without a shell (instead of command)"`
	Workdir        string            `json:"workdir,omitempty" jsonschema:"working directory inside the workspace (default: the workspace root)"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables to set for the command"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty" jsonschema:"kill the command and everything it started after this many seconds (default and most: the server's timeout)"`
	MaxOutput      int               `json:"maxOutput,omitempty" jsonschema:"most bytes of each of stdout and stderr the result shows, head and tail (default and most: the server's); read's execOutput pages through the rest"`
}

// Hunk is hunk's own tool set: apply_patch, read, write, edit and exec.
// network says whether exec reaches the network (the session's policy).
func Hunk(network sandbox.Network) Set {
	return inSet("hunk", Set{
		{
			Name:  "apply_patch",
			Title: "Apply a patch",
			Description: "Apply a patch to files of the workspace, all files or none. The patch is either Codex's format " +
				"(*** Begin Patch / *** Add File: / *** Update File: / *** Delete File: / @@ chunks of ' ', '+', '-' lines / *** End Patch) " +
				"a unified diff (git diff), or SEARCH/REPLACE blocks (the file's path alone on a line, then <<<<<<< SEARCH / the exact lines to find / ======= / their replacement / >>>>>>> REPLACE). " +
				"On failure every failing chunk is reported with the closest region of the file.",
			Input:       schemaFor[applyPatchInput](),
			Output:      output(detailsOf[ops.ApplyPatchDetails]()),
			Destructive: true,
			checks:      true,
			run: checks("apply_patch", ops.ApplyPatch, func(in applyPatchInput) (ops.ApplyPatchRequest, Check) {
				return in.ApplyPatchRequest, in.Check
			}, "patch"),
		},
		{
			Name:  "read",
			Title: "Read a file",
			Description: "Read a page of a text file (up to 2000 lines or 50 KB; the result says how to continue), list a directory, " +
				"or view an image (PNG, JPEG, GIF, WebP). details.sha256 is the file's hash, for write and edit's ifMatch. " +
				"With execOutput instead of path, page through the output of an exec whose result left part of it out.",
			Input:    schemaFor[ops.ReadRequest](),
			Output:   output(detailsOf[read.TextDetails](), detailsOf[read.DirDetails](), detailsOf[read.ImageDetails]()),
			ReadOnly: true, Idempotent: true,
			run: runs("read", func(env *ops.Env, req ops.ReadRequest) (*ops.Output, error) {
				req.Continue = readContinue // the notices name the tool's arguments, not hunk read's flags
				return ops.Read(env, req)
			}),
		},
		searchTool(),
		{
			Name:  "write",
			Title: "Write a file",
			Description: "Create or replace a file with the given content, atomically; parent directories are created and an " +
				"existing file keeps its mode. createOnly refuses an existing file; ifMatch refuses a file that changed since it was read.",
			Input:       schemaFor[writeInput](),
			Output:      output(detailsOf[ops.WriteDetails]()),
			Destructive: true, Idempotent: true,
			checks: true,
			run:    checks("write", ops.Write, func(in writeInput) (ops.WriteRequest, Check) { return in.WriteRequest, in.Check }, "path", "content"),
		},
		{
			Name:  "edit",
			Title: "Edit a file",
			Description: "Replace exact text in a file: oldText must occur exactly once (every occurrence with replaceAll), or give " +
				"a list of edits, all matched against the original and applied together or not at all. A unique near match " +
				"(line endings, trailing whitespace, Unicode punctuation, indentation) is accepted and reported; on no match the " +
				"closest lines are shown with their numbers.",
			Input:       schemaFor[editInput](),
			Output:      output(detailsOf[ops.EditDetails]()),
			Destructive: true,
			checks:      true,
			run:         checks("edit", ops.Edit, func(in editInput) (ops.EditRequest, Check) { return in.EditRequest, in.Check }, "path"),
		},
		{
			Name:  "undo",
			Title: "Undo a change",
			Description: "Take back a change this session made with apply_patch, write or edit (by default its newest one not undone; " +
				"or the operation id a result's opId gave, the newest n, the newest change to a path): the files get back their content " +
				"and mode from before it. Refused (STALE, naming the files) when a file changed since the change, unless force.",
			Input:       schemaFor[ops.UndoRequest](),
			Output:      output(detailsOf[ops.UndoDetails]()),
			Destructive: true,
			run:         runs("undo", ops.UndoOwn),
		},
		{
			Name:  "exec",
			Title: "Run a command",
			Description: "Run a command in a sandbox over the workspace: the workspace is writable, the rest of the filesystem " +
				"read-only or hidden, credentials hidden" + networkNote(network) + ". Returns the exit code and the output; " +
				"long output shows its head and tail, and the result says how to read the rest (read with execOutput).",
			Input:       schemaFor[ExecInput](),
			Output:      output(detailsOf[execrun.ToolDetails]()),
			Destructive: true, OpenWorld: network.Any(), command: true,
			run: func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var in ExecInput
				if err := decode("exec", args, &in); err != nil {
					return nil, err
				}
				out, d, err := s.RunExec(ctx, in)
				if err == nil {
					out.Details = d.Tool() // the streams once, in the text
				}
				return out, err
			},
		},
	})
}

// inSet marks the tools as the set's.
func inSet(name string, s Set) Set {
	for _, t := range s {
		t.set = name
	}
	return s
}

func networkNote(network sandbox.Network) string {
	switch {
	case network.Host:
		return "; it can reach the network"
	case network.Proxied():
		return "; it can reach only these hosts, through a proxy: " + strings.Join(network.Allow, ", ")
	}
	return "; there is no network"
}

// RunExec runs a call's command under the session's policy; the details
// are the Output's, as their type.
func (s *Session) RunExec(ctx context.Context, in ExecInput) (*ops.Output, *ops.ExecDetails, error) {
	return s.runExec(ctx, s.Env, in, s.Exec)
}

// runExec is RunExec over env under limits (a change's check: recorded
// into the change's env).
func (s *Session) runExec(ctx context.Context, base *ops.Env, in ExecInput, limits ops.ExecLimits) (*ops.Output, *ops.ExecDetails, error) {
	req := ops.ExecRequest{ExecLimits: limits, Argv: in.Argv, Sh: in.Command, Workdir: in.Workdir, EnvVars: in.Env, Ready: s.Ready,
		Surface: execrun.ToolSurface(s.Exec.Timeout, readOutput)}
	req.Yes, req.Confirm = false, nil // a call never says yes itself
	req.Decided = decidedHook(ctx)
	if s.Confirm != nil {
		req.Confirm, req.ConfirmBy = func(p execrun.Plan) (bool, error) { return s.Confirm(ctx, p) }, "elicitation"
	}
	if in.MaxOutput < 0 {
		return nil, nil, result.Usagef("exec: maxOutput must not be negative")
	}
	if in.MaxOutput > 0 {
		if most := execrun.Budget(s.Exec.Shown); most >= 0 && int64(in.MaxOutput) > most {
			return nil, nil, result.Errorf(result.InvalidArgument, "exec: maxOutput %d is over this server's limit of %d bytes", in.MaxOutput, most).
				WithHint("ask for at most the limit, and read the rest with read's execOutput; the person running hunk sets it (--max-output)")
		}
		req.Shown = int64(in.MaxOutput)
	}
	if in.TimeoutSeconds < 0 {
		return nil, nil, result.Usagef("exec: timeoutSeconds must not be negative")
	}
	if in.TimeoutSeconds > 0 {
		t := time.Duration(in.TimeoutSeconds * float64(time.Second))
		if s.Exec.Timeout > 0 && t > s.Exec.Timeout {
			return nil, nil, result.Errorf(result.InvalidArgument, "exec: timeoutSeconds %g is over this server's limit of %g seconds", in.TimeoutSeconds, s.Exec.Timeout.Seconds()).
				WithHint("ask for at most the limit; the person running hunk sets it (--timeout)")
		}
		req.Timeout = t
	}
	env := *base
	env.Stdout, env.Stderr, env.Stdin = nil, nil, nil // a tool call's command reads nothing and streams nowhere
	if p, ok := ctx.Value(progressKey{}).(Progress); ok {
		// but to its progress reports, when the client asked for them
		tail := &tailWriter{}
		env.Stdout, env.Stderr = tail, tail
		defer reportProgress(p, req.Timeout, tail)()
	}
	return ops.ExecDetailed(ctx, &env, req)
}

// WithLimits says exec's limits in its declaration (timeoutSeconds'
// and maxOutput's default and most: the server's), so a model knows them
// before it asks: timeout 0 is none, shown 0 execrun.DefaultShown and
// negative all.
func (s Set) WithLimits(timeout time.Duration, shown int64) Set {
	t := s.Lookup("exec")
	if t == nil || t.Input == nil {
		return s
	}
	if p := t.Input.Properties["timeoutSeconds"]; p != nil {
		if timeout > 0 {
			p.Description = fmt.Sprintf("kill the command and everything it started after this many seconds (default and most: %g)", timeout.Seconds())
		} else {
			p.Description = "kill the command and everything it started after this many seconds (default: no timeout)"
		}
	}
	if p := t.Input.Properties["maxOutput"]; p != nil {
		if most := execrun.Budget(shown); most >= 0 {
			p.Description = fmt.Sprintf("most bytes of each of stdout and stderr the result shows, head and tail (default and most: %d); read's execOutput pages through the rest", most)
		} else {
			p.Description = "most bytes of each of stdout and stderr the result shows, head and tail (default: all of it)"
		}
	}
	return s
}

// readContinue is how a read tool call asks for the page at offset (and
// column, inside a long line).
func readContinue(offset int, column int64) string {
	if column > 0 {
		return fmt.Sprintf(`{"offset": %d, "column": %d}`, offset, column)
	}
	return fmt.Sprintf(`{"offset": %d}`, offset)
}

// readOutput is how a tool call reads a stored exec output: the read tool.
func readOutput(id, stream string, offset int) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(`read them: read {"execOutput": "%s/%s", "offset": %d}`, id, stream, offset)
}

// Insert is edit's insert as a tool: text after line N (0: the start).
func Insert() *Tool {
	return &Tool{
		set:         "hunk",
		Name:        "insert",
		Title:       "Insert lines",
		Description: "Insert text as whole lines after a line of a file (0: at the start), in the file's line endings.",
		Input:       schemaFor[ops.InsertRequest](),
		Output:      output(detailsOf[ops.EditDetails]()),
		Destructive: true,
		run:         runs("insert", ops.Insert, "path", "after", "text"),
	}
}
