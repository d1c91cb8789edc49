package tools

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Declarations of the tools for each provider's API, printed by `hunk
// tools --for ...`; built from the same table the MCP server serves.

// CodexGrammar is the Lark grammar of Codex's freeform apply_patch tool:
// the patch format hunk applies, as Codex CLI 0.171.0 declares it to the
// model, byte for byte (TestCodexDeclaration reads it from Codex itself).
const CodexGrammar = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF`

// OpenAI is the tool list of a Responses API request: hunk's tools as
// function tools (in strict mode, OpenAIStrict's parameters), and the
// built-in shell tool that hunk call answers.
func OpenAI(set Set, strict bool) []map[string]any {
	out := []map[string]any{}
	for _, t := range set {
		params := t.Input
		if strict {
			params, _ = OpenAIStrict(t.Input)
		}
		out = append(out, map[string]any{
			"type": "function", "name": t.Name, "description": t.Description,
			"parameters": params, "strict": strict,
		})
	}
	// apply_patch is declared once, as hunk's function (every patch format,
	// all files or none); hunk call also answers the built-in apply_patch
	// tool's calls, for a harness that declares it instead. The built-in
	// shell runs exec: declared when exec is served.
	if set.Lookup("exec") != nil {
		out = append(out, map[string]any{"type": "shell"})
	}
	return out
}

// OpenAIChat is the tool list of a Chat Completions request: hunk's tools
// as function tools ({"type": "function", "function": {...}}), answered by
// hunk call's Chat Completions shape.
func OpenAIChat(set Set, strict bool) []map[string]any {
	out := []map[string]any{}
	for _, t := range set {
		params := t.Input
		if strict {
			params, _ = OpenAIStrict(t.Input)
		}
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": params, "strict": strict,
		}})
	}
	return out
}

// CodexDescription is the description Codex CLI 0.171.0 gives its
// apply_patch tool: a model trained on Codex knows the format by it.
const CodexDescription = "The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON."

// Codex is Codex's freeform apply_patch tool (a custom tool with the Lark
// grammar), answered by hunk call's custom_tool_call shape.
func Codex() []map[string]any {
	return []map[string]any{{
		"type":        "custom",
		"name":        "apply_patch",
		"description": CodexDescription,
		"format":      map[string]any{"type": "grammar", "syntax": "lark", "definition": CodexGrammar},
	}}
}

// Anthropic is the tool list of a Messages API request: the text editor and
// bash tools hunk call answers, and hunk's tools as custom tools.
func Anthropic(set Set) []map[string]any {
	// Anthropic's own tools, each when what it runs is served: the
	// editor edits (its view and create read and write), bash execs.
	out := []map[string]any{}
	if set.Lookup("edit") != nil {
		out = append(out, map[string]any{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"})
	}
	if set.Lookup("exec") != nil {
		out = append(out, map[string]any{"type": "bash_20250124", "name": "bash"})
	}
	for _, t := range set {
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Input})
	}
	return out
}

// GeminiDeclarations is the tools list of a Gemini API request (generateContent's
// "tools"): one Tool of functionDeclarations, each tool's schema as its
// parametersJsonSchema, answered by hunk call's functionCall shape.
func GeminiDeclarations(set Set) []map[string]any {
	decls := []map[string]any{}
	for _, t := range set {
		decls = append(decls, map[string]any{"name": t.Name, "description": t.Description, "parametersJsonSchema": t.Input})
	}
	return []map[string]any{{"functionDeclarations": decls}}
}

// OpenAIStrict is s as OpenAI's strict mode (structured outputs) takes a
// function's parameters: every object closed (additionalProperties false)
// with every property required, an optional one nullable instead — the
// model sends null for "left out", and hunk reads a null as left out. An
// object with free-form keys (exec's env) cannot be said in strict mode and
// is left out of the declaration; dropped names those properties.
func OpenAIStrict(s *jsonschema.Schema) (strict *jsonschema.Schema, dropped []string) {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	strict = new(jsonschema.Schema)
	if err := json.Unmarshal(b, strict); err != nil {
		panic(err)
	}
	var walk func(n *jsonschema.Schema, path string)
	walk = func(n *jsonschema.Schema, path string) {
		if n == nil {
			return
		}
		walk(n.Items, path+"[]")
		if n.Type != "object" {
			return
		}
		optional := map[string]bool{}
		for name := range n.Properties {
			optional[name] = !slices.Contains(n.Required, name)
		}
		n.Required = nil
		for _, name := range slices.Sorted(maps.Keys(n.Properties)) {
			p := n.Properties[name]
			if p.Type == "object" && p.AdditionalProperties != nil && p.Properties == nil {
				delete(n.Properties, name)
				dropped = append(dropped, path+name)
				continue
			}
			walk(p, path+name+".")
			if optional[name] && p.Type != "" {
				p.Types, p.Type = []string{p.Type, "null"}, ""
			}
			n.Required = append(n.Required, name)
		}
		n.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	walk(strict, "")
	return strict, dropped
}
