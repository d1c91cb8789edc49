package ops

import (
	"fmt"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/placeholder"
	"github.com/hunk-dev/hunk/internal/workspace"
	"github.com/hunk-dev/hunk/internal/write"
)

// WriteRequest creates or replaces one file.
type WriteRequest struct {
	Path       string `json:"path" jsonschema:"the file to create or replace, relative to the workspace root; parent directories are created"`
	Content    string `json:"content" jsonschema:"the complete new content of the file"`
	CreateOnly bool   `json:"createOnly,omitempty" jsonschema:"refuse to replace an existing file (ALREADY_EXISTS)"`
	IfMatch    string `json:"ifMatch,omitempty" jsonschema:"refuse (STALE) unless the file's current SHA-256, as read reported it, is this"`
	Diff       bool   `json:"diff,omitempty" jsonschema:"add a unified diff of the change to the result"`
	DryRun     bool   `json:"dryRun,omitempty" jsonschema:"check everything and write nothing"`
}

// Write creates or replaces the file atomically, keeping its mode.
func Write(env *Env, req WriteRequest) (*Output, error) {
	data := []byte(req.Content)
	fsys, rec := env.FS(req.DryRun, "write")
	defer fsys.Done()
	if !env.AllowPlaceholders && !req.CreateOnly && placeholder.Has(req.Path, req.Content) {
		// Content over an existing file holding "... existing code ..."
		// where the file has lines: the file would lose them.
		if name, err := env.Workspace.Resolve(req.Path); err == nil {
			if old, err := fsys.ReadFile(name); err == nil {
				if err := placeholder.InText(req.Path, "the content", string(old), req.Content); err != nil {
					return nil, err
				}
			}
		}
	}
	res, err := write.Write(fsys, write.Options{
		Path: req.Path, Content: data, CreateOnly: req.CreateOnly, IfMatch: req.IfMatch,
		MaxBytes: env.Limits.WriteMaxBytes, WantOld: req.Diff,
	})
	if err != nil {
		return nil, err
	}
	var msg string
	switch {
	case res.NoOp:
		msg = fmt.Sprintf("No changes made to %s. The file already has identical content.", workspace.Quote(res.Path))
	case req.DryRun:
		msg = fmt.Sprintf("Would write %d bytes to %s (dry run).", res.Bytes, workspace.Quote(res.Path))
	default:
		msg = fmt.Sprintf("Successfully wrote %d bytes to %s", res.Bytes, workspace.Quote(res.Path))
	}
	details := &WriteDetails{
		Path: res.Path, Bytes: res.Bytes, Created: res.Created, NoOp: res.NoOp,
		SHA256: res.SHA256, DryRun: req.DryRun, Previous: res.Previous, OpID: opID(rec),
	}
	out := &Output{Text: msg, Message: msg, Details: details, DiffFirst: true}
	if req.Diff && !res.NoOp {
		out.Diff = diff.File(res.Path, res.Old, data, res.Created)
		details.Diff = out.Diff
	}
	return out, nil
}
