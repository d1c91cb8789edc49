package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/tools"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// serve runs the server over the given lines and returns its answers by id
// (and those without an id under "null").
func serve(t *testing.T, lines ...string) map[string]map[string]any {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	sess := &tools.Session{Env: &ops.Env{Workspace: ws, ToolResult: true}, Exec: ops.ExecLimits{Driver: "none"}}
	var out strings.Builder
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	if err := Serve(context.Background(), Options{Version: "test", Tools: tools.Hunk(sandbox.Network{}), Session: sess}, in, &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "[") {
			var batch []map[string]any
			json.Unmarshal([]byte(line), &batch)
			for _, m := range batch {
				b, _ := json.Marshal(m["id"])
				got["batch "+string(b)] = m
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		b, _ := json.Marshal(m["id"])
		got[string(b)] = m
	}
	return got
}

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestProtocol: the handshake, ping, the tool list, a call, errors for an
// unknown method (server/discover: a 2026-07-28 client falls back to
// initialize on it) and an unknown tool, a batch, and every request read
// answered although the input ended right after it.
func TestProtocol(t *testing.T) {
	got := serve(t, initialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"teleport","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"edit","arguments":{"path":"a.txt","oldText":"zzz","newText":"y"}}}`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":8,"method":"nope"}]`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"exec","arguments":{"command":"echo hi"}}}`,
	)
	res := func(id string) map[string]any { r, _ := got[id]["result"].(map[string]any); return r }
	code := func(id string) float64 {
		e, _ := got[id]["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if v := res("0")["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("initialize: version %v; %v", v, got["0"])
	}
	if info, _ := res("0")["serverInfo"].(map[string]any); info["name"] != "hunk" || info["version"] != "test" {
		t.Errorf("serverInfo: %v", res("0"))
	}
	if res("1") == nil {
		t.Errorf("ping: %v", got["1"])
	}
	if list, _ := res("2")["tools"].([]any); len(list) != 7 {
		t.Errorf("tools/list: %v", got["2"])
	}
	if c, _ := res("3")["content"].([]any); len(c) != 1 || !strings.Contains(c[0].(map[string]any)["text"].(string), "one\ntwo") {
		t.Errorf("tools/call read: %v", got["3"])
	}
	if code("4") != codeMethodNotFound || code("5") != codeInvalidParams {
		t.Errorf("server/discover %v, unknown tool %v", got["4"], got["5"])
	}
	if r := res("6"); r["isError"] != true || !strings.HasPrefix(r["content"].([]any)[0].(map[string]any)["text"].(string), "[NO_MATCH]") {
		t.Errorf("a failing edit: %v", got["6"])
	}
	if got["batch 7"]["result"] == nil || got["batch 8"]["error"] == nil || len(got) != 10 {
		t.Errorf("batch: %v (%d answers)", got, len(got))
	}
	if r := res(`"s"`); r == nil || !strings.Contains(r["content"].([]any)[0].(map[string]any)["text"].(string), "hi") {
		t.Errorf("exec, answered although the input ended: %v", got[`"s"`])
	}
}

// TestVersionNegotiation: a version served is echoed; another gets the
// newest.
func TestVersionNegotiation(t *testing.T) {
	got := serve(t, strings.Replace(initialize, "2025-06-18", "2031-01-01", 1))
	if v := got["0"]["result"].(map[string]any)["protocolVersion"]; v != protocolVersions[0] {
		t.Errorf("an unknown version got %v", v)
	}
}

// FuzzRequestEra: any params decide an era or an error, never a panic; a
// stateless era without error names 2026-07-28 and the capabilities.
func FuzzRequestEra(f *testing.F) {
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`))
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`))
	f.Add([]byte(`{"name":"read"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, params []byte) {
		e, err := requestEra(params)
		if err == nil && e == eraStateless && !bytes.Contains(params, []byte(metaCapabilities)) {
			t.Fatalf("stateless without capabilities: %s", params)
		}
	})
}
