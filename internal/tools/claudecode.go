package tools

// Claude Code's own file tools — Read, Write, Edit, MultiEdit — in their
// input shapes, name for name, with hunk's guarantees: a model trained on
// Claude Code, or a harness that declares its tools, meets the tools it
// knows (file_path absolute inside the workspace, or relative to it).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

type (
	ccRead struct {
		FilePath string `json:"file_path" jsonschema:"the file to read (absolute, inside the workspace, or relative to it)"`
		Offset   int    `json:"offset,omitempty" jsonschema:"the line number to start reading from"`
		Limit    int    `json:"limit,omitempty" jsonschema:"the number of lines to read (default 2000)"`
	}
	ccWrite struct {
		FilePath string `json:"file_path" jsonschema:"the file to write (absolute, inside the workspace, or relative to it)"`
		Content  string `json:"content" jsonschema:"the content to write to the file"`
	}
	ccEdit struct {
		FilePath   string `json:"file_path" jsonschema:"the file to modify (absolute, inside the workspace, or relative to it)"`
		OldString  string `json:"old_string" jsonschema:"the text to replace"`
		NewString  string `json:"new_string" jsonschema:"the text to replace it with (must differ from old_string)"`
		ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace all occurrences of old_string (default false)"`
	}
	ccEditItem struct {
		OldString  string `json:"old_string" jsonschema:"the text to replace"`
		NewString  string `json:"new_string" jsonschema:"the text to replace it with"`
		ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace all occurrences of old_string (default false)"`
	}
	ccMultiEdit struct {
		FilePath string       `json:"file_path" jsonschema:"the file to modify (absolute, inside the workspace, or relative to it)"`
		Edits    []ccEditItem `json:"edits" jsonschema:"the edits, applied in order, each to the result of the one before; all or none"`
	}
)

// ClaudeCode is Claude Code's file tools' set.
func ClaudeCode() Set {
	return inSet("claude-code", Set{
		ccTool("Read", "Read a file", "Reads a file of the workspace: up to 2000 lines from offset, each line numbered (cat -n), "+
			"a directory's entries, or an image.", []string{"file_path"}, true, false,
			func(s *Session, in ccRead) (*ops.Output, error) {
				return ops.Read(s.Env, ops.ReadRequest{Path: in.FilePath, Offset: in.Offset, Limit: in.Limit, LineNumbers: true,
					Continue: func(offset int, _ int64) string { return fmt.Sprintf(`{"offset": %d}`, offset) }})
			}),
		ccTool("Write", "Write a file", "Writes a file of the workspace, atomically, replacing it if it exists "+
			"(an existing file must have been read first, and not changed since).", []string{"file_path", "content"}, false, true,
			func(s *Session, in ccWrite) (*ops.Output, error) {
				return ops.Write(s.Env, ops.WriteRequest{Path: in.FilePath, Content: in.Content})
			}),
		ccTool("Edit", "Edit a file", "Performs exact string replacements in a file: old_string must occur once (every "+
			"occurrence with replace_all); an empty old_string creates a file that does not exist.",
			[]string{"file_path", "old_string", "new_string"}, false, true,
			func(s *Session, in ccEdit) (*ops.Output, error) {
				if in.OldString == "" {
					return ops.Write(s.Env, ops.WriteRequest{Path: in.FilePath, Content: in.NewString, CreateOnly: true})
				}
				if in.OldString == in.NewString {
					return nil, result.Errorf(result.InvalidArgument, "Edit: old_string and new_string are the same: there is no change to make")
				}
				return ops.Edit(s.Env, ops.EditRequest{Path: in.FilePath, OldText: in.OldString, NewText: in.NewString, ReplaceAll: in.ReplaceAll})
			}),
		ccTool("MultiEdit", "Edit a file in several places", "Makes several edits to one file, in order, each to the result "+
			"of the one before (each as Edit's), all or none.", []string{"file_path", "edits"}, false, true,
			func(s *Session, in ccMultiEdit) (*ops.Output, error) {
				if len(in.Edits) == 0 {
					return nil, result.Errorf(result.InvalidArgument, "MultiEdit: edits is empty: give at least one {old_string, new_string}")
				}
				specs := make([]ops.EditSpec, len(in.Edits))
				for i, e := range in.Edits {
					if e.OldString == e.NewString {
						return nil, result.Errorf(result.InvalidArgument, "MultiEdit: edits[%d]: old_string and new_string are the same", i)
					}
					specs[i] = ops.EditSpec{OldText: e.OldString, NewText: e.NewString, ReplaceAll: e.ReplaceAll}
				}
				out, err := ops.EditFile(s.Env, in.FilePath, specs, false)
				if err == nil {
					out.Text = fmt.Sprintf("Applied %d edits to %s.", len(specs), in.FilePath)
					out.Message = out.Text
				}
				return out, err
			}),
	})
}

// ccTool builds one of Claude Code's tools, its arguments decoded strictly
// into In.
func ccTool[In any](name, title, desc string, required []string, readOnly, destructive bool,
	run func(s *Session, in In) (*ops.Output, error)) *Tool {
	return &Tool{
		Name: name, Title: title, Description: desc, Input: schemaFor[In](), ReadOnly: readOnly, Destructive: destructive,
		Idempotent: readOnly,
		run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
			var in In
			if err := decode(name, args, &in, required...); err != nil {
				return nil, err
			}
			return run(s, in)
		},
	}
}

// claudeCodeWords are the Claude Code set's (its tools' arguments).
var claudeCodeWords = ownWords(`"replace_all": true`, "the Write tool")

// ownWords are the words of a provider's own file tools: every is how
// they say "replace every match", write their write tool.
func ownWords(every, write string) *strings.Replacer {
	return strings.NewReplacer(
		`add surrounding lines to the old text so that it matches one place only, or replace every match with --replace-all ("replaceAll": true in --edits)`,
		`add surrounding lines to old_string so that it matches one place only, or set `+every,
		`--replace-all ("replaceAll": true in --edits)`, every,
		"--replace-all", every,
		"'hunk write'", write,
		"raise the limit with --max-bytes (config edit.max-bytes)", "the person running hunk sets the limit (config edit.max-bytes)",
		"raise the limit with --max-bytes (or write.max-bytes in the config)", "the person running hunk sets the limit (config write.max-bytes)",
		"or pass --allow-placeholders if", "or the person running hunk allows them (--allow-placeholders) if",
		"--workspace-only=false lifts the confinement explicitly", "only the person running hunk can lift the confinement",
	)
}
