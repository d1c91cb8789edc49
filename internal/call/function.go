package call

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// OpenAI's function calls: a Responses function_call item and a Chat
// Completions tool call, of the tools hunk declares.

var functionShape = shape{
	name:   OpenAIFunction,
	detect: func(e envelope) bool { return e.Type == "function_call" },
	runs:   func(e envelope) []string { return functionRuns(e.Name) },
	run: func(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
		return function(ctx, s, e.Name, e.Arguments, functionAnswer(e))
	},
	fail: func(e envelope, err error) any { return functionAnswer(e)(say(err)) },
}

var chatShape = shape{
	name:   OpenAIChat,
	detect: func(e envelope) bool { return e.Type == "function" && e.Function != nil },
	runs: func(e envelope) []string {
		if e.Function == nil {
			return nil
		}
		return functionRuns(e.Function.Name)
	},
	run: func(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
		if e.Function == nil {
			return chatAnswer(e)(say(result.Errorf(result.InvalidArgument, "a Chat Completions tool call has a function: {name, arguments}"))), true
		}
		return function(ctx, s, e.Function.Name, e.Function.Arguments, chatAnswer(e))
	},
	fail: func(e envelope, err error) any { return chatAnswer(e)(say(err)) },
}

func functionAnswer(e envelope) func(string) any {
	return func(text string) any {
		return functionOutput{Type: "function_call_output", CallID: e.CallID, Output: text, Caller: e.Caller}
	}
}

func chatAnswer(e envelope) func(string) any {
	return func(text string) any { return chatToolMessage{Role: "tool", ToolCallID: e.ID, Content: text} }
}

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
// functionRuns: Codex's function-style shell tools run exec; any other
// name is a tool the session's set must hold.
func functionRuns(name string) []string {
	if name == "shell" || name == "shell_command" {
		return []string{"exec"}
	}
	return nil
}

func function(ctx context.Context, s *tools.Session, name string, args json.RawMessage, answer func(string) any) (any, bool) {
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
			return answer(say(result.Errorf(result.InvalidArgument, "%s: the arguments must be {\"command\": [...], \"workdir\", \"timeout_ms\"}", name))), true
		}
		x := tools.ExecInput{Workdir: in.Workdir}
		if json.Unmarshal(in.Command, &x.Argv) != nil && json.Unmarshal(in.Command, &x.Command) != nil {
			return answer(say(result.Errorf(result.InvalidArgument, "%s: command must be a list of arguments or a command line", name))), true
		}
		if in.TimeoutMs != nil && *in.TimeoutMs > 0 {
			x.TimeoutSeconds = float64(*in.TimeoutMs) / 1000
		}
		text, failed := shellText(ctx, s, x)
		return answer(text), failed
	}
	if t == nil {
		if err := s.Guard(name); err != nil {
			return answer(say(err)), true
		}
		r := result.Failure(result.Errorf(result.InvalidArgument, "unknown tool %q", name).
			WithHint("tools: "+strings.Join(served(s), ", ")), nil)
		return answer(errorText(r)), true
	}
	r := t.Call(ctx, s, args)
	return answer(modelText(r)), r.IsError
}
