package tools

// Declarations of the tools for each provider's API, printed by `hunk
// tools --for ...`; built from the same table the MCP server serves.

// CodexGrammar is the Lark grammar of Codex's freeform apply_patch tool:
// the patch format hunk applies, as Codex declares it to the model.
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

%import common.LF
`

// OpenAI is the tool list of a Responses API request: hunk's tools as
// function tools, and the built-in apply_patch and shell tools that hunk
// call answers.
func OpenAI(set Set) []map[string]any {
	out := []map[string]any{}
	for _, t := range set {
		out = append(out, map[string]any{
			"type": "function", "name": t.Name, "description": t.Description,
			"parameters": t.Input, "strict": false,
		})
	}
	out = append(out, map[string]any{"type": "apply_patch"}, map[string]any{"type": "shell"})
	return out
}

// Codex is Codex's freeform apply_patch tool (a custom tool with the Lark
// grammar), answered by hunk call's custom_tool_call shape.
func Codex() []map[string]any {
	return []map[string]any{{
		"type": "custom",
		"name": "apply_patch",
		"description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON. " +
			"Files are added, deleted or updated with *** Add File:, *** Delete File: and *** Update File: sections between " +
			"*** Begin Patch and *** End Patch; changed lines are prefixed with '+' or '-', context lines with a space.",
		"format": map[string]any{"type": "grammar", "syntax": "lark", "definition": CodexGrammar},
	}}
}

// Anthropic is the tool list of a Messages API request: the text editor and
// bash tools hunk call answers, and hunk's tools as custom tools.
func Anthropic(set Set) []map[string]any {
	out := []map[string]any{
		{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
		{"type": "bash_20250124", "name": "bash"},
	}
	for _, t := range set {
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Input})
	}
	return out
}
