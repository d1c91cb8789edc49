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
		Path string  `json:"path" jsonschema:"the file to read"`
		Tail float64 `json:"tail,omitempty" jsonschema:"If provided, returns only the last N lines of the file"`
		Head float64 `json:"head,omitempty" jsonschema:"If provided, returns only the first N lines of the file"`
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

// fsTool builds a filesystem tool whose arguments decode into In. As the
// reference server's, it passes over arguments it does not know, and its
// structuredContent is the reference's: {"content": ...} alone, out one of
// referenceOutput's schemas.
func fsTool[In any](name, title, desc string, required []string, out *jsonschema.Schema, readOnly, destructive, idempotent bool,
	run func(s *Session, in In) (*ops.Output, error)) *Tool {
	in := schemaFor[In]()
	in.AdditionalProperties = nil // unknown arguments are passed over, not refused: the schema says so
	fsSchemaFacts(in)
	return &Tool{
		Name: name, Title: title, Description: desc,
		Input: in, Output: out, Lenient: true, Reference: true, set: "filesystem",
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

// referenceOutput is the output schema of a filesystem tool: the reference
// server's — Out's one property, content, required, nothing else. (A
// failure has no structuredContent, as there.)
func referenceOutput[Out any]() *jsonschema.Schema {
	s := detailsOf[Out]()
	s.Required = []string{"content"}
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s
}

// Filesystem is a drop-in for the reference MCP filesystem server's tools,
// with hunk's guarantees: confinement to the workspace, atomic writes, kept
// line endings, edits that match once or fail.
func Filesystem() Set {
	readText := func(s *Session, in fsReadText) (*ops.Output, error) {
		return ops.ReadText(s.Env, in.Path, in.Head, in.Tail)
	}
	return Set{
		fsTool("read_file", "Read File (Deprecated)",
			"Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true, readText),
		fsTool("read_text_file", "Read a text file",
			"Read the complete contents of a text file, or only its first (head) or last (tail) N lines.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true, readText),
		fsTool("read_media_file", "Read a media file",
			"Read a file and return it as a base64-encoded content block with its MIME type: image and audio files as "+
				"image or audio content, any other file as an embedded resource.",
			[]string{"path"}, referenceOutput[ops.FSMediaOutput](), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.ReadMedia(s.Env, in.Path) }),
		fsTool("read_multiple_files", "Read several files",
			"Read several text files at once; a file that cannot be read is reported in its place without failing the others.",
			[]string{"paths"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsReadMany) (*ops.Output, error) { return ops.ReadMany(s.Env, in.Paths) }),
		fsTool("write_file", "Write a file",
			"Create a file or overwrite it completely with new content, atomically (an existing file keeps its mode).",
			[]string{"path", "content"}, referenceOutput[ops.FSOutput](), false, true, true,
			func(s *Session, in fsWrite) (*ops.Output, error) {
				out, err := ops.Write(s.Env, ops.WriteRequest{Path: in.Path, Content: in.Content})
				if err == nil && !strings.HasPrefix(out.Text, "No changes") {
					out.Text = "Successfully wrote to " + in.Path
				}
				return out, err
			}),
		fsTool("edit_file", "Edit a file",
			"Make text replacements in a file, each edit applied to the result of the previous one: each oldText must match "+
				"exactly once (near matches in whitespace or indentation are accepted when unique); all edits are applied or none. "+
				"Returns a git-style diff; dryRun previews it.",
			[]string{"path", "edits"}, referenceOutput[ops.FSOutput](), false, true, false,
			func(s *Session, in fsEdit) (*ops.Output, error) {
				return ops.EditFile(s.Env, in.Path, in.Edits, in.DryRun)
			}),
		fsTool("create_directory", "Create a directory",
			"Create a directory, with its parents; an existing directory is fine.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), false, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.Mkdir(s.Env, in.Path) }),
		fsTool("list_directory", "List a directory",
			"List a directory's entries, each prefixed [FILE] or [DIR].",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.List(s.Env, in.Path) }),
		fsTool("list_directory_with_sizes", "List a directory with sizes",
			"List a directory's entries with file sizes, sorted by name or size, and totals.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsListSizes) (*ops.Output, error) {
				return ops.ListWithSizes(s.Env, in.Path, in.SortBy)
			}),
		fsTool("directory_tree", "Directory tree",
			"A recursive tree of a directory as JSON: name, type (file or directory) and children.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsTree) (*ops.Output, error) { return ops.Tree(s.Env, in.Path, in.ExcludePatterns) }),
		fsTool("move_file", "Move or rename",
			"Move or rename a file or directory; fails if the destination exists.",
			[]string{"source", "destination"}, referenceOutput[ops.FSOutput](), false, true, false,
			func(s *Session, in fsMove) (*ops.Output, error) { return ops.Move(s.Env, in.Source, in.Destination) }),
		fsTool("search_files", "Search for files",
			"Recursively search for files and directories whose path below path matches a glob pattern: '*.ext' matches "+
				"files directly in path, '**/*.ext' in every subdirectory too; returns their full paths.",
			[]string{"path", "pattern"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsSearch) (*ops.Output, error) {
				return ops.SearchFiles(s.Env, in.Path, in.Pattern, in.ExcludePatterns)
			}),
		fsTool("get_file_info", "File information",
			"Size, creation, modification and access times, type and permissions of a file or directory.",
			[]string{"path"}, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, in fsPath) (*ops.Output, error) { return ops.Info(s.Env, in.Path) }),
		fsTool("list_allowed_directories", "Allowed directories",
			"List the directories this server may access.",
			nil, referenceOutput[ops.FSOutput](), true, false, true,
			func(s *Session, _ fsNone) (*ops.Output, error) { return ops.AllowedDirectories(s.Env), nil }),
	}
}

// fsSchemaFacts adds what the reference's schemas say and Go's types cannot:
// sortBy's values and default, a paths list of at least one.
func fsSchemaFacts(in *jsonschema.Schema) {
	if p := in.Properties["sortBy"]; p != nil {
		p.Enum = []any{"name", "size"}
		p.Default = json.RawMessage(`"name"`)
	}
	if p := in.Properties["paths"]; p != nil {
		one := 1
		p.MinItems = &one
	}
}
