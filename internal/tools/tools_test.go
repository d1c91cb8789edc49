package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// all is every tool hunk declares.
func all() Set {
	return append(append(Hunk(sandbox.Network{}), Insert()), Filesystem()...)
}

func session(t *testing.T) *Session {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the workspace's history
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pic.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &Session{Env: &ops.Env{Workspace: ws, ToolResult: true}, Exec: ops.ExecLimits{Driver: "none"}}
}

// calls are a call that succeeds and one that fails for every tool, run in
// order against session's workspace.
var calls = []struct{ tool, args string }{
	{"read", `{"path":"a.txt"}`}, {"read", `{"path":"sub"}`}, {"read", `{"path":"pic.png"}`}, {"read", `{"path":"nope"}`},
	{"write", `{"path":"b.txt","content":"b\n","diff":true}`}, {"write", `{"path":"b.txt","content":"x","createOnly":true}`},
	{"edit", `{"path":"a.txt","oldText":"two","newText":"2"}`}, {"edit", `{"path":"a.txt","oldText":"zzz","newText":"2"}`},
	{"insert", `{"path":"a.txt","after":0,"text":"zero"}`}, {"insert", `{"path":"a.txt","after":99,"text":"x"}`},
	{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n"}`},
	{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-nine\n+9\n*** End Patch\n"}`},
	{"write", `{"path":"amb.txt","content":"x\ny\nx\n"}`}, {"edit", `{"path":"amb.txt","oldText":"x","newText":"z"}`},
	{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: amb.txt\n@@\n-q\n+r\n@@\n-s\n+t\n*** End Patch\n"}`},
	{"apply_patch", `{"patch":"*** Begin Patch\n*** Update File: amb.txt\n@@\n-x\n+r\n*** End Patch\n"}`},
	{"exec", `{"command":"echo out; echo err >&2; exit 3"}`}, {"exec", `{"workdir":"nope","command":"true"}`},
	{"undo", `{"diff":true}`}, {"undo", `{"id":"zzzz"}`},
	{"search", `{"pattern":"o","context":1}`}, {"search", `{"pattern":"*.txt","outputMode":"names"}`}, {"search", `{"pattern":"(unclosed"}`},
	{"search", `{"pattern":"o","outputMode":"count","limit":1}`},
	{"read_text_file", `{"path":"a.txt","head":1}`}, {"read_text_file", `{"path":"nope"}`}, {"read_file", `{"path":"a.txt","tail":1.5,"extra":true}`},
	{"read_media_file", `{"path":"pic.png"}`}, {"read_media_file", `{"path":"sub"}`},
	{"read_multiple_files", `{"paths":["a.txt","nope"]}`},
	{"write_file", `{"path":"c.txt","content":"c\n"}`}, {"write_file", `{"path":"sub","content":"c\n"}`},
	{"edit_file", `{"path":"c.txt","edits":[{"oldText":"c","newText":"C"}]}`}, {"edit_file", `{"path":"c.txt","edits":[{"oldText":"q","newText":"Q"}]}`},
	{"create_directory", `{"path":"d/e"}`}, {"create_directory", `{"path":"a.txt/x"}`},
	{"list_directory", `{"path":"."}`}, {"list_directory_with_sizes", `{"path":".","sortBy":"size"}`}, {"list_directory", `{"path":"nope"}`},
	{"directory_tree", `{"path":"d"}`}, {"search_files", `{"path":".","pattern":"*.txt"}`},
	{"get_file_info", `{"path":"a.txt"}`}, {"get_file_info", `{"path":"nope"}`},
	{"move_file", `{"source":"c.txt","destination":"d/c.txt"}`}, {"move_file", `{"source":"nope","destination":"x"}`},
	{"list_allowed_directories", `{}`},
}

// TestOutputSchemasDescribeResults: what every tool puts in MCP's
// structuredContent, on success and on failure, is valid under the output
// schema it declares, and declares every property it has — the schemas are
// derived from the details' Go types, so a field added to a type is in the
// schema, and one put in a result some other way fails here.
func TestOutputSchemasDescribeResults(t *testing.T) {
	s := session(t)
	set := all()
	seen := map[string]int{}
	for i, c := range calls {
		tool := set.Lookup(c.tool)
		if tool == nil {
			t.Fatalf("no tool %s", c.tool)
		}
		r := tool.Call(context.Background(), s, json.RawMessage(c.args))
		if !r.IsError {
			seen[c.tool]++
		}
		sc := tool.Structured(r)
		if tool.Reference && r.IsError {
			if sc != nil {
				t.Errorf("%s %s: a failure of a filesystem tool has structuredContent %v (the reference's has none)", c.tool, c.args, sc)
			}
			continue
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal(b, &got)
		name := fmt.Sprintf("call %d, %s %s", i, c.tool, c.args)
		for k := range got {
			if tool.Output.Properties[k] == nil {
				t.Errorf("%s: structuredContent has %q, which the output schema does not declare", name, k)
			}
		}
		resolved, err := tool.Output.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", c.tool, err)
		}
		if err := resolved.Validate(got); err != nil {
			t.Errorf("%s: structuredContent %s is not valid under the output schema: %v", name, b, err)
		}
	}
	for _, tool := range set {
		if seen[tool.Name] == 0 {
			t.Errorf("no call of %s succeeded: its output schema is not checked", tool.Name)
		}
	}
}

// lint is what the MCP Inspector's --strict check reports of a schema
// (@modelcontextprotocol/inspector 2.12: schemaLint's type-union,
// boolean-schema, remote-ref and untyped-schema rules), by path.
func lint(node any, path, keyword string, out *[]string) {
	switch n := node.(type) {
	case bool:
		switch keyword {
		case "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems":
		default:
			*out = append(*out, path+": a bare boolean schema")
		}
		return
	case map[string]any:
		if _, ok := n["type"].([]any); ok {
			*out = append(*out, fmt.Sprintf("%s: type is an array %v", path, n["type"]))
		}
		if ref, ok := n["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
			*out = append(*out, path+": a remote $ref")
		}
		constrains := false
		for k := range n {
			switch k {
			case "description", "title", "default", "examples", "$comment", "$schema", "$id", "readOnly", "writeOnly", "deprecated", "$defs", "definitions", "if", "then", "else":
			default:
				constrains = true
			}
		}
		if !constrains && keyword != "not" {
			*out = append(*out, path+": an untyped schema (it constrains nothing)")
		}
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch v := n[k].(type) {
			case map[string]any:
				switch k {
				case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
					for name, sub := range v {
						lint(sub, path+"."+k+"."+name, k, out)
					}
				case "items", "not", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "unevaluatedProperties":
					lint(v, path+"."+k, k, out)
				}
			case bool:
				lint(v, path+"."+k, k, out)
			case []any:
				if k == "anyOf" || k == "allOf" || k == "oneOf" || k == "prefixItems" {
					for i, sub := range v {
						lint(sub, fmt.Sprintf("%s.%s[%d]", path, k, i), k, out)
					}
				}
			}
		}
	}
}

// TestSchemasPortable: no tool's input or output schema uses a construct
// some clients reject (type arrays such as ["null", "array"], bare boolean
// schemas, untyped schemas, remote references). The real Inspector runs in
// TestMCPInspectorStrict when node is here.
func TestSchemasPortable(t *testing.T) {
	for _, tool := range append(all(), Hunk(sandbox.Network{Host: true})...) {
		for kind, s := range map[string]*jsonschema.Schema{"inputSchema": tool.Input, "outputSchema": tool.Output} {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			json.Unmarshal(b, &doc)
			var found []string
			lint(doc, kind, "", &found)
			for _, f := range found {
				t.Errorf("%s: %s", tool.Name, f)
			}
		}
	}
}

// TestPortable: a nullable type becomes its one other type, everywhere in
// the schema; a real union keeps its types.
func TestPortable(t *testing.T) {
	type in struct {
		List  []string          `json:"list"`
		Map   map[string]string `json:"map"`
		Ptr   *int              `json:"ptr"`
		Inner []struct {
			More []int `json:"more"`
		} `json:"inner"`
	}
	b, _ := json.Marshal(detailsOf[in]())
	if strings.Contains(string(b), "null") {
		t.Errorf("a nullable type is left: %s", b)
	}
	u := Portable(&jsonschema.Schema{Types: []string{"null", "string", "integer"}})
	if len(u.Types) != 2 || u.Type != "" {
		t.Errorf("a real union lost its types: %+v", u)
	}
}

// TestOpenAIStrict: the strict declarations are what OpenAI's strict mode
// takes — every object closed, every property required, nothing but
// exec's env left out — and a call as a strict model makes it (null for
// every optional argument) is answered as if those were left out.
func TestOpenAIStrict(t *testing.T) {
	s := session(t)
	given := map[string]map[string]any{
		"apply_patch": {"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n"},
		"read":        {"path": "a.txt"},
		"write":       {"path": "w.txt", "content": "w\n"},
		"edit":        {"path": "a.txt", "oldText": "two", "newText": "2"},
		"exec":        {"command": "echo hi"},
		"search":      {"pattern": "one"},
		"insert":      {"path": "a.txt", "after": 0, "text": "zero"},
	}
	for _, tool := range append(Hunk(sandbox.Network{}), Insert()) {
		strict, dropped := OpenAIStrict(tool.Input)
		if tool.Name == "exec" && (len(dropped) != 1 || dropped[0] != "env") || tool.Name != "exec" && len(dropped) > 0 {
			t.Errorf("%s: dropped %v", tool.Name, dropped)
		}
		var check func(n *jsonschema.Schema, path string)
		check = func(n *jsonschema.Schema, path string) {
			if n.Items != nil {
				check(n.Items, path+"[]")
			}
			if n.Type != "object" {
				return
			}
			if n.AdditionalProperties == nil || n.AdditionalProperties.Not == nil {
				t.Errorf("%s %s: not closed", tool.Name, path)
			}
			for name, p := range n.Properties {
				if !slices.Contains(n.Required, name) {
					t.Errorf("%s %s%s: not required", tool.Name, path, name)
				}
				check(p, path+name+".")
			}
		}
		check(strict, "")
		args := map[string]any{}
		for name := range strict.Properties {
			args[name] = nil
		}
		for k, v := range given[tool.Name] {
			args[k] = v
		}
		b, _ := json.Marshal(args)
		if r := tool.Call(context.Background(), s, b); r.IsError {
			t.Errorf("%s %s: %s %s", tool.Name, b, r.Code, r.Error)
		}
	}
}

// TestSetNamesAreOneTools: the table of tool sets gives every tool one
// set, and a name to one tool but where a provider's own set keeps that
// provider's name for it: a name hunk call looks up is one tool's for the
// shape that asks, and each set's failures speak its own words.
func TestSetNamesAreOneTools(t *testing.T) {
	seen := map[string]string{}
	var built []string
	for _, tool := range All(sandbox.Network{}) {
		if !slices.Contains(built, tool.Name) {
			built = append(built, tool.Name)
		}
	}
	if !slices.Equal(built, allNames()) {
		t.Errorf("the table names %v, its sets build %v", allNames(), built)
	}
	for _, tool := range All(sandbox.Network{}) {
		d := setDef(tool.set)
		if d == nil {
			t.Errorf("%s is of no set (%q)", tool.Name, tool.set)
			continue
		}
		if other, ok := seen[tool.Name]; ok && (other == tool.set || !d.Own) {
			t.Errorf("%s is a tool of %s and of %s", tool.Name, other, tool.set)
		}
		if _, ok := seen[tool.Name]; !ok {
			seen[tool.Name] = tool.set
		}
		if got := All(sandbox.Network{}).Find(tool.Name, tool.set); got.set != tool.set {
			t.Errorf("Find(%s, %s) is %s's", tool.Name, tool.set, got.set)
		}
	}
	for _, d := range Sets() {
		s, err := Select(d.Name, nil, "", sandbox.Network{})
		if err != nil || len(s.Set) == 0 {
			t.Errorf("Select(%q): %v", d.Name, err)
		}
	}
	if got := filesystemTool(t, "edit_file").words(); got != filesystemWords {
		t.Error("a filesystem tool's hints are not in the filesystem set's words")
	}
}

func filesystemTool(t *testing.T, name string) *Tool {
	tool := Filesystem().Lookup(name)
	if tool == nil {
		t.Fatalf("no %s", name)
	}
	return tool
}

// TestTwins: a provider's own set may name a tool as another set does; a
// selection of both holds both, finds each by its set, and is refused by a
// surface that names tools by name alone. A bare name is the first set's.
func TestTwins(t *testing.T) {
	sel, err := Select("filesystem,gemini", nil, "", sandbox.Network{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.Find("read_file", "gemini"); got == nil || got.set != "gemini" {
		t.Errorf("Find(read_file, gemini) = %v", got)
	}
	if got := sel.Lookup("read_file"); got == nil || got.set != "filesystem" {
		t.Errorf("Lookup(read_file) = %v, want the filesystem set's", got)
	}
	if err := sel.Twins(); err == nil || !strings.Contains(err.Error(), "read_file is a tool of the filesystem set and of the gemini set") {
		t.Errorf("Twins() = %v", err)
	}
	bare, err := Select("read_file", nil, "", sandbox.Network{})
	if err != nil || len(bare.Set) != 1 || bare.Set[0].set != "filesystem" || bare.Twins() != nil {
		t.Errorf("Select(read_file) = %v, %v", bare, err)
	}
	off, err := Select("filesystem,gemini,-read_file", nil, "", sandbox.Network{})
	if err != nil || off.Lookup("read_file") != nil {
		t.Errorf("-read_file leaves %v (%v)", off.Lookup("read_file"), err)
	}
	if own, err := Select("gemini", []string{"write_file"}, "", sandbox.Network{}); err != nil || own.Lookup("write_file") != nil || own.Lookup("replace") == nil {
		t.Errorf("tools.disable write_file leaves %v (%v)", own, err)
	}
}

// TestSetServesDeclared: a set's name serves the tools it declares; one
// it only answers (hunk's insert) is served when named.
func TestSetServesDeclared(t *testing.T) {
	sel, err := Select("hunk", nil, "", sandbox.Network{})
	if err != nil || sel.Lookup("insert") != nil || len(sel.Set) != 7 {
		t.Errorf("Select(hunk) = %v (%v), want hunk's 7 tools without insert", sel.Names(), err)
	}
	if sel, err = Select("hunk,insert", nil, "", sandbox.Network{}); err != nil || sel.Lookup("insert") == nil {
		t.Errorf("Select(hunk,insert) = %v (%v)", sel, err)
	}
}
