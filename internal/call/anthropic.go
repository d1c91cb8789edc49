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
	"github.com/hunk-dev/hunk/internal/read"
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

// anthropicRuns maps Anthropic's own tools to the tool each command runs.
func anthropicRuns(e envelope) []string {
	switch e.Name {
	case "bash":
		return []string{"exec"}
	case "Grep", "Glob":
		return []string{"search", "search_files"}
	case "str_replace_based_edit_tool", "str_replace_editor":
		var in editorInput
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
		return editor(s, e)
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
// documentation gives.
func editor(s *tools.Session, e envelope) (any, bool) {
	var in editorInput
	if err := json.Unmarshal(e.Input, &in); err != nil {
		return anthropicFail(e, result.Errorf(result.InvalidArgument, "%s: bad input: %v", e.Name, err)), true
	}
	if in.Path == "" {
		return anthropicFail(e, result.Errorf(result.InvalidArgument, "%s: missing path", e.Name)), true
	}
	var text string
	var err error
	switch in.Command {
	case "view":
		text, err = view(s, in)
	case "create":
		text, err = create(s, in)
	case "str_replace":
		text, err = strReplace(s, in)
	case "insert":
		text, err = insert(s, in)
	case "undo_edit":
		// The newest change to the path (this session's, under --session),
		// taken back from the history.
		if _, err = ops.UndoOwn(s.Env, ops.UndoRequest{Path: in.Path}); err == nil {
			text = "Last edit to " + in.Path + " undone successfully."
		}
	default:
		err = result.Errorf(result.InvalidArgument, "%s: unknown command %q (view, create, str_replace, insert)", e.Name, in.Command)
	}
	if err != nil {
		return anthropicFail(e, err), true
	}
	return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: text}, false
}

// view reads a page, numbered, its notices saying how to continue in
// view_range's words (a page that ends inside a long line in read's own).
func view(s *tools.Session, in editorInput) (string, error) {
	req := ops.ReadRequest{Path: in.Path, LineNumbers: true, Continue: func(offset int, column int64) string {
		if column > 0 {
			return read.OffsetFlags(offset, column)
		}
		return fmt.Sprintf("view_range [%d, -1]", offset)
	}}
	if len(in.ViewRange) == 2 {
		req.Offset = in.ViewRange[0]
		if in.ViewRange[1] > 0 {
			if in.ViewRange[1] < in.ViewRange[0] {
				return "", result.Errorf(result.InvalidArgument, "view_range [%d, %d]: the end comes before the start", in.ViewRange[0], in.ViewRange[1])
			}
			req.Limit = in.ViewRange[1] - in.ViewRange[0] + 1
		}
	} else if len(in.ViewRange) != 0 {
		return "", result.Errorf(result.InvalidArgument, "view_range must be [start, end] (end -1: to the end of the file)")
	}
	out, err := ops.Read(s.Env, req)
	if err != nil {
		return "", notFound(err)
	}
	return out.Text, nil
}

// create writes a new file; as the reference implementation, it never
// overwrites one.
func create(s *tools.Session, in editorInput) (string, error) {
	if in.FileText == nil {
		return "", result.Errorf(result.InvalidArgument, "create: missing file_text")
	}
	if _, err := ops.Write(s.Env, ops.WriteRequest{Path: in.Path, Content: *in.FileText, CreateOnly: true}); err != nil {
		if result.As(err).Code == result.AlreadyExists {
			err = result.Errorf(result.AlreadyExists, "File already exists at: %s. Cannot overwrite files using command `create`.", in.Path)
		}
		return "", err
	}
	return "File created successfully at: " + in.Path, nil
}

func strReplace(s *tools.Session, in editorInput) (string, error) {
	if in.OldStr == nil {
		return "", result.Errorf(result.InvalidArgument, "str_replace: missing old_str")
	}
	nw := ""
	if in.NewStr != nil {
		nw = *in.NewStr
	}
	out, err := ops.Edit(s.Env, ops.EditRequest{Path: in.Path, OldText: *in.OldStr, NewText: nw})
	if err != nil {
		return "", editError(err)
	}
	if !strings.HasPrefix(out.Message, "Successfully") {
		return out.Message, nil
	}
	return "Successfully replaced text at exactly one location.", nil
}

func insert(s *tools.Session, in editorInput) (string, error) {
	text := in.InsertText
	if text == nil {
		text = in.NewStr
	}
	if in.InsertLine == nil || text == nil {
		return "", result.Errorf(result.InvalidArgument, "insert: needs insert_line and insert_text (or new_str)")
	}
	if _, err := ops.Insert(s.Env, ops.InsertRequest{Path: in.Path, After: *in.InsertLine, Text: *text}); err != nil {
		return "", notFound(err)
	}
	return fmt.Sprintf("Text inserted successfully after line %d of %s.", *in.InsertLine, in.Path), nil
}

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
