package call

// Anthropic's tool_use: its text editor tool (str_replace_based_edit_tool,
// and the older str_replace_editor), its bash tool, and the tools `hunk
// tools --for anthropic` declares.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

var anthropicShape = shape{
	name:   Anthropic,
	detect: func(e envelope) bool { return e.Type == "tool_use" },
	runs:   anthropicRuns,
	run:    anthropic,
	fail:   anthropicFail,
}

func anthropicFail(e envelope, err error) any {
	return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: "Error: " + say(err), IsError: true}
}

type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// anthropicRuns maps Anthropic's own tools to the tool each command runs.
func anthropicRuns(e envelope) []string {
	switch e.Name {
	case "bash":
		return []string{"exec"}
	case "Grep", "Glob":
		return []string{"search", "search_files"}
	case "str_replace_based_edit_tool", "str_replace_editor":
		var in tools.EditorInput
		_ = json.Unmarshal(e.Input, &in)
		switch in.Command {
		case "view":
			return []string{"read", "read_text_file", "read_file"}
		case "create":
			return []string{"write", "write_file"}
		case "undo_edit":
			return []string{"undo"}
		}
		return []string{"edit", "edit_file"}
	}
	return nil
}

func anthropic(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	switch e.Name {
	case "bash":
		return bash(ctx, s, e)
	case "str_replace_based_edit_tool", "str_replace_editor":
		return editor(ctx, s, e)
	}
	if r, failed, ok := claudeSearch(ctx, s, e); ok {
		return r, failed
	}
	// One of the tools `hunk tools --for anthropic` declares.
	if t := declared(s).Lookup(e.Name); t != nil {
		r := t.Call(ctx, s, e.Input)
		return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: modelText(r), IsError: r.IsError}, r.IsError
	}
	if err := s.Guard(e.Name); err != nil {
		return anthropicFail(e, err), true
	}
	return anthropicFail(e, result.Errorf(result.InvalidArgument, "unknown tool %q (hunk serves str_replace_based_edit_tool, bash, Grep, Glob and %s)", e.Name, strings.Join(served(s), ", "))), true
}

// bash runs the command in a fresh sandboxed shell: there is no session to
// restart.
func bash(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	var in struct {
		Command string `json:"command"`
		Restart bool   `json:"restart"`
	}
	if err := json.Unmarshal(e.Input, &in); err != nil {
		return anthropicFail(e, result.Errorf(result.InvalidArgument, "bash: input must be {\"command\": ...}")), true
	}
	if in.Restart {
		return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: "Each command runs in a fresh sandboxed shell; there is no session to restart."}, false
	}
	if in.Command == "" {
		return anthropicFail(e, result.Errorf(result.InvalidArgument, "bash: no command given")), true
	}
	out, d, err := s.RunExec(ctx, tools.ExecInput{Command: in.Command})
	if err != nil {
		return anthropicFail(e, err), true
	}
	var lines []string
	if o := strings.TrimSuffix(outputText(s, d), "\n"); o != "" {
		lines = append(lines, o)
	}
	if out.Failure != nil {
		lines = append(lines, out.Failure.Msg)
	}
	if out.ExitCode != 0 && out.Failure == nil {
		lines = append(lines, fmt.Sprintf("Exit code: %d", out.ExitCode))
	}
	text := strings.Join(lines, "\n")
	return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: text, IsError: out.ExitCode != 0}, out.ExitCode != 0
}

// editor answers the text editor tool's commands, each in the words its
// documentation gives (tools.Editor).
func editor(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	var in tools.EditorInput
	if err := json.Unmarshal(e.Input, &in); err != nil {
		return anthropicFail(e, result.Errorf(result.InvalidArgument, "%s: bad input: %v", e.Name, err)), true
	}
	run := func(env *ops.Env) (*ops.Output, error) {
		c := *s
		c.Env = env
		text, err := tools.Editor(&c, e.Name, in)
		return &ops.Output{Text: text, Message: text}, err
	}
	var out *ops.Output
	var err error
	if in.Command == "view" {
		out, err = run(s.Env)
	} else {
		out, err = s.Change(ctx, run) // (the configured checks after a change)
	}
	if err != nil {
		return anthropicFail(e, err), true
	}
	return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: out.Text}, false
}
