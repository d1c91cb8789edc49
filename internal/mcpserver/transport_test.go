package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReject: whatever a client sends as a line, reject never panics; what
// it hands on is one JSON object (or batch of them) within the depth limit,
// and what it answers is one JSON-RPC error response line.
func FuzzReject(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`garbage{`, `42`, `[]`, `{"jsonrpc":"1.0","id":1,"method":"x"}`,
		strings.Repeat("[", 200) + strings.Repeat("]", 200),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		reply := reject([]byte(line))
		if reply == nil {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" {
				return
			}
			if !json.Valid([]byte(trimmed)) || tooDeep([]byte(trimmed)) {
				t.Fatalf("handed on %q", line)
			}
			return
		}
		var m struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct{ Code int }
		}
		var keys map[string]json.RawMessage
		if !strings.HasSuffix(string(reply), "\n") || strings.Count(string(reply), "\n") != 1 ||
			json.Unmarshal(reply, &m) != nil || json.Unmarshal(reply, &keys) != nil || keys["id"] == nil ||
			m.JSONRPC != "2.0" || m.Error == nil || m.Error.Code > -32600 || m.Error.Code < -32700 {
			t.Fatalf("reply %q to %q", reply, line)
		}
	})
}
