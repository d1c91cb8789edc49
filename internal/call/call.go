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
	"slices"
	"strings"

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
	Gemini           = "gemini"             // functionCall part of Gemini's own tools or a declared tool
	Hunk             = "hunk"               // {"tool": ..., "arguments": ...}
)

// shape is one provider's call shape: how a call in it is told apart
// (detect, on the fields every shape is read into), answered (run), and how
// a failure is said in it (fail).
// Each provider's shapes are in a file of their own.
type shape struct {
	name   string
	detect func(e envelope) bool
	// runs names the tool a call of the shape's own runs — any one of
	// the names, hunk's or the filesystem set's alike (nil: a tool the
	// call names itself, looked up among the session's tools).
	runs func(e envelope) []string
	run  func(ctx context.Context, s *tools.Session, e envelope) (any, bool)
	fail func(e envelope, err error) any
}

// shapes are every shape, in the order Detect tries them.
var shapes = []shape{
	openAIApplyPatchShape, openAIShellShape, localShellShape, codexApplyPatchShape,
	functionShape, chatShape, anthropicShape, geminiShape, hunkShape,
}

// Formats lists the formats, for --format's help and errors.
var Formats = func() []string {
	var names []string
	for _, sh := range shapes {
		names = append(names, sh.name)
	}
	return names
}()

func shapeOf(name string) *shape {
	for i := range shapes {
		if shapes[i].name == name {
			return &shapes[i]
		}
	}
	return nil
}

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
	// FunctionCall is a Gemini functionCall part's.
	FunctionCall *geminiCall `json:"functionCall"`
	Function     *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// Detect names the format of a call ("" none).
func Detect(e envelope) string {
	for _, sh := range shapes {
		if sh.detect(e) {
			return sh.name
		}
	}
	return ""
}

// Run answers one call (raw JSON) in format (detected when empty), or a
// JSON array of calls (a model's parallel tool calls) with an array of
// results in the same order, one call after another; items of an array that
// are not calls (a Responses message or reasoning item, an Anthropic text or
// thinking block) are passed over, so a whole response.output or content
// list can be given (or a Gemini model's content, {"role": "model",
// "parts": [...]}, answered as the user's content of its responses). The
// result is the JSON document to print; failed reports whether a call
// failed (the process exit code).
func Run(ctx context.Context, s *tools.Session, raw []byte, format string) (out any, failed bool) {
	var content struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	}
	if json.Unmarshal(raw, &content) == nil && content.Role == "model" && len(content.Parts) > 0 {
		// A Gemini model's whole content: its function calls' responses,
		// as the user's content that goes back.
		parts, f := Run(ctx, s, content.Parts, format)
		return map[string]any{"role": "user", "parts": parts}, f
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(t, &list); err == nil {
			outs := []any{}
			for _, item := range list {
				var kind struct {
					Type         string          `json:"type"`
					FunctionCall json.RawMessage `json:"functionCall"`
					Text         *string         `json:"text"`
					Thought      *bool           `json:"thought"`
				}
				if json.Unmarshal(item, &kind) == nil && (notACall[kind.Type] ||
					kind.Type == "" && kind.FunctionCall == nil && (kind.Text != nil || kind.Thought != nil)) {
					continue // (a Gemini text or thought part)
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
	sh := shapeOf(format)
	switch {
	case format == "":
		return result.Failure(result.Errorf(result.InvalidArgument, "unrecognized tool call: %s", describe(raw, err)).
			WithHint("give one JSON object (or an array of them): an OpenAI function_call, apply_patch_call, shell_call or local_shell_call, a Chat Completions tool call, a Codex custom_tool_call, an Anthropic tool_use, a Gemini functionCall part, or {\"tool\": NAME, \"arguments\": {...}}"), nil), true
	case sh == nil:
		return result.Failure(result.Usagef("unknown format %q", format).WithHint("formats: "+strings.Join(Formats, ", ")), nil), true
	case err != nil:
		return sh.fail(e, result.Errorf(result.InvalidArgument, "the call is not a JSON object: %v", err)), true
	}
	if err := serves(s, sh, e); err != nil {
		return sh.fail(e, err), true
	}
	return sh.run(ctx, s, e)
}

// serves is the guard every call passes: a call runs only a tool the
// session's surface serves (Session.Tools). A shape's own operation (a
// shell call, Anthropic's editor, an apply_patch call) is mapped to the
// tool it runs; a call that names a tool is looked up among the served
// ones by its shape (declared), so it is refused as unknown there.
func serves(s *tools.Session, sh *shape, e envelope) error {
	if s.Tools == nil || sh.runs == nil {
		return nil
	}
	names := sh.runs(e)
	if names == nil {
		return nil
	}
	for _, n := range names {
		if s.Tools.Lookup(n) != nil {
			return nil
		}
	}
	return s.Guard(names[0])
}

// one is a runs that names the same tools for every call.
func one(names ...string) func(envelope) []string { return func(envelope) []string { return names } }

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

// say is what a model reads of err.
func say(err error) string { return errorText(result.Failure(err, nil)) }

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

// modelText is what a model reads of a tool's result: its text, a failure
// led by its code in brackets ("[NO_MATCH] ..."), as hunk mcp says it.
func modelText(r result.ToolResult) string {
	text := errorText(r)
	if r.IsError && r.Code != "" {
		text = "[" + string(r.Code) + "] " + text
	}
	return text
}

// declared is the session's tools (Session.Tools), or every tool hunk has
// when it names none; a call of a tool hunk has and does not serve is
// refused by Session.Guard (TOOL_DISABLED), not as unknown.
func declared(s *tools.Session) tools.Set {
	if s.Tools != nil {
		return s.Tools.Set
	}
	return tools.All(s.Exec.Network)
}

// served are the names of the tools the session serves, for a hint.
func served(s *tools.Session) []string {
	names := tools.All(s.Exec.Network).Names()
	if s.Tools != nil {
		names = s.Tools.Names()
	}
	var once []string // (a provider's own set's twins named once)
	for _, n := range names {
		if !slices.Contains(once, n) {
			once = append(once, n)
		}
	}
	return once
}
