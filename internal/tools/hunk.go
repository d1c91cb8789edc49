package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// ExecInput is what a call may ask of exec; the rest is the session's policy.
type ExecInput struct {
	Command        string            `json:"command,omitempty" jsonschema:"a shell command line, run with /bin/sh -c"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"the command and its arguments, run without a shell (instead of command)"`
	Workdir        string            `json:"workdir,omitempty" jsonschema:"working directory inside the workspace (default: the workspace root)"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables to set for the command"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty" jsonschema:"kill the command and everything it started after this many seconds (default and most: the server's timeout)"`
}

// Hunk is hunk's own tool set: apply_patch, read, write, edit and exec.
// network says whether exec reaches the network (the session's policy).
func Hunk(network bool) Set {
	return Set{
		{
			Name:  "apply_patch",
			Title: "Apply a patch",
			Description: "Apply a patch to files of the workspace, all files or none. The patch is either Codex's format " +
				"(*** Begin Patch / *** Add File: / *** Update File: / *** Delete File: / @@ chunks of ' ', '+', '-' lines / *** End Patch) " +
				"or a unified diff (git diff). On failure every failing chunk is reported with the closest region of the file.",
			Input: schemaFor[ops.ApplyPatchRequest](),
			Output: object(map[string][2]string{
				"summary": {"object", "added, modified and deleted paths"},
				"files":   {"array", "each changed file, with its diff"},
				"format":  {"string", "codex or unified"},
				"dryRun":  {"boolean", "nothing was written"},
			}),
			Destructive: true,
			run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var req ops.ApplyPatchRequest
				if err := decode("apply_patch", args, &req, "patch"); err != nil {
					return nil, err
				}
				return ops.ApplyPatch(s.Env, req)
			},
		},
		{
			Name:  "read",
			Title: "Read a file",
			Description: "Read a page of a text file (up to 2000 lines or 50 KB; the result says how to continue), list a directory, " +
				"or view an image (PNG, JPEG, GIF, WebP). details.sha256 is the file's hash, for write and edit's ifMatch.",
			Input: schemaFor[ops.ReadRequest](),
			Output: object(map[string][2]string{
				"path":       {"string", "the path read"},
				"type":       {"string", "text, directory or image"},
				"totalLines": {"integer", "lines in the file"},
				"startLine":  {"integer", "first line shown"},
				"endLine":    {"integer", "last line shown"},
				"nextOffset": {"integer", "offset of the next page; 0 at the end"},
				"truncated":  {"boolean", "the page stops before the end of the file"},
				"sha256":     {"string", "the file's SHA-256"},
			}),
			ReadOnly: true, Idempotent: true,
			run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var req ops.ReadRequest
				if err := decode("read", args, &req, "path"); err != nil {
					return nil, err
				}
				return ops.Read(s.Env, req)
			},
		},
		{
			Name:  "write",
			Title: "Write a file",
			Description: "Create or replace a file with the given content, atomically; parent directories are created and an " +
				"existing file keeps its mode. createOnly refuses an existing file; ifMatch refuses a file that changed since it was read.",
			Input: schemaFor[ops.WriteRequest](),
			Output: object(map[string][2]string{
				"path":    {"string", "the path written"},
				"bytes":   {"integer", "bytes written"},
				"created": {"boolean", "the file is new"},
				"noop":    {"boolean", "the file already had this content"},
				"sha256":  {"string", "the new content's SHA-256"},
			}),
			Destructive: true, Idempotent: true,
			run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var req ops.WriteRequest
				if err := decode("write", args, &req, "path", "content"); err != nil {
					return nil, err
				}
				return ops.Write(s.Env, req)
			},
		},
		{
			Name:  "edit",
			Title: "Edit a file",
			Description: "Replace exact text in a file: oldText must occur exactly once (every occurrence with replaceAll), or give " +
				"a list of edits, all matched against the original and applied together or not at all. A unique near match " +
				"(line endings, trailing whitespace, Unicode punctuation, indentation) is accepted and reported; on no match the " +
				"closest lines are shown with their numbers.",
			Input: schemaFor[ops.EditRequest](),
			Output: object(map[string][2]string{
				"path":         {"string", "the file edited"},
				"replacements": {"integer", "places replaced"},
				"match":        {"array", "how each edit's old text was found"},
				"changed":      {"boolean", "the file changed"},
				"sha256":       {"string", "the new content's SHA-256"},
			}),
			Destructive: true,
			run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var req ops.EditRequest
				if err := decode("edit", args, &req, "path"); err != nil {
					return nil, err
				}
				return ops.Edit(s.Env, req)
			},
		},
		{
			Name:  "exec",
			Title: "Run a command",
			Description: "Run a command in a sandbox over the workspace: the workspace is writable, the rest of the filesystem " +
				"read-only or hidden, credentials hidden" + networkNote(network) + ". Returns the exit code and the output " +
				"(long output keeps its head and tail).",
			Input: schemaFor[ExecInput](),
			Output: object(map[string][2]string{
				"exitCode":   {"integer", "the command's exit code"},
				"stdout":     {"string", "captured standard output"},
				"stderr":     {"string", "captured standard error"},
				"timedOut":   {"boolean", "killed at the timeout"},
				"truncated":  {"boolean", "output was cut in the middle"},
				"durationMs": {"integer", "run time"},
				"driver":     {"string", "the sandbox driver"},
			}),
			Destructive: true, OpenWorld: network,
			run: func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				var in ExecInput
				if err := decode("exec", args, &in); err != nil {
					return nil, err
				}
				return s.RunExec(ctx, in)
			},
		},
	}
}

func networkNote(network bool) string {
	if network {
		return "; it can reach the network"
	}
	return "; there is no network"
}

// RunExec runs a call's command under the session's policy.
func (s *Session) RunExec(ctx context.Context, in ExecInput) (*ops.Output, error) {
	req := s.Exec
	req.Argv, req.Sh, req.Workdir, req.EnvVars = in.Argv, in.Command, in.Workdir, in.Env
	if in.TimeoutSeconds < 0 {
		return nil, result.Usagef("exec: timeoutSeconds must not be negative")
	}
	if in.TimeoutSeconds > 0 {
		t := time.Duration(in.TimeoutSeconds * float64(time.Second))
		if s.Exec.Timeout > 0 && t > s.Exec.Timeout {
			return nil, result.Errorf(result.InvalidArgument, "exec: timeoutSeconds %g is over this server's limit of %g seconds", in.TimeoutSeconds, s.Exec.Timeout.Seconds()).
				WithHint("ask for at most the limit; the person running hunk sets it (--timeout)")
		}
		req.Timeout = t
	}
	env := *s.Env
	env.Stdout, env.Stderr, env.Stdin = nil, nil, nil // a tool call's command reads nothing and streams nowhere
	return ops.Exec(ctx, &env, req)
}

// Insert is edit's insert as a tool: text after line N (0: the start).
func Insert() *Tool {
	return &Tool{
		Name:        "insert",
		Title:       "Insert lines",
		Description: "Insert text as whole lines after a line of a file (0: at the start), in the file's line endings.",
		Input:       schemaFor[ops.InsertRequest](),
		Output: object(map[string][2]string{
			"path":    {"string", "the file"},
			"changed": {"boolean", "the file changed"},
			"sha256":  {"string", "the new content's SHA-256"},
		}),
		Destructive: true,
		run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
			var req ops.InsertRequest
			if err := decode("insert", args, &req, "path", "after", "text"); err != nil {
				return nil, err
			}
			return ops.Insert(s.Env, req)
		},
	}
}
