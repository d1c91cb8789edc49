package ops

import (
	"encoding/base64"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/read"
	"github.com/hunk-dev/hunk/internal/result"
)

// ReadRequest reads a page of a text file, lists a directory or returns an image.
type ReadRequest struct {
	Path        string `json:"path,omitempty" jsonschema:"the file or directory, relative to the workspace root (required, but for execOutput)"`
	Offset      int    `json:"offset,omitempty" jsonschema:"first line to show (1-based); for a directory, the first entry"`
	Limit       int    `json:"limit,omitempty" jsonschema:"most lines (or entries) per page (default 2000)"`
	MaxBytes    int    `json:"maxBytes,omitempty" jsonschema:"most bytes per page (default 51200); a longer line is cut"`
	Column      int64  `json:"column,omitempty" jsonschema:"byte position inside the offset line to start at (continues a cut line)"`
	LineNumbers bool   `json:"lineNumbers,omitempty" jsonschema:"prefix each line with its number and a tab"`
	ExecOutput  string `json:"execOutput,omitempty" jsonschema:"instead of path: the whole output of an exec whose result left part of it out, as the result names it (ID/stdout or ID/stderr)"`
	// Continue says how to ask for the next page in the words of the
	// surface that called (read.Options.Continue; nil: read's own).
	Continue func(offset int, column int64) string `json:"-"`
}

// Read pages through a text file, lists a directory or returns an image.
func Read(env *Env, req ReadRequest) (*Output, error) {
	if (req.Path == "") == (req.ExecOutput == "") {
		return nil, result.Usagef("read needs a path, or an exec output in its place")
	}
	o := read.Options{Offset: req.Offset, Column: req.Column, Limit: req.Limit, MaxBytes: req.MaxBytes,
		LineNumbers: req.LineNumbers, ImageData: env.ToolResult, Continue: req.Continue}
	if o.Limit == 0 {
		o.Limit = env.Limits.ReadLimit
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = env.Limits.ReadMaxBytes
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	readFn, name := read.Read, req.Path
	if req.ExecOutput != "" {
		readFn, name = execrun.ReadOutput, req.ExecOutput
	}
	res, err := readFn(env.Workspace, name, o)
	if err != nil {
		return nil, err
	}
	env.track(req.Path, res.Details) // none for an exec output (no path)
	out := &Output{Text: res.Text, Message: res.Text, Details: res.Details, Data: true}
	if res.Image != nil {
		out.Images = append(out.Images, result.Image(res.Image.MimeType, base64.StdEncoding.EncodeToString(res.Image.Data)))
	}
	return out, nil
}

// track records what a read returned to the session: a text file's
// content (hash: the hash the read reported), an image's hash.
func (e *Env) track(path string, details any) {
	if e.Reads == nil {
		return
	}
	name, err := e.Workspace.Resolve(path)
	if err != nil {
		return
	}
	switch d := details.(type) {
	case *read.TextDetails:
		e.Reads.SawFile(e.Workspace, name, d.Sha256)
	case *read.ImageDetails:
		e.Reads.SawHash(name, d.Sha256)
	}
}
