//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// The reference filesystem server (@modelcontextprotocol/server-filesystem,
// pinned in testdata/mcpclient) and hunk mcp --tools filesystem run the same
// calls on identical trees; their answers are compared. Each difference that
// remains is deliberate, named in fsDifferences and listed in docs/agents.md.

// fsCall is one call of the script. differs names the deliberate difference
// the call shows (a key of fsDifferences), "" when the answers must match.
type fsCall struct {
	tool    string
	args    map[string]any
	differs string
}

// fsDifferences are the deliberate differences from the reference, with
// their reasons (docs/agents.md lists the same).
var fsDifferences = map[string]string{
	"ambiguous": "an edit whose old text occurs more than once is refused (AMBIGUOUS) where the reference replaces the first occurrence",
	"crlf":      "CRLF line endings are kept (the reference turns the edited file's CRLF into LF, and its diff shows LF)",
	"latin1":    "a file that is not UTF-8 is refused (NOT_UTF8) where the reference rewrites its other bytes as U+FFFD",
	"tail":      "tail gives exactly the last N lines (the reference counts the empty string after the final newline as a line, so tail 2 gives one)",
	"error":     "a failure's text is hunk's: what went wrong, where, and a hint (both are errors)",
	"unread":    "write_file over a file the session has neither read nor written is refused (STALE) where the reference overwrites it",
	"binary":    "read_text_file refuses a binary file (BINARY_FILE) where the reference returns its bytes as text",
	"parents":   "write_file makes missing parent directories where the reference fails (ENOENT)",
	"empty-old": "an empty oldText is refused where the reference inserts newText at the start of the file",
	"reindent":  "a whitespace-flexible match re-indents every line of newText where the reference shifts only the first",
}

var fsScript = []fsCall{
	{"list_allowed_directories", map[string]any{}, ""},
	{"read_text_file", map[string]any{"path": "a.txt"}, ""},
	{"read_file", map[string]any{"path": "a.txt"}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "head": 2}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "head": 2.5}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "head": 0}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "head": -1}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "tail": 2}, "tail"},
	{"read_text_file", map[string]any{"path": "noeol.txt", "tail": 2}, ""},
	{"read_text_file", map[string]any{"path": "a.txt", "head": 1, "tail": 1}, "error"},
	{"read_text_file", map[string]any{"path": "a.txt", "encoding": "utf-8", "unknown": 1}, ""},
	{"read_text_file", map[string]any{"path": "missing.txt"}, "error"},
	{"read_multiple_files", map[string]any{"paths": []string{"a.txt", "sub/x.go"}}, ""},
	{"read_media_file", map[string]any{"path": "img.png"}, ""},
	{"read_media_file", map[string]any{"path": "sound.wav"}, ""},
	{"read_media_file", map[string]any{"path": "data.bin"}, ""},
	{"list_directory", map[string]any{"path": "."}, ""},
	{"list_directory", map[string]any{"path": "sub"}, ""},
	{"list_directory_with_sizes", map[string]any{"path": "sub"}, ""},
	{"list_directory_with_sizes", map[string]any{"path": "sub", "sortBy": "size"}, ""},
	{"directory_tree", map[string]any{"path": "."}, ""},
	{"directory_tree", map[string]any{"path": ".", "excludePatterns": []string{"deep"}}, ""},
	{"directory_tree", map[string]any{"path": ".", "excludePatterns": []string{"*.go"}}, ""},
	{"directory_tree", map[string]any{"path": ".", "excludePatterns": []string{"**/*.go"}}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "*.txt"}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "**/*.go"}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "*.go"}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "**/*.{go,md}"}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "**/*.go", "excludePatterns": []string{"sub/deep"}}, ""},
	{"search_files", map[string]any{"path": "sub", "pattern": "*"}, ""},
	{"search_files", map[string]any{"path": ".", "pattern": "nothing-*"}, ""},
	{"get_file_info", map[string]any{"path": "a.txt"}, ""},
	{"get_file_info", map[string]any{"path": "sub"}, ""},
	{"write_file", map[string]any{"path": "new.txt", "content": "new\n"}, ""},
	{"write_file", map[string]any{"path": "a.txt", "content": "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"}, ""},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "two", "newText": "2"}}, "dryRun": true}, ""},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "two", "newText": "TWO"}, {"oldText": "TWO\nthree", "newText": "TWO\n3"}}}, ""},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "six", "newText": "6"}, {"oldText": "seven", "newText": "7"}}}, ""},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{}}, ""},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "nope", "newText": "x"}}}, "error"},
	{"edit_file", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"oldText": "x", "newText": "y"}}, "dryRun": true}, "ambiguous"},
	{"edit_file", map[string]any{"path": "crlf.txt", "edits": []map[string]any{{"oldText": "b", "newText": "B"}}, "dryRun": true}, "crlf"},
	{"edit_file", map[string]any{"path": "latin1.txt", "edits": []map[string]any{{"oldText": "ok", "newText": "OK"}}, "dryRun": true}, "latin1"},
	{"edit_file", map[string]any{"path": "noeol.txt", "edits": []map[string]any{{"oldText": "last", "newText": "LAST"}}}, ""},
	{"create_directory", map[string]any{"path": "made/deeper"}, ""},
	{"create_directory", map[string]any{"path": "made"}, ""},
	{"move_file", map[string]any{"source": "new.txt", "destination": "made/moved.txt"}, ""},
	{"move_file", map[string]any{"source": "sub/x.go", "destination": "a.txt"}, "error"},
	{"directory_tree", map[string]any{"path": "made"}, ""},
	{"read_text_file", map[string]any{"path": "../outside.txt"}, "error"},
	{"write_file", map[string]any{"path": "same.txt", "content": "same\n"}, "unread"}, // the same bytes: the trees stay alike
	{"read_text_file", map[string]any{"path": "data.bin"}, "binary"},
	{"write_file", map[string]any{"path": "p/q/r.txt", "content": "r\n"}, "parents"},
	{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "", "newText": "X"}}, "dryRun": true}, "empty-old"},
	{"edit_file", map[string]any{"path": "indent.py", "edits": []map[string]any{{"oldText": "if x:\n    return 1", "newText": "if y:\n    return 2\nelse:\n    return 3"}}, "dryRun": true}, "reindent"},
	{"no_such_tool", map[string]any{}, "error"},
}

// fsSession connects the Go SDK's client to a server command.
func fsSession(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// fsTree writes the tree both servers work on.
func fsTree(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"a.txt":           "alpha\nbeta\ngamma\ndelta\n",
		"noeol.txt":       "first\nlast",
		"dup.txt":         "x\nx\n",
		"crlf.txt":        "a\r\nb\r\nc\r\n",
		"notes.md":        "# notes\n",
		"sub/x.go":        "package x\n",
		"sub/big.txt":     strings.Repeat("0123456789\n", 300),
		"sub/deep/y.go":   "package y\n",
		"sub/deep/z.md":   "z\n",
		"img.png":         "\x89PNG\r\n\x1a\nfake",
		"sound.wav":       "RIFF\x00\x00\x00\x00WAVE",
		"data.bin":        "\x00\x01\x02",
		"latin1.txt":      "caf\xe9 ok\n",
		"sub/.hidden.txt": "h\n",
		"same.txt":        "same\n",
		"indent.py":       "def f():\n    if x:\n        return 1\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	os.WriteFile(filepath.Join(filepath.Dir(dir), "outside.txt"), []byte("secret\n"), 0o644)
	real, _ := filepath.EvalSymlinks(dir)
	return real
}

// fsAnswer is a call's answer, normalized: the tree's path is ROOT, and
// what the reference leaves in directory order is sorted.
type fsAnswer struct {
	IsError    bool
	Text       string
	Structured any
	Blocks     []string // the content blocks' types
}

func fsNormalize(tool, root string, res *mcp.CallToolResult) fsAnswer {
	a := fsAnswer{IsError: res.IsError}
	var text []string
	for _, c := range res.Content {
		b, _ := json.Marshal(c)
		var m struct {
			Type string `json:"type"`
		}
		json.Unmarshal(b, &m)
		a.Blocks = append(a.Blocks, m.Type)
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	a.Text = strings.ReplaceAll(strings.Join(text, "\n"), root, "ROOT")
	sort := func(s string) string {
		lines := strings.Split(s, "\n")
		sortStrings(lines)
		return strings.Join(lines, "\n")
	}
	switch tool {
	case "list_directory", "search_files":
		a.Text = sort(a.Text)
	case "directory_tree":
		var tree []any
		if json.Unmarshal([]byte(a.Text), &tree) == nil {
			sortTree(tree)
			b, _ := json.MarshalIndent(tree, "", "  ")
			a.Text = string(b)
		}
	case "get_file_info":
		// Times differ between two trees; their format must not.
		a.Text = regexp.MustCompile(`(created|modified|accessed): [A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d{4} \d\d:\d\d:\d\d GMT[+-]\d{4} \(.+\)`).ReplaceAllString(a.Text, "$1: DATE")
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		var v map[string]any
		json.Unmarshal([]byte(strings.ReplaceAll(string(b), root, "ROOT")), &v)
		if s, ok := v["content"].(string); ok {
			v["content"] = "(the text)"
			if strings.ReplaceAll(s, root, "ROOT") != strings.ReplaceAll(strings.Join(text, "\n"), root, "ROOT") {
				v["content"] = "(not the text)"
			}
		}
		a.Structured = v
	}
	return a
}

func sortStrings(s []string) { sort.Strings(s) }

func sortTree(nodes []any) {
	sort.Slice(nodes, func(i, j int) bool {
		return nodes[i].(map[string]any)["name"].(string) < nodes[j].(map[string]any)["name"].(string)
	})
	for _, n := range nodes {
		if kids, ok := n.(map[string]any)["children"].([]any); ok {
			sortTree(kids)
		}
	}
}

// TestFilesystemMatchesReference runs fsScript against both servers.
func TestFilesystemMatchesReference(t *testing.T) {
	dir, _ := filepath.Abs("testdata/mcpclient")
	if err := installMCPClient(dir); err != nil {
		if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the reference filesystem server is required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
		}
		sandboxtest.Skip(t, "the reference filesystem server: %v", err)
	}
	refRoot, hunkRoot := fsTree(t), fsTree(t)
	ref := exec.Command("node", filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), refRoot)
	ref.Env = append(os.Environ(), "TZ=UTC")
	hunk := exec.Command(buildHunk(t), "mcp", "--tools", "filesystem", "-C", hunkRoot)
	hunk.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "TZ=UTC")
	rs, hs := fsSession(t, ref), fsSession(t, hunk)

	// The declarations: every reference tool, with its arguments, required
	// ones and annotations.
	rl, err := rs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hl, err := hs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hunkTools := map[string]*mcp.Tool{}
	for _, tool := range hl.Tools {
		hunkTools[tool.Name] = tool
	}
	for _, rt := range rl.Tools {
		ht := hunkTools[rt.Name]
		if ht == nil {
			t.Errorf("%s: not served", rt.Name)
			continue
		}
		props := func(s any) (names, required []string) {
			b, _ := json.Marshal(s)
			var v struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			}
			json.Unmarshal(b, &v)
			for n := range v.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			sort.Strings(v.Required)
			return names, v.Required
		}
		rn, rr := props(rt.InputSchema)
		hn, hr := props(ht.InputSchema)
		if !reflect.DeepEqual(rn, hn) || !reflect.DeepEqual(rr, hr) {
			t.Errorf("%s: arguments %v required %v; the reference's %v required %v", rt.Name, hn, hr, rn, rr)
		}
		ro, _ := props(rt.OutputSchema)
		ho, _ := props(ht.OutputSchema)
		if !reflect.DeepEqual(ro, ho) {
			t.Errorf("%s: output schema properties %v; the reference's %v", rt.Name, ho, ro)
		}
		// Annotations, with MCP's defaults; the hints that mean something
		// only for a tool that writes are compared only there.
		ann := func(a *mcp.ToolAnnotations) [4]bool {
			if a == nil {
				a = &mcp.ToolAnnotations{}
			}
			destructive, open := a.DestructiveHint == nil || *a.DestructiveHint, a.OpenWorldHint == nil || *a.OpenWorldHint
			if a.ReadOnlyHint {
				return [4]bool{true, false, false, open}
			}
			return [4]bool{false, destructive, a.IdempotentHint, open}
		}
		if ann(rt.Annotations) != ann(ht.Annotations) {
			t.Errorf("%s: annotations (readOnly, destructive, idempotent, openWorld) %v; the reference's %v", rt.Name, ann(ht.Annotations), ann(rt.Annotations))
		}
	}

	seen := map[string]bool{}
	for i, c := range fsScript {
		call := func(cs *mcp.ClientSession, root string) fsAnswer {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				// A protocol error: an error answer all the same.
				return fsAnswer{IsError: true, Text: err.Error()}
			}
			return fsNormalize(c.tool, root, res)
		}
		r, h := call(rs, refRoot), call(hs, hunkRoot)
		name := func() string { b, _ := json.Marshal(c.args); return c.tool + " " + string(b) }()
		same := reflect.DeepEqual(r, h)
		switch {
		case c.differs == "" && !same:
			t.Errorf("call %d, %s: differs from the reference\nreference: %+v\nhunk:      %+v", i, name, r, h)
		case c.differs == "error" && (!r.IsError || !h.IsError):
			t.Errorf("call %d, %s: both should fail\nreference: %+v\nhunk:      %+v", i, name, r, h)
		case c.differs != "" && c.differs != "error" && same:
			t.Errorf("call %d, %s: the deliberate difference %q is gone", i, name, c.differs)
		}
		if c.differs != "" {
			seen[c.differs] = true
			t.Logf("call %d, %s: deliberately different (%s)\nreference: %q\nhunk:      %q", i, name, fsDifferences[c.differs], r.Text, h.Text)
		}
	}
	for k := range fsDifferences {
		if !seen[k] {
			t.Errorf("no call shows the difference %q", k)
		}
	}
	// The trees end the same, byte for byte.
	filepath.Walk(refRoot, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(refRoot, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(hunkRoot, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: hunk's tree has %q (%v), the reference's %q", rel, got, err, want)
		}
		return nil
	})
}
