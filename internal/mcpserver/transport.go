package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newTransport is the SDK's newline-delimited JSON transport over in and
// out, with one difference: the end of in is passed on only once every
// request read from it has been answered. The SDK closes the session at the
// end of its input and drops replies still in flight (go-sdk issue 1061),
// so `printf '…requests…' | hunk mcp` would lose answers.
func newTransport(in io.Reader, out io.Writer) mcp.Transport {
	p := &pending{ids: map[string]bool{}}
	p.cond = sync.NewCond(&p.mu)
	a := &answers{w: out, p: p}
	return &mcp.IOTransport{
		Reader: &holdEOF{r: bufio.NewReaderSize(in, 64<<10), p: p, a: a},
		Writer: a,
	}
}

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

// pending are the ids of requests read and not yet answered.
type pending struct {
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]bool
}

// message is what the transport needs of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// holdEOF passes in's lines on, noting requests, and holds its end back
// until none is pending.
type holdEOF struct {
	r    *bufio.Reader
	p    *pending
	a    *answers // where a malformed line's parse error goes
	line []byte   // the rest of the current line
	err  error
}

func (h *holdEOF) Read(b []byte) (int, error) {
	for len(h.line) == 0 {
		if h.err != nil {
			if h.err == io.EOF {
				h.p.mu.Lock()
				for len(h.p.ids) > 0 {
					h.p.cond.Wait()
				}
				h.p.mu.Unlock()
			}
			return 0, h.err
		}
		h.line, h.err = h.r.ReadBytes('\n')
		if reply := reject(h.line); reply != nil {
			h.line = nil
			if _, err := h.a.Write(reply); err != nil && h.err == nil {
				h.err = err
			}
			continue
		}
		h.note(h.line)
	}
	n := copy(b, h.line)
	h.line = h.line[n:]
	return n, nil
}

// note records a request (an id and a method) as pending; a cancellation
// notification ends the request it names (it gets no answer).
func (h *holdEOF) note(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	switch {
	case m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null":
		h.p.ids[canonID(m.ID)] = true
	case m.Method == "notifications/cancelled" && len(m.Params.RequestID) > 0:
		delete(h.p.ids, canonID(m.Params.RequestID))
		h.p.cond.Broadcast()
	}
}

func (h *holdEOF) Close() error { return nil }

// answers writes the server's messages to w and strikes answered requests
// off the pending list.
type answers struct {
	mu sync.Mutex // one message at a time: the server's and the parse errors
	w  io.Writer
	p  *pending
}

func (a *answers) Write(b []byte) (int, error) {
	a.mu.Lock()
	n, err := a.w.Write(b)
	a.mu.Unlock()
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m message
		if json.Unmarshal(line, &m) != nil || m.Method != "" || len(m.ID) == 0 {
			continue
		}
		a.p.mu.Lock()
		delete(a.p.ids, canonID(m.ID))
		a.p.cond.Broadcast()
		a.p.mu.Unlock()
	}
	return n, err
}

func (a *answers) Close() error { return nil }

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
