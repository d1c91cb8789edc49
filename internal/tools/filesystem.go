package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/ops"
)

// The argument types of the reference MCP filesystem server's tools
// (@modelcontextprotocol/server-filesystem), name for name.
type (
	fsPath struct {
		Path string `json:"path" jsonschema:"the path, relative to the workspace or absolute inside it"`
	}
	fsReadText struct {
		Path string `json:"path" jsonschema:"the file to read"`
		Head int    `json:"head,omitempty" jsonschema:"return only the first N lines"`
		Tail int    `json:"tail,omitempty" jsonschema:"return only the last N lines"`
	}
	fsReadMany struct {
		Paths []string `json:"paths" jsonschema:"the files to read"`
	}
	fsWrite struct {
		Path    string `json:"path" jsonschema:"the file to create or overwrite"`
		Content string `json:"content" jsonschema:"the complete new content"`
	}
	fsEdit struct {
		Path   string         `json:"path" jsonschema:"the file to edit"`
		Edits  []ops.EditSpec `json:"edits" jsonschema:"the edits: each oldText must occur exactly once; all are applied or none"`
		DryRun bool           `json:"dryRun,omitempty" jsonschema:"preview the changes as a diff without writing"`
	}
	fsListSizes struct {
		Path   string `json:"path" jsonschema:"the directory to list"`
		SortBy string `json:"sortBy,omitempty" jsonschema:"sort entries by name or size (default name)"`
	}
	fsTree struct {
		Path            string   `json:"path" jsonschema:"the directory"`
		ExcludePatterns []string `json:"excludePatterns,omitempty" jsonschema:"glob patterns of entries to leave out"`
	}
	fsMove struct {
		Source      string `json:"source" jsonschema:"the file or directory to move"`
		Destination string `json:"destination" jsonschema:"where to move it (must not exist)"`
	}
	fsSearch struct {
		Path            string   `json:"path" jsonschema:"the directory to search under"`
		Pattern         string   `json:"pattern" jsonschema:"a glob pattern (*.go, **/test_*.py) matched against paths below path"`
		ExcludePatterns []string `json:"excludePatterns,omitempty" jsonschema:"glob patterns of entries to leave out"`
	}
	fsNone struct{}
)

// fsTool builds a filesystem tool whose arguments decode into In.
func fsTool[In any](name, title, desc string, required []string, out *jsonschema.Schema, readOnly, destructive, idempotent bool,
	run func(s *Session, in In) (*ops.Output, error)) *Tool {
	return &Tool{
		Name: name, Title: title, Description: desc,
		Input: schemaFor[In](), Output: out,
		ReadOnly: readOnly, Destructive: destructive, Idempotent: idempotent,
		run: func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
			var in In
			if err := decode(name, args, &in, required...); err != nil {
				return nil, err
			}
			return run(s, in)
		},
	}
}

// Filesystem is a drop-in for the reference MCP filesystem server's tools,
// with hunk's guarantees: confinement to the workspace, atomic writes, kept
// line endings, edits that match once or fail.
func Filesystem() Set {
	return Set{
		fsTool("read_text_file", "Read a text file",
			"Read the complete contents of a text file, or only its first (head) or last (tail) N lines.",
			[]string{"path"}, output(detailsOf[ops.FSText]()), true, false, true,
			func(s *Session, in fsReadText) (*ops.Output, error) {
				return ops.ReadText(s.Env, in.Path, in.Head, in.Tail)
			}),
		fsTool("read_media_file", "Read an image or audio file",
			"Read an image or audio file; returns base64 data and its MIME type.",
			[]string{"path"}, output(detailsOf[ops.FSMedia]()), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.ReadMedia(s.Env, in.Path) }),
		fsTool("read_multiple_files", "Read several files",
			"Read several text files at once; a file that cannot be read is reported in its place without failing the others.",
			[]string{"paths"}, output(detailsOf[ops.FSText]()), true, false, true,
			func(s *Session, in fsReadMany) (*ops.Output, error) { return ops.ReadMany(s.Env, in.Paths) }),
		fsTool("write_file", "Write a file",
			"Create a file or overwrite it completely with new content, atomically (an existing file keeps its mode).",
			[]string{"path", "content"}, output(detailsOf[ops.WriteDetails]()), false, true, true,
			func(s *Session, in fsWrite) (*ops.Output, error) {
				out, err := ops.Write(s.Env, ops.WriteRequest{Path: in.Path, Content: in.Content})
				if err == nil && !strings.HasPrefix(out.Text, "No changes") {
					out.Text = "Successfully wrote to " + in.Path
				}
				return out, err
			}),
		fsTool("edit_file", "Edit a file",
			"Make text replacements in a file: each oldText must match exactly once (near matches in whitespace or "+
				"indentation are accepted when unique); all edits are applied or none. Returns a git-style diff; dryRun previews it.",
			[]string{"path", "edits"}, output(detailsOf[ops.EditDetails]()), false, true, false,
			func(s *Session, in fsEdit) (*ops.Output, error) {
				out, err := ops.Edit(s.Env, ops.EditRequest{Path: in.Path, Edits: in.Edits, Diff: true, DryRun: in.DryRun})
				if err != nil {
					return nil, err
				}
				d := out.Diff
				if d == "" {
					d = "(no changes)\n"
				}
				out.Text = "```diff\n" + d + "```\n\n"
				return out, nil
			}),
		fsTool("create_directory", "Create a directory",
			"Create a directory, with its parents; an existing directory is fine.",
			[]string{"path"}, output(detailsOf[ops.FSText]()), false, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.Mkdir(s.Env, in.Path) }),
		fsTool("list_directory", "List a directory",
			"List a directory's entries, each prefixed [FILE] or [DIR].",
			[]string{"path"}, output(detailsOf[ops.FSList]()), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.List(s.Env, in.Path) }),
		fsTool("list_directory_with_sizes", "List a directory with sizes",
			"List a directory's entries with file sizes, sorted by name or size, and totals.",
			[]string{"path"}, output(detailsOf[ops.FSList]()), true, false, true,
			func(s *Session, in fsListSizes) (*ops.Output, error) {
				return ops.ListWithSizes(s.Env, in.Path, in.SortBy)
			}),
		fsTool("directory_tree", "Directory tree",
			"A recursive tree of a directory as JSON: name, type (file or directory) and children.",
			[]string{"path"}, output(detailsOf[ops.FSText]()), true, false, true,
			func(s *Session, in fsTree) (*ops.Output, error) { return ops.Tree(s.Env, in.Path, in.ExcludePatterns) }),
		fsTool("move_file", "Move or rename",
			"Move or rename a file or directory; fails if the destination exists.",
			[]string{"source", "destination"}, output(detailsOf[ops.FSMove]()), false, false, false,
			func(s *Session, in fsMove) (*ops.Output, error) { return ops.Move(s.Env, in.Source, in.Destination) }),
		fsTool("search_files", "Search for files",
			"Find files and directories under a path whose path matches a glob pattern; returns their full paths.",
			[]string{"path", "pattern"}, output(detailsOf[ops.FSSearch]()), true, false, true,
			func(s *Session, in fsSearch) (*ops.Output, error) {
				return ops.Search(s.Env, in.Path, in.Pattern, in.ExcludePatterns)
			}),
		fsTool("get_file_info", "File information",
			"Size, creation, modification and access times, type and permissions of a file or directory.",
			[]string{"path"}, output(detailsOf[ops.FSInfo]()), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.Info(s.Env, in.Path) }),
		fsTool("list_allowed_directories", "Allowed directories",
			"List the directories this server may access.",
			nil, output(detailsOf[ops.FSAllowed]()), true, false, true,
			func(s *Session, _ fsNone) (*ops.Output, error) { return ops.AllowedDirectories(s.Env), nil }),
	}
}
