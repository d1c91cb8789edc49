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
	ws, err := workspace.Open(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &tools.Session{Env: &ops.Env{Workspace: ws, ToolResult: true}, Exec: ops.ExecRequest{Driver: "no-such-driver"}}, dir
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
	} {
		t.Run(name, func(t *testing.T) {
			out, failed := Run(context.Background(), s, []byte(c.call), "")
			b, _ := json.Marshal(out)
			var m map[string]any
			json.Unmarshal(b, &m)
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
