package tools

// Gemini CLI's own file tools — read_file, write_file, replace — in their
// input shapes, name for name, with hunk's guarantees. read_file and
// write_file are also the filesystem set's names: the set is Own, and a
// Gemini functionCall finds these (Set.Find), any other shape the
// filesystem set's.

import (
	"fmt"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

type (
	gemRead struct {
		FilePath  string `json:"file_path" jsonschema:"the path to the file to read (absolute, inside the workspace, or relative to it)"`
		StartLine int    `json:"start_line,omitempty" jsonschema:"optional: the 1-based line number to start reading from"`
		EndLine   int    `json:"end_line,omitempty" jsonschema:"optional: the 1-based line number to end reading at (inclusive)"`
		Offset    *int   `json:"offset,omitempty" jsonschema:"optional: the 0-based line to start reading from (earlier versions; start_line is 1-based)"`
		Limit     int    `json:"limit,omitempty" jsonschema:"optional: the most lines to read (with offset)"`
	}
	gemWrite struct {
		FilePath string `json:"file_path" jsonschema:"the path to the file to write to (absolute, inside the workspace, or relative to it)"`
		Content  string `json:"content" jsonschema:"the content to write to the file; no omission placeholders ('rest of code ...'): the complete literal content"`
	}
	gemReplace struct {
		FilePath    string `json:"file_path" jsonschema:"the path to the file to modify (absolute, inside the workspace, or relative to it)"`
		Instruction string `json:"instruction,omitempty" jsonschema:"a semantic description of the change (recorded nowhere: the edit is old_string and new_string)"`
		OldString   string `json:"old_string" jsonschema:"the exact literal text to replace; empty creates a file that does not exist"`
		NewString   string `json:"new_string" jsonschema:"the exact literal text to replace old_string with"`
		// AllowMultiple replaces every occurrence (Gemini CLI 0.50 on);
		// ExpectedReplacements is the count there must be (earlier).
		AllowMultiple        bool `json:"allow_multiple,omitempty" jsonschema:"replace every occurrence of old_string (default: exactly one must be found)"`
		ExpectedReplacements int  `json:"expected_replacements,omitempty" jsonschema:"the number of occurrences to replace, exactly (default 1)"`
	}
)

// Gemini is Gemini CLI's file tools' set.
func Gemini() Set {
	return inSet("gemini", Set{
		ccTool("read_file", "ReadFile", "Reads and returns the content of a file of the workspace: a page of lines "+
			"(start_line to end_line, 1-based), saying how to read on when the file is longer.", []string{"file_path"}, true, false,
			func(s *Session, in gemRead) (*ops.Output, error) {
				req := ops.ReadRequest{Path: in.FilePath, Offset: in.StartLine, Continue: func(offset int, column int64) string {
					if column > 0 {
						return fmt.Sprintf(`{"start_line": %d} (the line goes on past column %d)`, offset, column)
					}
					return fmt.Sprintf(`{"start_line": %d}`, offset)
				}}
				switch {
				case in.Offset != nil:
					req.Offset, req.Limit = *in.Offset+1, in.Limit
				case in.EndLine > 0:
					if in.EndLine < max(in.StartLine, 1) {
						return nil, result.Errorf(result.InvalidArgument, "read_file: end_line %d comes before start_line %d", in.EndLine, in.StartLine)
					}
					req.Limit = in.EndLine - max(in.StartLine, 1) + 1
				}
				return ops.Read(s.Env, req)
			}),
		ccTool("write_file", "WriteFile", "Writes content to a file of the workspace, atomically, creating it or replacing it "+
			"(an existing file must have been read first, and not changed since).", []string{"file_path", "content"}, false, true,
			func(s *Session, in gemWrite) (*ops.Output, error) {
				return ops.Write(s.Env, ops.WriteRequest{Path: in.FilePath, Content: in.Content})
			}),
		ccTool("replace", "Edit", "Replaces text within a file: exactly one occurrence of old_string, every one with "+
			"allow_multiple, or exactly expected_replacements; an empty old_string creates a file that does not exist.",
			[]string{"file_path", "old_string", "new_string"}, false, true,
			func(s *Session, in gemReplace) (*ops.Output, error) {
				if in.OldString == "" {
					return ops.Write(s.Env, ops.WriteRequest{Path: in.FilePath, Content: in.NewString, CreateOnly: true})
				}
				if in.OldString == in.NewString {
					return nil, result.Errorf(result.InvalidArgument, "replace: old_string and new_string are the same: there is no change to make")
				}
				spec := ops.EditSpec{OldText: in.OldString, NewText: in.NewString, ReplaceAll: in.AllowMultiple, Expect: in.ExpectedReplacements}
				out, err := ops.EditFile(s.Env, in.FilePath, []ops.EditSpec{spec}, false)
				if err != nil {
					return nil, err
				}
				if d, ok := out.Details.(*ops.EditDetails); ok {
					// Gemini CLI's words, and the change as its diff.
					out.Text = fmt.Sprintf("Successfully modified file: %s (%d replacements).\n%s", in.FilePath, d.Replacements, out.Text)
					out.Message = out.Text
				}
				return out, nil
			}),
	})
}

// geminiWords are the Gemini set's (its tools' arguments).
var geminiWords = ownWords(`"allow_multiple": true`, "write_file")
