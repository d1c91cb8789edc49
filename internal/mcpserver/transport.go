package mcpserver

// The wire: newline-delimited JSON-RPC 2.0 messages on stdin and stdout.

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxDepth is the deepest nesting of arrays and objects a message may have:
// far beyond any real request, far below what makes a decoder give up.
const maxDepth = 128

// reject returns JSON-RPC's answer to a line that is not a message the
// server can take — not JSON, nested too deep (parse error), or not a
// JSON-RPC 2.0 request, notification or response (invalid request) — and
// nil for a line to hand on. Handed on, such a line would end the whole
// session; answered and dropped, the client can go on.
func reject(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil // blank lines between messages are harmless
	}
	if !json.Valid(line) || tooDeep(line) {
		return errorReply(nil, -32700, "Parse error: each line must be one JSON-RPC message (valid JSON, nested at most 128 deep)")
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return errorReply(nil, -32600, "Invalid Request: an empty or malformed batch")
		}
		for _, m := range batch {
			if t := bytes.TrimSpace(m); len(t) > 0 && t[0] == '[' {
				return errorReply(nil, -32600, "Invalid Request: a batch holds messages, not batches")
			}
			if r := reject(m); r != nil {
				return r
			}
		}
		return nil
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return errorReply(nil, -32600, "Invalid Request: a message is a JSON object")
	}
	id := json.RawMessage(nil)
	idOK := len(m.ID) == 0 || m.ID[0] == '"' || m.ID[0] == '-' || m.ID[0] >= '0' && m.ID[0] <= '9' || string(m.ID) == "null"
	if idOK && len(m.ID) > 0 {
		id = m.ID
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return errorReply(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case !idOK:
		return errorReply(nil, -32600, "Invalid Request: an id is a string or a number")
	case m.Method != nil && *m.Method == "":
		return errorReply(id, -32600, "Invalid Request: an empty method")
	case m.Method == nil && (len(m.ID) == 0 || len(m.Result) == 0 && len(m.Error) == 0):
		return errorReply(id, -32600, "Invalid Request: neither a request, a notification nor a response")
	}
	return nil
}

// errorReply is a JSON-RPC error response for id (nil: null).
func errorReply(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// tooDeep reports whether valid JSON nests arrays and objects more than
// maxDepth levels.
func tooDeep(line []byte) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range line {
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// canonID is a JSON-RPC id in one spelling: 1, 1.0 and 1e0 are one id,
// "1" another.
func canonID(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch v := v.(type) {
	case string:
		return "s" + v
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return string(raw)
}
