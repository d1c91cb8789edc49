// Package call is `hunk call`: one tool call in a provider's own JSON shape
// in, one tool result in the same provider's shape out. The shapes are
// detected from the call (or named), mapped onto hunk's tools (package
// tools) and answered; an unknown or malformed call gets an error result in
// the shape asked for, never a crash.
package call

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// The formats a call can come in.
const (
	OpenAIApplyPatch = "openai-apply-patch" // Responses apply_patch_call
	OpenAIShell      = "openai-shell"       // Responses shell_call
	OpenAILocalShell = "openai-local-shell" // Responses local_shell_call (Codex's local_shell tool)
	CodexApplyPatch  = "codex"              // custom_tool_call named apply_patch
	OpenAIFunction   = "openai-function"    // Responses function_call of a declared tool
	OpenAIChat       = "openai-chat"        // Chat Completions tool_calls entry
	Anthropic        = "anthropic"          // tool_use of str_replace_based_edit_tool, bash or a declared tool
	Hunk             = "hunk"               // {"tool": ..., "arguments": ...}
)

// Formats lists the formats, for --format's help and errors.
var Formats = []string{OpenAIApplyPatch, OpenAIShell, OpenAILocalShell, CodexApplyPatch, OpenAIFunction, OpenAIChat, Anthropic, Hunk}

// envelope is the union of the fields the formats are told apart by.
type envelope struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Operation json.RawMessage `json:"operation"`
	Action    json.RawMessage `json:"action"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Caller (Responses: who made the call, a program or the model) is
	// copied to the output, as the API asks.
	Caller json.RawMessage `json:"caller"`
	// Environment is where a shell_call is meant to run: local, or an
	// OpenAI-hosted container, which hunk refuses.
	Environment map[string]json.RawMessage `json:"environment"`
	Function    *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// Detect names the format of a call.
func Detect(e envelope) string {
	switch {
	case e.Type == "apply_patch_call":
		return OpenAIApplyPatch
	case e.Type == "shell_call":
		return OpenAIShell
	case e.Type == "local_shell_call":
		return OpenAILocalShell
	case e.Type == "custom_tool_call":
		return CodexApplyPatch
	case e.Type == "tool_use":
		return Anthropic
	case e.Type == "function_call":
		return OpenAIFunction
	case e.Type == "function" && e.Function != nil:
		return OpenAIChat
	case e.Tool != "":
		return Hunk
	}
	return ""
}

// Run answers one call (raw JSON) in format (detected when empty), or a
// JSON array of calls (a model's parallel tool calls) with an array of
// results in the same order, one call after another; items of an array that
// are not calls (a Responses message or reasoning item, an Anthropic text or
// thinking block) are passed over, so a whole response.output or content
// list can be given. The result is the JSON document to print; failed
// reports whether a call failed (the process exit code).
func Run(ctx context.Context, s *tools.Session, raw []byte, format string) (out any, failed bool) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(t, &list); err == nil {
			outs := []any{}
			for _, item := range list {
				var kind struct {
					Type string `json:"type"`
				}
				if json.Unmarshal(item, &kind) == nil && notACall[kind.Type] {
					continue
				}
				o, f := runOne(ctx, s, item, format)
				outs = append(outs, o)
				failed = failed || f
			}
			return outs, failed
		}
	}
	return runOne(ctx, s, raw, format)
}

// notACall are the item types of a model's output that are not tool calls.
var notACall = map[string]bool{"message": true, "reasoning": true, "text": true, "thinking": true, "redacted_thinking": true}

func runOne(ctx context.Context, s *tools.Session, raw []byte, format string) (out any, failed bool) {
	var e envelope
	err := json.Unmarshal(raw, &e)
	if format == "" && err == nil {
		format = Detect(e)
	}
	switch format {
	case OpenAIApplyPatch, OpenAIShell, OpenAILocalShell, CodexApplyPatch, OpenAIFunction, OpenAIChat, Anthropic, Hunk:
	case "":
		return result.Failure(result.Errorf(result.InvalidArgument, "unrecognized tool call: %s", describe(raw, err)).
			WithHint("give one JSON object (or an array of them): an OpenAI function_call, apply_patch_call, shell_call or local_shell_call, a Chat Completions tool call, a Codex custom_tool_call, an Anthropic tool_use, or {\"tool\": NAME, \"arguments\": {...}}"), nil), true
	default:
		return result.Failure(result.Usagef("unknown format %q", format).WithHint("formats: "+strings.Join(Formats, ", ")), nil), true
	}
	if err != nil {
		bad := result.Errorf(result.InvalidArgument, "the call is not a JSON object: %v", err)
		return failure(format, e, bad), true
	}
	switch format {
	case OpenAIApplyPatch:
		return openAIApplyPatch(s, e)
	case OpenAIShell:
		return openAIShell(ctx, s, e)
	case OpenAILocalShell:
		return localShell(ctx, s, e)
	case CodexApplyPatch:
		return codexApplyPatch(s, e)
	case Anthropic:
		return anthropic(ctx, s, e)
	case OpenAIFunction, OpenAIChat:
		return function(ctx, s, e, format)
	}
	return hunk(ctx, s, e)
}

func describe(raw []byte, err error) string {
	if err != nil {
		return "not a JSON object (" + err.Error() + ")"
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// failure is err in format's own result shape.
func failure(format string, e envelope, err error) any {
	msg := errorText(result.Failure(err, nil))
	switch format {
	case OpenAIApplyPatch:
		return applyPatchOutput{Type: "apply_patch_call_output", CallID: e.CallID, Status: "failed", Output: msg, Caller: e.Caller}
	case OpenAIShell:
		return shellOutput{Type: "shell_call_output", CallID: e.CallID, Output: []shellResult{{Stderr: msg, Outcome: outcome{Type: "exit", ExitCode: intp(1)}}}, Caller: e.Caller}
	case OpenAILocalShell:
		return localShellOutput{Type: "local_shell_call_output", ID: e.CallID, Output: codexExecOutput(msg, 1, 0)}
	case CodexApplyPatch:
		return customOutput{Type: "custom_tool_call_output", CallID: e.CallID, Output: msg, Caller: e.Caller}
	case Anthropic:
		return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: "Error: " + msg, IsError: true}
	case OpenAIFunction:
		return functionOutput{Type: "function_call_output", CallID: e.CallID, Output: msg, Caller: e.Caller}
	case OpenAIChat:
		return chatToolMessage{Role: "tool", ToolCallID: e.ID, Content: msg}
	}
	return result.Failure(err, nil)
}

func intp(n int) *int { return &n }

// errorText is what a model reads of a failed tool result.
func errorText(r result.ToolResult) string {
	var b []string
	for _, c := range r.Content {
		if c.Type == "text" {
			b = append(b, c.Text)
		}
	}
	return strings.Join(b, "\n")
}

// declared is every tool hunk declares (hunk tools): its own, insert and
// the filesystem set.
func declared(s *tools.Session) tools.Set {
	all := append(tools.Hunk(s.Exec.Network), tools.Insert())
	return append(all, tools.Filesystem()...)
}

// ---- OpenAI: Responses function_call, Chat Completions tool_calls ----

type functionOutput struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Output string          `json:"output"`
	Caller json.RawMessage `json:"caller,omitempty"`
}

type chatToolMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// function answers a call of one of the tools `hunk tools --for openai`
// declares, made as a Responses function_call item or a Chat Completions
// tool call, in the same API's shape: the text the model reads (a failure's
// with its hints). Its arguments are a JSON string (or an object). Codex's
// function-style apply_patch ({"input": PATCH}) is read too.
func function(ctx context.Context, s *tools.Session, e envelope, format string) (any, bool) {
	name, args, id := e.Name, e.Arguments, e.CallID
	if format == OpenAIChat {
		name, args, id = e.Function.Name, e.Function.Arguments, e.ID
	}
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str) // (the APIs send the arguments as a JSON string)
	}
	if name == "apply_patch" {
		var in struct {
			Input *string `json:"input"`
			Patch *string `json:"patch"`
		}
		if json.Unmarshal(args, &in) == nil && in.Input != nil && in.Patch == nil {
			args, _ = json.Marshal(map[string]string{"patch": *in.Input})
		}
	}
	answer := func(text string) any {
		if format == OpenAIChat {
			return chatToolMessage{Role: "tool", ToolCallID: id, Content: text}
		}
		return functionOutput{Type: "function_call_output", CallID: id, Output: text, Caller: e.Caller}
	}
	all := declared(s)
	t := all.Lookup(name)
	if t == nil && (name == "shell" || name == "shell_command") {
		// Codex's function-style shell tools: {"command": [ARGV...]} or
		// {"command": "LINE"}, "workdir", "timeout_ms".
		var in struct {
			Command   json.RawMessage `json:"command"`
			Workdir   string          `json:"workdir"`
			TimeoutMs *int64          `json:"timeout_ms"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return answer(errorText(result.Failure(result.Errorf(result.InvalidArgument, "%s: the arguments must be {\"command\": [...], \"workdir\", \"timeout_ms\"}", name), nil))), true
		}
		x := tools.ExecInput{Workdir: in.Workdir}
		if json.Unmarshal(in.Command, &x.Argv) != nil && json.Unmarshal(in.Command, &x.Command) != nil {
			return answer(errorText(result.Failure(result.Errorf(result.InvalidArgument, "%s: command must be a list of arguments or a command line", name), nil))), true
		}
		if in.TimeoutMs != nil && *in.TimeoutMs > 0 {
			x.TimeoutSeconds = float64(*in.TimeoutMs) / 1000
		}
		text, failed := shellText(ctx, s, x)
		return answer(text), failed
	}
	if t == nil {
		r := result.Failure(result.Errorf(result.InvalidArgument, "unknown tool %q", name).
			WithHint("tools: "+strings.Join(all.Names(), ", ")), nil)
		return answer(errorText(r)), true
	}
	r := t.Call(ctx, s, args)
	text := errorText(r)
	if r.IsError && r.Code != "" {
		text = "[" + string(r.Code) + "] " + text
	}
	return answer(text), r.IsError
}

// hunk answers {"tool": NAME, "arguments": {...}} with the --json result.
func hunk(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	all := declared(s)
	t := all.Lookup(e.Tool)
	if t == nil {
		return result.Failure(result.Errorf(result.InvalidArgument, "unknown tool %q", e.Tool).
			WithHint("tools: "+strings.Join(all.Names(), ", ")), nil), true
	}
	r := t.Call(ctx, s, e.Arguments)
	return r, r.IsError
}

// ---- OpenAI Responses: apply_patch_call ----

type applyPatchOp struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Diff string `json:"diff"`
}

type applyPatchOutput struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Status string          `json:"status"`
	Output string          `json:"output"`
	Caller json.RawMessage `json:"caller,omitempty"`
}

func openAIApplyPatch(s *tools.Session, e envelope) (any, bool) {
	var op applyPatchOp
	if err := json.Unmarshal(e.Operation, &op); err != nil || op.Path == "" {
		return failure(OpenAIApplyPatch, e, result.Errorf(result.InvalidArgument, "apply_patch_call: operation must be {type, path, diff}")), true
	}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	diff := strings.TrimRight(op.Diff, "\n")
	switch op.Type {
	case "create_file":
		patch.WriteString("*** Add File: " + op.Path + "\n")
		if diff != "" {
			for _, l := range strings.Split(diff, "\n") {
				if !strings.HasPrefix(l, "+") {
					l = "+" + l // a create_file diff is the content, each line with "+"
				}
				patch.WriteString(l + "\n")
			}
		}
	case "update_file":
		patch.WriteString("*** Update File: " + op.Path + "\n")
		if diff != "" {
			patch.WriteString(diff + "\n")
		}
	case "delete_file":
		patch.WriteString("*** Delete File: " + op.Path + "\n")
	default:
		return failure(OpenAIApplyPatch, e, result.Errorf(result.InvalidArgument, "apply_patch_call: unknown operation type %q (create_file, update_file, delete_file)", op.Type)), true
	}
	patch.WriteString("*** End Patch\n")
	out, err := ops.ApplyPatch(s.Env, ops.ApplyPatchRequest{Patch: patch.String()})
	if err != nil {
		return failure(OpenAIApplyPatch, e, err), true
	}
	return applyPatchOutput{Type: "apply_patch_call_output", CallID: e.CallID, Status: "completed", Output: out.Text, Caller: e.Caller}, false
}

// ---- Codex: custom_tool_call apply_patch ----

type customOutput struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Output string          `json:"output"`
	Caller json.RawMessage `json:"caller,omitempty"`
}

func codexApplyPatch(s *tools.Session, e envelope) (any, bool) {
	if e.Name != "apply_patch" {
		return failure(CodexApplyPatch, e, result.Errorf(result.InvalidArgument, "custom_tool_call: unknown tool %q (hunk serves apply_patch)", e.Name)), true
	}
	var input string
	if err := json.Unmarshal(e.Input, &input); err != nil {
		return failure(CodexApplyPatch, e, result.Errorf(result.InvalidArgument, "custom_tool_call: input must be the patch text (a string)")), true
	}
	out, err := ops.ApplyPatch(s.Env, ops.ApplyPatchRequest{Patch: input})
	if err != nil {
		return failure(CodexApplyPatch, e, err), true
	}
	return customOutput{Type: "custom_tool_call_output", CallID: e.CallID, Output: out.Text, Caller: e.Caller}, false
}

// ---- OpenAI Responses: shell_call ----

// hostedEnvironment reports whether a shell_call's environment names
// anything but the local machine — a container's type, a container_id, a
// field hunk does not know — and says what it names. Only no environment,
// or {"type": "local"} alone, runs here.
func hostedEnvironment(env map[string]json.RawMessage) (string, bool) {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		var v string
		if json.Unmarshal(env[k], &v) != nil {
			v = string(env[k])
		}
		if k == "type" && (v == "local" || v == "") {
			continue
		}
		parts = append(parts, k+" "+v)
	}
	return strings.Join(parts, ", "), len(parts) > 0
}

type shellAction struct {
	Commands        []string `json:"commands"`
	TimeoutMs       *int64   `json:"timeout_ms"`
	MaxOutputLength *int     `json:"max_output_length"`
}

type outcome struct {
	Type     string `json:"type"` // "exit" or "timeout"
	ExitCode *int   `json:"exit_code,omitempty"`
}

type shellResult struct {
	Stdout  string  `json:"stdout"`
	Stderr  string  `json:"stderr"`
	Outcome outcome `json:"outcome"`
}

type shellOutput struct {
	Type            string          `json:"type"`
	CallID          string          `json:"call_id"`
	MaxOutputLength *int            `json:"max_output_length,omitempty"`
	Output          []shellResult   `json:"output"`
	Caller          json.RawMessage `json:"caller,omitempty"`
}

func openAIShell(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	if where, hosted := hostedEnvironment(e.Environment); hosted {
		// Meant for a container OpenAI hosts: running it here would run it
		// somewhere the model did not mean, with other files.
		return failure(OpenAIShell, e, result.Errorf(result.InvalidArgument,
			"shell_call: this call is for an OpenAI-hosted environment (%s); hunk runs commands only here, in its sandbox, and ran nothing", where).
			WithHint("declare the shell tool with a local environment for hunk to answer its calls; hosted containers are answered by OpenAI")), true
	}
	var a shellAction
	if err := json.Unmarshal(e.Action, &a); err != nil || len(a.Commands) == 0 {
		return failure(OpenAIShell, e, result.Errorf(result.InvalidArgument, "shell_call: action must hold commands, a list of command lines")), true
	}
	in := tools.ExecInput{}
	if a.TimeoutMs != nil && *a.TimeoutMs > 0 {
		in.TimeoutSeconds = float64(*a.TimeoutMs) / 1000
	}
	res := shellOutput{Type: "shell_call_output", CallID: e.CallID, MaxOutputLength: a.MaxOutputLength, Output: []shellResult{}, Caller: e.Caller}
	failed := false
	for _, c := range a.Commands {
		in.Command = c
		out, d, err := s.RunExec(ctx, in)
		if err != nil {
			res.Output = append(res.Output, shellResult{Stderr: errorText(result.Failure(err, nil)), Outcome: outcome{Type: "exit", ExitCode: intp(result.ExitCode(err))}})
			failed = true
			break
		}
		r := shellResult{Stdout: d.Stdout, Stderr: d.Stderr, Outcome: outcome{Type: "exit", ExitCode: intp(out.ExitCode)}}
		if d.TimedOut {
			r.Outcome = outcome{Type: "timeout"}
		}
		if a.MaxOutputLength != nil && *a.MaxOutputLength >= 0 {
			r.Stdout, r.Stderr = capOutput(r.Stdout, r.Stderr, *a.MaxOutputLength)
		}
		res.Output = append(res.Output, r)
	}
	return res, failed
}

// capOutput keeps at most n characters of stdout and stderr together:
// stdout first, then what is left for stderr; a cut stream keeps its head
// and tail.
func capOutput(stdout, stderr string, n int) (string, string) {
	cut := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		if n < 40 {
			return string(r[:n])
		}
		mark := fmt.Sprintf("\n…[%d characters cut]…\n", len(r)-n)
		keep := n - len([]rune(mark))
		if keep < 0 {
			keep = 0
		}
		return string(r[:keep/2]) + mark + string(r[len(r)-(keep-keep/2):])
	}
	stdout = cut(stdout, n)
	left := n - len([]rune(stdout))
	if left < 0 {
		left = 0
	}
	return stdout, cut(stderr, left)
}

// ---- Codex: local_shell_call, and the function-style shell ----

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
		return failure(OpenAILocalShell, e, result.Errorf(result.InvalidArgument, "local_shell_call: action must be {\"type\": \"exec\", \"command\": [...]}")), true
	}
	if a.User != "" {
		return failure(OpenAILocalShell, e, result.Errorf(result.InvalidArgument, "local_shell_call: running as user %q is not possible here; the command runs as hunk's sandbox runs it, and was not run", a.User)), true
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
		return codexExecOutput(errorText(result.Failure(err, nil)), result.ExitCode(err), 0), true
	}
	text := outputText(d)
	if out.Failure != nil {
		text += out.Failure.Msg + "\n"
	}
	return codexExecOutput(text, out.ExitCode, float64(d.DurationMs)/1000), out.ExitCode != 0 || out.Failure != nil
}

// outputText is a command's stdout followed by its stderr, on a line of
// their own.
func outputText(d *ops.ExecDetails) string {
	text := d.Stdout
	if d.Stderr != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += d.Stderr
	}
	return text
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

// ---- Anthropic: tool_use ----

type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

type editorInput struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	ViewRange  []int   `json:"view_range"`
	FileText   *string `json:"file_text"`
	OldStr     *string `json:"old_str"`
	NewStr     *string `json:"new_str"`
	InsertLine *int    `json:"insert_line"`
	InsertText *string `json:"insert_text"`
}

func anthropic(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	ok := func(text string) (any, bool) {
		return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: text}, false
	}
	fail := func(err error) (any, bool) { return failure(Anthropic, e, err), true }
	switch e.Name {
	case "bash":
		var in struct {
			Command string `json:"command"`
			Restart bool   `json:"restart"`
		}
		if err := json.Unmarshal(e.Input, &in); err != nil {
			return fail(result.Errorf(result.InvalidArgument, "bash: input must be {\"command\": ...}"))
		}
		if in.Restart {
			return ok("Each command runs in a fresh sandboxed shell; there is no session to restart.")
		}
		if in.Command == "" {
			return fail(result.Errorf(result.InvalidArgument, "bash: no command given"))
		}
		out, d, err := s.RunExec(ctx, tools.ExecInput{Command: in.Command})
		if err != nil {
			return fail(err)
		}
		text := outputText(d)
		if out.Failure != nil {
			text += "\n" + out.Failure.Msg
		}
		if out.ExitCode != 0 && out.Failure == nil {
			text += fmt.Sprintf("\nExit code: %d", out.ExitCode)
		}
		return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: text, IsError: out.ExitCode != 0}, out.ExitCode != 0
	case "str_replace_based_edit_tool", "str_replace_editor":
	default:
		// One of the tools `hunk tools --for anthropic` declares.
		if t := declared(s).Lookup(e.Name); t != nil {
			r := t.Call(ctx, s, e.Input)
			text := errorText(r)
			if r.IsError && r.Code != "" {
				text = "[" + string(r.Code) + "] " + text // as hunk mcp and the OpenAI shapes say it
			}
			return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: text, IsError: r.IsError}, r.IsError
		}
		return fail(result.Errorf(result.InvalidArgument, "unknown tool %q (hunk serves str_replace_based_edit_tool, bash and %s)", e.Name, strings.Join(declared(s).Names(), ", ")))
	}
	var in editorInput
	if err := json.Unmarshal(e.Input, &in); err != nil {
		return fail(result.Errorf(result.InvalidArgument, "%s: bad input: %v", e.Name, err))
	}
	if in.Path == "" {
		return fail(result.Errorf(result.InvalidArgument, "%s: missing path", e.Name))
	}
	switch in.Command {
	case "view":
		req := ops.ReadRequest{Path: in.Path, LineNumbers: true}
		if len(in.ViewRange) == 2 {
			req.Offset = in.ViewRange[0]
			if in.ViewRange[1] > 0 {
				if in.ViewRange[1] < in.ViewRange[0] {
					return fail(result.Errorf(result.InvalidArgument, "view_range [%d, %d]: the end comes before the start", in.ViewRange[0], in.ViewRange[1]))
				}
				req.Limit = in.ViewRange[1] - in.ViewRange[0] + 1
			}
		} else if len(in.ViewRange) != 0 {
			return fail(result.Errorf(result.InvalidArgument, "view_range must be [start, end] (end -1: to the end of the file)"))
		}
		out, err := ops.Read(s.Env, req)
		if err != nil {
			return fail(notFound(err))
		}
		// The page's notices name read's options; say them in view_range.
		text := continueRE.ReplaceAllString(out.Text, "Use view_range [$1, -1] to continue.")
		return ok(text)
	case "create":
		if in.FileText == nil {
			return fail(result.Errorf(result.InvalidArgument, "create: missing file_text"))
		}
		// As the reference implementation: create never overwrites.
		if _, err := ops.Write(s.Env, ops.WriteRequest{Path: in.Path, Content: *in.FileText, CreateOnly: true}); err != nil {
			if result.As(err).Code == result.AlreadyExists {
				err = result.Errorf(result.AlreadyExists, "File already exists at: %s. Cannot overwrite files using command `create`.", in.Path)
			}
			return fail(err)
		}
		return ok("File created successfully at: " + in.Path)
	case "str_replace":
		if in.OldStr == nil {
			return fail(result.Errorf(result.InvalidArgument, "str_replace: missing old_str"))
		}
		nw := ""
		if in.NewStr != nil {
			nw = *in.NewStr
		}
		out, err := ops.Edit(s.Env, ops.EditRequest{Path: in.Path, OldText: *in.OldStr, NewText: nw})
		if err != nil {
			return fail(editError(err))
		}
		text := "Successfully replaced text at exactly one location."
		if !strings.HasPrefix(out.Message, "Successfully") {
			text = out.Message
		}
		return ok(text)
	case "insert":
		text := in.InsertText
		if text == nil {
			text = in.NewStr
		}
		if in.InsertLine == nil || text == nil {
			return fail(result.Errorf(result.InvalidArgument, "insert: needs insert_line and insert_text (or new_str)"))
		}
		if _, err := ops.Insert(s.Env, ops.InsertRequest{Path: in.Path, After: *in.InsertLine, Text: *text}); err != nil {
			return fail(notFound(err))
		}
		return ok(fmt.Sprintf("Text inserted successfully after line %d of %s.", *in.InsertLine, in.Path))
	case "undo_edit":
		// The newest change to the path (this session's, under --session),
		// taken back from the history.
		if _, err := ops.UndoOwn(s.Env, ops.UndoRequest{Path: in.Path}); err != nil {
			return fail(err)
		}
		return ok("Last edit to " + in.Path + " undone successfully.")
	}
	return fail(result.Errorf(result.InvalidArgument, "%s: unknown command %q (view, create, str_replace, insert)", e.Name, in.Command))
}

var continueRE = regexp.MustCompile(`Use --offset (\d+) to continue\.`)

// notFound puts the documented "File not found" first.
func notFound(err error) error {
	re := result.As(err)
	if re.Code == result.NotFound {
		c := *re
		c.Msg = "File not found: " + re.Msg
		return &c
	}
	return err
}

// editError puts str_replace's documented wording first, hunk's detail after.
func editError(err error) error {
	re := result.As(err)
	c := *re
	switch re.Code {
	case result.NoMatch:
		c.Msg = "No match found for replacement. Please check your text and try again.\n" + re.Msg
	case result.Ambiguous:
		c.Msg = "Found multiple matches for replacement text. Please provide more context to make a unique match.\n" + re.Msg
	case result.NotFound:
		c.Msg = "File not found: " + re.Msg
	default:
		return err
	}
	return &c
}
