package mcpserver

// What some clients do with a result, and how hunk answers them.
//
// A tool result carries its text in content blocks and, for the clients
// that hand the model structuredContent alone (Claude Code, Codex CLI),
// the same text again as structuredContent.content beside the facts. A
// client that forwards both gives its model the text twice: Copilot CLI
// every result (a 2 MB exec reached its model as 18,481 characters against
// 10,036 elsewhere), Gemini CLI a failure's. For the clients known to do
// that, named by their clientInfo, structuredContent carries the facts
// alone (exit code, sizes, ids, the code) and the output schemas do not
// ask for "content"; the filesystem drop-in, whose structuredContent is
// the text alone, declares no output schema to them and sends none.

import (
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// textAndStructured are the clients (clientInfo.name) that hand their model
// a result's text blocks and its structuredContent both.
var textAndStructured = map[string]bool{
	"copilot-cli":           true, // Copilot CLI 1.0.102
	"gemini-cli-mcp-client": true, // Gemini CLI 0.61.0, for a failed call
}

// clientOfRequest is the client's name a stateless request's _meta gives.
func clientOfRequest(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Info struct {
				Name string `json:"name"`
			} `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta.Info.Name
}

// clientOfInitialize is the client's name initialize's params give.
func clientOfInitialize(params json.RawMessage) string {
	var p struct {
		Info struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Info.Name
}

// factsOnly reports whether the client of request m (its era e) is one
// that reads the text blocks and structuredContent both.
func (c *conn) factsOnly(m *message, e era) bool {
	if e == eraStateless {
		if p, err := m.callParams(); err == nil && m.Method == "tools/call" {
			return textAndStructured[p.Meta.ClientInfo.Name] // decoded once, with the call
		}
		return textAndStructured[clientOfRequest(m.Params)]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return textAndStructured[c.client]
}

// factsSchema is an output schema that does not ask for "content" (nil for
// the drop-in's, which is "content" alone).
func factsSchema(s *jsonschema.Schema, reference bool) *jsonschema.Schema {
	if s == nil || reference {
		return nil
	}
	cp := *s
	cp.Required = slices.DeleteFunc(slices.Clone(s.Required), func(r string) bool { return r == "content" })
	return &cp
}

// factsOf is structuredContent without the text: the facts alone, nil when
// nothing else is left (the drop-in's).
func factsOf(sc any) any {
	m, ok := sc.(map[string]any)
	if !ok {
		return sc
	}
	delete(m, "content")
	if len(m) == 0 {
		return nil
	}
	return m
}
