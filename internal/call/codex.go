package call

import (
	"context"
	"encoding/json"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// Codex's shapes: its apply_patch as a custom_tool_call, its local_shell
// tool's local_shell_call, and the JSON it renders a command's result in
// (also for its function-style shell tools, function.go).

var codexApplyPatchShape = shape{
	name:   CodexApplyPatch,
	detect: func(e envelope) bool { return e.Type == "custom_tool_call" },
	runs:   one("apply_patch"),
	run:    codexApplyPatch,
	fail:   customFail,
}

func customFail(e envelope, err error) any {
	return customOutput{Type: "custom_tool_call_output", CallID: e.CallID, Output: say(err), Caller: e.Caller}
}

var localShellShape = shape{
	name:   OpenAILocalShell,
	detect: func(e envelope) bool { return e.Type == "local_shell_call" },
	runs:   one("exec"),
	run:    localShell,
	fail:   localShellFail,
}

func localShellFail(e envelope, err error) any {
	return localShellOutput{Type: "local_shell_call_output", ID: e.CallID, Output: codexExecOutput(say(err), 1, 0)}
}

type customOutput struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Output string          `json:"output"`
	Caller json.RawMessage `json:"caller,omitempty"`
}

func codexApplyPatch(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	if e.Name != "apply_patch" {
		return customFail(e, result.Errorf(result.InvalidArgument, "custom_tool_call: unknown tool %q (hunk serves apply_patch)", e.Name)), true
	}
	var input string
	if err := json.Unmarshal(e.Input, &input); err != nil {
		return customFail(e, result.Errorf(result.InvalidArgument, "custom_tool_call: input must be the patch text (a string)")), true
	}
	out, err := s.Change(ctx, func(env *ops.Env) (*ops.Output, error) {
		return ops.ApplyPatch(env, ops.ApplyPatchRequest{Patch: input})
	})
	if err != nil {
		return customFail(e, err), true
	}
	return customOutput{Type: "custom_tool_call_output", CallID: e.CallID, Output: out.Text, Caller: e.Caller}, false
}

type localShellAction struct {
	Type             string            `json:"type"`
	Command          []string          `json:"command"`
	TimeoutMs        *int64            `json:"timeout_ms"`
	WorkingDirectory string            `json:"working_directory"`
	Env              map[string]string `json:"env"`
	User             string            `json:"user"`
}

// localShellOutput answers a local_shell_call: id is the call's call_id,
// output a JSON string (codexExecOutput).
type localShellOutput struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Output string `json:"output"`
}

func localShell(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	var a localShellAction
	if err := json.Unmarshal(e.Action, &a); err != nil || len(a.Command) == 0 {
		return localShellFail(e, result.Errorf(result.InvalidArgument, "local_shell_call: action must be {\"type\": \"exec\", \"command\": [...]}")), true
	}
	if a.User != "" {
		return localShellFail(e, result.Errorf(result.InvalidArgument, "local_shell_call: running as user %q is not possible here; the command runs as hunk's sandbox runs it, and was not run", a.User)), true
	}
	x := tools.ExecInput{Argv: a.Command, Workdir: a.WorkingDirectory, Env: a.Env}
	if a.TimeoutMs != nil && *a.TimeoutMs > 0 {
		x.TimeoutSeconds = float64(*a.TimeoutMs) / 1000
	}
	text, failed := shellText(ctx, s, x)
	return localShellOutput{Type: "local_shell_call_output", ID: e.CallID, Output: text}, failed
}

// shellText runs x and says its result as Codex does to the model for its
// shell tools: a JSON string {"output": ..., "metadata": {"exit_code",
// "duration_seconds"}}, a command that could not run with its error as the
// output and exit code 1 (or the code of the failure).
func shellText(ctx context.Context, s *tools.Session, x tools.ExecInput) (string, bool) {
	out, d, err := s.RunExec(ctx, x)
	if err != nil {
		return codexExecOutput(say(err), result.ExitCode(err), 0), true
	}
	text := outputText(s, d)
	if out.Failure != nil {
		text += out.Failure.Msg + "\n"
	}
	return codexExecOutput(text, out.ExitCode, float64(d.DurationMs)/1000), out.ExitCode != 0 || out.Failure != nil
}

// outputText is a command's stdout followed by its stderr, on a line of
// their own, each cut to what the session shows a model (the shell's
// model sees what was left out, and how to narrow the command).
func outputText(s *tools.Session, d *ops.ExecDetails) string {
	return execrun.StreamsText(d, int(s.Exec.Shown), "", execrun.ShellRefer)
}

// codexExecOutput is Codex's JSON rendering of a command's result.
func codexExecOutput(output string, exitCode int, seconds float64) string {
	type metadata struct {
		ExitCode        int     `json:"exit_code"`
		DurationSeconds float64 `json:"duration_seconds"`
	}
	b, _ := json.Marshal(struct {
		Output   string   `json:"output"`
		Metadata metadata `json:"metadata"`
	}{output, metadata{exitCode, seconds}})
	return string(b)
}
