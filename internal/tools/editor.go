package tools

// The text editor tool's commands — view, create, str_replace, insert,
// undo_edit — as Anthropic's text editor (hunk call's tool_use) and
// OpenHands' str_replace_editor (the openhands set) take them.

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/read"
	"github.com/hunk-dev/hunk/internal/result"
)

// EditorInput is the editor's input: a command and its arguments.
type EditorInput struct {
	Command    string  `json:"command" jsonschema:"the command: view, create, str_replace, insert or undo_edit"`
	Path       string  `json:"path" jsonschema:"the file (absolute, inside the workspace, or relative to it)"`
	ViewRange  []int   `json:"view_range,omitempty" jsonschema:"view: the lines to show, [start, end] (1-based; end -1: to the end of the file)"`
	FileText   *string `json:"file_text,omitempty" jsonschema:"create: the content of the new file"`
	OldStr     *string `json:"old_str,omitempty" jsonschema:"str_replace: the exact text to replace, which must occur once"`
	NewStr     *string `json:"new_str,omitempty" jsonschema:"str_replace: the text to put in its place; insert: the text to insert"`
	InsertLine *int    `json:"insert_line,omitempty" jsonschema:"insert: the line after which new_str goes (0: the start of the file)"`
	InsertText *string `json:"insert_text,omitempty" jsonschema:"insert: the text to insert (Anthropic's name; OpenHands sends new_str)"`
	// SecurityRisk is OpenHands' own assessment of the call, which it
	// sends with every call; hunk's policy decides, never the model.
	SecurityRisk string `json:"security_risk,omitempty" jsonschema:"the model's assessment of the call's risk (LOW, MEDIUM, HIGH): recorded nowhere, decides nothing"`
}

// Editor answers the text editor tool's commands (Anthropic's, and
// OpenHands' str_replace_editor, its descendant), each in the words its
// documentation gives; name is the tool's, for errors.
func Editor(s *Session, name string, in EditorInput) (string, error) {
	if in.Path == "" {
		return "", result.Errorf(result.InvalidArgument, "%s: missing path", name)
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
		err = result.Errorf(result.InvalidArgument, "%s: unknown command %q (view, create, str_replace, insert, undo_edit)", name, in.Command)
	}
	return text, err
}

// view reads a page, numbered, its notices saying how to continue in
// view_range's words (a page that ends inside a long line in read's own).
func view(s *Session, in EditorInput) (string, error) {
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
func create(s *Session, in EditorInput) (string, error) {
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

func strReplace(s *Session, in EditorInput) (string, error) {
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

func insert(s *Session, in EditorInput) (string, error) {
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

// OpenHands is OpenHands' file tool's set: str_replace_editor, called as a
// function (its CodeAct agent's tool), in its input shape.
func OpenHands() Set {
	return inSet("openhands", Set{
		ccTool("str_replace_editor", "View, create and edit files", "Views, creates and edits files of the workspace: "+
			"view shows a file numbered (cat -n) or a directory; create makes a file that does not exist; str_replace "+
			"replaces old_str, which must occur exactly once, with new_str; insert puts new_str after line insert_line; "+
			"undo_edit takes back the last edit to the file.", []string{"command", "path"}, false, true,
			func(s *Session, in EditorInput) (*ops.Output, error) {
				text, err := Editor(s, "str_replace_editor", in)
				if err != nil {
					return nil, err
				}
				return &ops.Output{Text: text, Message: text}, nil
			}),
	})
}
