package ops

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/placeholder"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// EditRequest replaces exact text in one file: one old/new pair, or a list
// of edits matched against the original and applied together.
type EditRequest struct {
	Path       string     `json:"path" jsonschema:"the file to edit, relative to the workspace root"`
	OldText    string     `json:"oldText,omitempty" jsonschema:"the exact text to replace; it must occur once (unless replaceAll)"`
	NewText    string     `json:"newText,omitempty" jsonschema:"the text to put in its place (empty deletes the old text)"`
	ReplaceAll bool       `json:"replaceAll,omitempty" jsonschema:"replace every occurrence of oldText"`
	Edits      []EditSpec `json:"edits,omitempty" jsonschema:"several edits, each matched against the original file, applied together or not at all (instead of oldText/newText)"`
	Blocks     string     `json:"blocks,omitempty" jsonschema:"SEARCH/REPLACE blocks for this file, instead of oldText/newText: ------- SEARCH / the exact lines to find / ======= / their replacement / +++++++ REPLACE (also <<<<<<< SEARCH ... >>>>>>> REPLACE, and Roo Code's :start_line: hints)"`
	Exact      bool       `json:"exact,omitempty" jsonschema:"match exactly only: no fuzzy fallbacks (line endings, trailing whitespace, Unicode punctuation, indentation)"`
	IfMatch    string     `json:"ifMatch,omitempty" jsonschema:"refuse (STALE) unless the file's current SHA-256 is this"`
	Diff       bool       `json:"diff,omitempty" jsonschema:"add a unified diff of the change to the result text"`
	DryRun     bool       `json:"dryRun,omitempty" jsonschema:"do everything but write"`
}

// EditSpec is one edit of a list.
type EditSpec struct {
	OldText    string `json:"oldText" jsonschema:"the exact text to replace"`
	NewText    string `json:"newText" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"replace every occurrence"`
	Expect     int    `json:"-"` // how many places the old text must be in (edit.Edit)
}

// Edits returns the request's edits as the engine takes them.
func (r EditRequest) edits() ([]edit.Edit, error) {
	if len(r.Edits) > 0 {
		if r.OldText != "" || r.NewText != "" || r.ReplaceAll {
			return nil, result.Usagef("give either oldText/newText or a list of edits, not both")
		}
		es := make([]edit.Edit, len(r.Edits))
		for i, e := range r.Edits {
			es[i] = edit.Edit{OldText: e.OldText, NewText: e.NewText, ReplaceAll: e.ReplaceAll, Expect: e.Expect}
		}
		return es, nil
	}
	return []edit.Edit{{OldText: r.OldText, NewText: r.NewText, ReplaceAll: r.ReplaceAll}}, nil
}

// Edit replaces text in one file, all edits or none.
func Edit(env *Env, req EditRequest) (*Output, error) {
	if req.Blocks != "" {
		return editBlocks(env, req)
	}
	edits, err := req.edits()
	if err != nil {
		return nil, err
	}
	if err := edit.Validate(edits); err != nil {
		return nil, err
	}
	for i, e := range edits {
		what := "the new text"
		if len(edits) > 1 {
			what = fmt.Sprintf("edit %d's new text", i+1)
		}
		if err := placeholder.InText(req.Path, what, e.OldText, e.NewText); err != nil && !env.AllowPlaceholders {
			return nil, err
		}
	}
	files, rec, name, err := editTarget(env, req.Path, req.DryRun, "edit")
	if err != nil {
		return nil, err
	}
	defer files.Done()
	res, err := edit.Run(files, name, edits, editOptions(env, req.Exact, req.IfMatch, req.Diff))
	if err != nil {
		return nil, err
	}
	return editOutput(res, env.Workspace.Display(name), req.DryRun, req.Diff, opID(rec)), nil
}

// InsertRequest inserts text after a line of a file.
type InsertRequest struct {
	Path    string `json:"path" jsonschema:"the file to insert into, relative to the workspace root"`
	After   int    `json:"after" jsonschema:"the line after which to insert (1-based); 0 inserts at the start of the file"`
	Text    string `json:"text" jsonschema:"the text to insert; it becomes whole lines in the file's line endings"`
	IfMatch string `json:"ifMatch,omitempty" jsonschema:"refuse (STALE) unless the file's current SHA-256 is this"`
	Diff    bool   `json:"diff,omitempty" jsonschema:"add a unified diff of the change to the result text"`
	DryRun  bool   `json:"dryRun,omitempty" jsonschema:"do everything but write"`
}

// Insert inserts text after a line.
func Insert(env *Env, req InsertRequest) (*Output, error) {
	files, rec, name, err := editTarget(env, req.Path, req.DryRun, "insert")
	if err != nil {
		return nil, err
	}
	defer files.Done()
	res, err := edit.Insert(files, name, req.After, req.Text, editOptions(env, false, req.IfMatch, req.Diff))
	if err != nil {
		return nil, err
	}
	out := editOutput(res, env.Workspace.Display(name), req.DryRun, req.Diff, opID(rec))
	if res.Changed {
		msg := res.InsertMessage(env.Workspace.Display(name), req.After, req.DryRun)
		out.Text = strings.Replace(out.Text, out.Message, msg, 1)
		out.Message = msg
	}
	return out, nil
}

func editTarget(env *Env, path string, dryRun bool, command string) (workspace.FS, *workspace.Recording, string, error) {
	name, err := env.Workspace.Resolve(path)
	if err != nil {
		return nil, nil, "", err
	}
	fsys, rec := env.FS(dryRun, command)
	return fsys, rec, name, nil
}

func editOptions(env *Env, exact bool, ifMatch string, diff bool) edit.Options {
	return edit.Options{
		Exact:    exact,
		IfMatch:  ifMatch,
		MaxBytes: env.Limits.EditMaxBytes,
		Hash:     env.ToolResult,
		Brief:    !env.ToolResult && !diff,
	}
}

func editOutput(res *edit.Result, path string, dryRun, diff bool, opID string) *Output {
	msg := res.Message(path, dryRun)
	out := &Output{Text: msg, Message: msg}
	if diff && res.Diff != "" {
		out.Text += "\n\n" + res.Diff
		out.Diff = res.Diff
	}
	out.Details = &EditDetails{Result: *res, DryRun: dryRun, OpID: opID}
	return out
}

// editBlocks applies SEARCH/REPLACE blocks to the request's file through
// the patch engine: each block a chunk (a unique place, the engine's
// passes and hints, any order, all or nothing, an applied block a no-op).
func editBlocks(env *Env, req EditRequest) (*Output, error) {
	if len(req.Edits) > 0 || req.OldText != "" || req.NewText != "" || req.ReplaceAll {
		return nil, result.Usagef("give the edit as blocks or as old and new text, not both")
	}
	ifMatch, err := textfile.ParseIfMatch(req.IfMatch)
	if err != nil {
		return nil, err
	}
	if max := env.Limits.PatchMaxBytes; max > 0 && int64(len(req.Blocks)) > max {
		return nil, result.Errorf(result.TooLarge, "the blocks are over the limit of %d bytes", max)
	}
	name, err := env.Workspace.Resolve(req.Path)
	if err != nil {
		return nil, err
	}
	p, err := patchparse.ParseBlocks(req.Blocks, name)
	if err != nil {
		return nil, err
	}
	apply := ApplyPatchRequest{DryRun: req.DryRun, Diff: req.Diff, Strict: req.Exact, As: "edit"}
	if ifMatch != "" {
		apply.ifMatch = map[string]string{name: ifMatch}
	}
	return applyParsed(env, p, apply)
}
