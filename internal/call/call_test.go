package call

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/tools"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// session is a workspace holding a.txt, with an exec policy that cannot
// run anything (an unknown driver): calls are parsed and answered, never
// executed.
func session(t testing.TB) (*tools.Session, string) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &tools.Session{Env: &ops.Env{Workspace: ws, ToolResult: true}, Exec: ops.ExecLimits{Driver: "no-such-driver"}}, dir
}

// TestShapes: each shape is detected and answered in its own result shape,
// also when it fails.
func TestShapes(t *testing.T) {
	s, _ := session(t)
	for name, c := range map[string]struct {
		call, wantType string
		failed         bool
	}{
		"openai apply_patch":   {`{"type":"apply_patch_call","call_id":"c","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-two\n+2\n"}}`, "apply_patch_call_output", false},
		"openai bad operation": {`{"type":"apply_patch_call","call_id":"c","operation":{"type":"rename_file","path":"a.txt"}}`, "apply_patch_call_output", true},
		"openai shell no run":  {`{"type":"shell_call","call_id":"c","action":{"commands":["true"]}}`, "shell_call_output", true},
		"codex":                {`{"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"*** Begin Patch\n*** Delete File: nope\n*** End Patch\n"}`, "custom_tool_call_output", true},
		"anthropic view":       {`{"type":"tool_use","id":"t","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"}}`, "tool_result", false},
		"anthropic bad range":  {`{"type":"tool_use","id":"t","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt","view_range":[3,1]}}`, "tool_result", true},
		"anthropic unknown":    {`{"type":"tool_use","id":"t","name":"computer","input":{}}`, "tool_result", true},
		"local shell no run":   {`{"type":"local_shell_call","call_id":"c","action":{"type":"exec","command":["true"]}}`, "local_shell_call_output", true},
		"local shell as user":  {`{"type":"local_shell_call","call_id":"c","action":{"type":"exec","command":["true"],"user":"root"}}`, "local_shell_call_output", true},
		"hosted shell":         {`{"type":"shell_call","call_id":"c","action":{"commands":["true"]},"environment":{"type":"container_reference","container_id":"x"}}`, "shell_call_output", true},
		"codex shell no run":   {`{"type":"function_call","call_id":"c","name":"shell","arguments":"{\"command\":[\"true\"]}"}`, "function_call_output", true},
		"codex shell bad args": {`{"type":"function_call","call_id":"c","name":"shell","arguments":"{\"command\":7}"}`, "function_call_output", true},
		"gemini read_file":     {`{"functionCall":{"name":"read_file","args":{"file_path":"a.txt"}}}`, "functionResponse", false},
		"gemini unknown":       {`{"functionCall":{"name":"computer","args":{}}}`, "functionResponse", true},
		"gemini no args":       {`{"functionCall":{"name":"read_file"}}`, "functionResponse", true},
	} {
		t.Run(name, func(t *testing.T) {
			out, failed := Run(context.Background(), s, []byte(c.call), "")
			b, _ := json.Marshal(out)
			var m map[string]any
			json.Unmarshal(b, &m)
			if m["functionResponse"] != nil {
				m["type"] = "functionResponse" // (a Gemini part has no type)
			}
			if m["type"] != c.wantType || failed != c.failed {
				t.Errorf("got %s (failed %v), want type %s failed %v", b, failed, c.wantType, c.failed)
			}
		})
	}
}

// FuzzRun: no call, however malformed, makes hunk call panic, and every
// answer is a JSON document.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		`{"type":"apply_patch_call","call_id":"c","operation":{"type":"create_file","path":"n.txt","diff":"+x\n"}}`,
		`{"type":"shell_call","call_id":"c","action":{"commands":["ls"],"timeout_ms":10,"max_output_length":-1}}`,
		`{"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}`,
		`{"type":"tool_use","id":"t","name":"str_replace_based_edit_tool","input":{"command":"insert","path":"a.txt","insert_line":-4,"new_str":"x"}}`,
		`{"type":"tool_use","id":"t","name":"bash","input":{"restart":true}}`,
		`{"tool":"read","arguments":{"path":"a.txt","offset":-1}}`,
		`{"tool":"edit","arguments":[]}`,
		`[]`, `null`, `"x"`, `{`,
	} {
		f.Add(seed, "")
	}
	f.Add(`{}`, "openai-shell")
	s, _ := session(f)
	f.Fuzz(func(t *testing.T, raw, format string) {
		out, _ := Run(context.Background(), s, []byte(raw), format)
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("answer is not JSON: %v", err)
		}
	})
}

func TestCapOutput(t *testing.T) {
	out, errs := capOutput(strings.Repeat("o", 100), strings.Repeat("e", 100), 120)
	if n := len([]rune(out)) + len([]rune(errs)); n > 120 {
		t.Errorf("kept %d characters, want at most 120", n)
	}
	if !strings.HasPrefix(out, "ooo") || !strings.HasSuffix(out, "ooo") {
		t.Errorf("stdout lost its head or tail: %q", out)
	}
}

// TestDeclaredToolsAnswered: a tool `hunk tools` declares, called in each
// provider's shape, is answered in that shape with the text the model
// reads — a read's lines, a failure's hint — and the call's id echoed.
func TestDeclaredToolsAnswered(t *testing.T) {
	s, dir := session(t)
	for name, c := range map[string]struct {
		call     string
		idKey    string // where the call's id comes back
		textKey  string // where the text comes back
		wantText string
		failed   bool
	}{
		"responses function_call":    {`{"type":"function_call","call_id":"fc1","name":"read","arguments":"{\"path\":\"a.txt\"}"}`, "call_id", "output", "two", false},
		"responses unknown tool":     {`{"type":"function_call","call_id":"fc2","name":"nope","arguments":"{}"}`, "call_id", "output", "unknown tool", true},
		"responses failing edit":     {`{"type":"function_call","call_id":"fc3","name":"edit","arguments":"{\"path\":\"a.txt\",\"oldText\":\"three\",\"newText\":\"3\"}"}`, "call_id", "output", "hint:", true},
		"chat tool call":             {`{"id":"tc1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}`, "tool_call_id", "content", "one", false},
		"anthropic tool_use of read": {`{"type":"tool_use","id":"tu1","name":"read","input":{"path":"a.txt"}}`, "tool_use_id", "content", "two", false},
		"anthropic failing edit":     {`{"type":"tool_use","id":"tu2","name":"edit","input":{"path":"a.txt","oldText":"three","newText":"3"}}`, "tool_use_id", "content", "hint:", true},
		"codex function apply_patch": {`{"type":"function_call","call_id":"fc4","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Add File: b.txt\\n+bee\\n*** End Patch\\n\"}"}`, "call_id", "output", "A b.txt", false},
	} {
		t.Run(name, func(t *testing.T) {
			out, failed := Run(context.Background(), s, []byte(c.call), "")
			b, _ := json.Marshal(out)
			var m map[string]any
			json.Unmarshal(b, &m)
			var call map[string]any
			json.Unmarshal([]byte(c.call), &call)
			id := call["call_id"]
			if id == nil {
				id = call["id"]
			}
			text, _ := m[c.textKey].(string)
			if failed != c.failed || m[c.idKey] != id || !strings.Contains(text, c.wantText) {
				t.Errorf("got %s (failed %v); want %s=%v, %s containing %q, failed %v", b, failed, c.idKey, id, c.textKey, c.wantText, c.failed)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || string(b) != "bee\n" {
		t.Errorf("the function-style apply_patch did not add b.txt: %q %v", b, err)
	}
}
