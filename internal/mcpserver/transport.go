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
	return &mcp.IOTransport{
		Reader: &holdEOF{r: bufio.NewReaderSize(in, 64<<10), p: p},
		Writer: &answers{w: out, p: p},
	}
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
	line []byte // the rest of the current line
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
	w io.Writer
	p *pending
}

func (a *answers) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
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
