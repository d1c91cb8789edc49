// Package mcpserver is `hunk mcp`: a stdio MCP server serving a tool set of
// package tools over one workspace. Roots the client sends may narrow the
// workspace, never widen it.
//
// It speaks the protocol itself — initialize, ping, tools/list, tools/call,
// the roots exchange, cancellation — rather than through the Go SDK's
// server: a call is one line read, one tool run, one line written, with no
// goroutine hand-offs in between but the one that lets a long call run
// while the next line is read, and a hunk process does not pay the SDK's
// start-up (its HTTP, OAuth and gob packages). The SDK's client, the
// TypeScript SDK's client, the MCP Inspector, Claude Code and Codex CLI
// drive it in the tests.
package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// Options configure the server.
type Options struct {
	Version string
	Tools   tools.Set
	// Session is the session every call runs in (its workspace is -C).
	Session *tools.Session
	// Log receives the server's own messages (stderr); nil drops them.
	Log io.Writer
}

// protocolVersions are the legacy MCP versions served (initialize), newest
// first. A client asking for another gets the newest. 2026-07-28, the
// stateless era, is era.go's.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Tool is an MCP tool declaration (tools/list).
type Tool struct {
	Name         string             `json:"name"`
	Title        string             `json:"title,omitempty"`
	Description  string             `json:"description,omitempty"`
	InputSchema  *jsonschema.Schema `json:"inputSchema"`
	OutputSchema *jsonschema.Schema `json:"outputSchema,omitempty"`
	Annotations  Annotations        `json:"annotations"`
}

// Annotations are MCP's tool hints, every one explicit.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Declaration is t as an MCP tool, with every annotation explicit.
func Declaration(t *tools.Tool) *Tool {
	return &Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.Input, OutputSchema: t.Output,
		Annotations: Annotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive,
			IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld},
	}
}

// IgnoredMeta is the _meta key of the arguments a filesystem tool passed
// over (it does not know them, and as the reference server it does not
// refuse them).
const IgnoredMeta = "dev.hunk/ignoredArguments"

// message is a JSON-RPC 2.0 message: a request (method and id), a
// notification (method, no id) or a response (id, result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`

	call *callParams // a tools/call's params, once decoded
}

// callParams are a tools/call's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		// ProgressToken asks for notifications/progress while the call
		// runs (a string or a number, echoed as given).
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// callParams decodes m's params as a tools/call's, once.
func (m *message) callParams() (*callParams, error) {
	if m.call == nil {
		var p callParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, err
		}
		m.call = &p
	}
	return m.call, nil
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// JSON-RPC's error codes.
const (
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// Serve runs the server over in and out until in ends — every request read
// answered first, so `printf '…requests…' | hunk mcp` loses none — or ctx
// is done.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	s := &server{opts: opts, out: out, inflight: map[string]context.CancelFunc{}, dropped: map[string]bool{}, waiting: map[string]chan *message{}}
	s.toolByName = map[string]*tools.Tool{}
	var decls []*Tool
	for _, t := range opts.Tools {
		s.toolByName[t.Name] = t
		s.reference = s.reference || t.Reference
		decls = append(decls, Declaration(t))
	}
	slices.SortFunc(decls, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) }) // by name, as the SDK lists
	s.toolList, _ = json.Marshal(decls)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	read := make(chan error, 1)
	go func() { read <- s.read(ctx, bufio.NewReaderSize(in, 64<<10)) }()
	select {
	case err := <-read:
		s.calls.Wait() // every request read is answered before the end
		return err
	case <-ctx.Done():
	}
	// A signal: stop reading, cancel every call (exec stops its command),
	// and end within a second whatever still runs — a call blocked in the
	// kernel must not keep hunk mcp from ending.
	if c, ok := in.(io.Closer); ok {
		c.Close()
	}
	done := make(chan struct{})
	go func() { <-read; s.calls.Wait(); close(done) }() // no call starts once reading ended
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		s.logf("ending with calls still running")
	}
	return nil
}

// shutdownGrace is how long hunk mcp waits, once signalled, for its calls
// to stop.
const shutdownGrace = 900 * time.Millisecond

// MaxMessage bounds one message hunk mcp reads (one line): a longer one is
// refused with an error reply and skipped, never held.
const MaxMessage = 64 << 20

// read reads and handles messages, a line each, until the input ends.
func (s *server) read(ctx context.Context, r *bufio.Reader) error {
	for {
		line, long, err := readLine(r, MaxMessage)
		if long && ctx.Err() == nil {
			s.write(errorReply(nil, -32600, fmt.Sprintf("Invalid Request: a message over %d bytes (hunk mcp reads at most %d MiB a line); skipped", MaxMessage, MaxMessage>>20)))
		}
		if len(line) > 0 && ctx.Err() == nil {
			s.line(ctx, line)
		}
		if err != nil || ctx.Err() != nil {
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line of at most max bytes; a longer one is read to
// its end and dropped (long: nothing of it is returned). The line is kept
// in the reader's buffer-sized pieces until it ends, then joined once: a
// line of n bytes costs 2n at most, never a doubling buffer's garbage.
func readLine(r *bufio.Reader, max int) (line []byte, long bool, err error) {
	var parts [][]byte
	n := 0
	for {
		frag, err := r.ReadSlice('\n')
		if n += len(frag); n > max {
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			return nil, true, err
		}
		if err != bufio.ErrBufferFull {
			if len(parts) == 0 {
				return append([]byte(nil), frag...), false, err
			}
			line = make([]byte, 0, n)
			for _, p := range parts {
				line = append(line, p...)
			}
			return append(line, frag...), false, err
		}
		parts = append(parts, append([]byte(nil), frag...))
	}
}

type server struct {
	opts       Options
	toolByName map[string]*tools.Tool
	toolList   json.RawMessage // the tools/list result's tools
	reference  bool            // the filesystem drop-in: answered as the reference server

	wmu sync.Mutex // one message at a time on out
	out io.Writer

	calls sync.WaitGroup // requests being answered

	mu       sync.Mutex
	era      era                           // pinned by the first request
	roots    bool                          // the client declared the roots capability
	narrowed *tools.Session                // the session under the client's roots; nil: the base
	ready    chan struct{}                 // closed once the roots asked for are known; nil: none asked
	inflight map[string]context.CancelFunc // requests being answered, by id (canonID)
	dropped  map[string]bool               // requests the client cancelled: no answer
	waiting  map[string]chan *message      // the server's requests to the client, by id
	nextID   int
}

func (s *server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "hunk mcp: "+format+"\n", args...)
	}
}

// send writes one message.
func (s *server) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.write(append(b, '\n'))
}

func (s *server) write(b []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.out.Write(b)
}

// line handles one line read.
func (s *server) line(ctx context.Context, line []byte) {
	if reply := reject(line); reply != nil {
		s.write(reply)
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] == '[' {
		// A batch (protocol 2025-03-26): answered with one array, after
		// every message in it.
		var batch []*message
		if json.Unmarshal(line, &batch) != nil {
			s.write(errorReply(nil, -32600, "Invalid Request: a malformed batch"))
			return
		}
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			var replies []*message
			for _, m := range batch {
				if r := s.handle(ctx, m); r != nil {
					replies = append(replies, r)
				}
			}
			if len(replies) > 0 {
				s.send(replies)
			}
		}()
		return
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		s.write(errorReply(nil, -32600, "Invalid Request: a message is a JSON object"))
		return
	}
	if m.Method == "tools/call" && len(m.ID) > 0 && s.concurrent(&m) {
		// A call that may run long (exec) or waits for the client's roots
		// runs beside the reading, so a cancellation or the roots reach
		// it; the others are answered at once, without a hand-off.
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			r := s.handle(ctx, &m)
			s.mu.Lock()
			cancelled := s.dropped[canonID(m.ID)]
			delete(s.dropped, canonID(m.ID))
			s.mu.Unlock()
			if r != nil && !cancelled { // a cancelled request gets no answer
				s.send(r)
			}
		}()
		return
	}
	if r := s.handle(ctx, &m); r != nil {
		s.send(r)
	}
}

// concurrent reports whether a tools/call runs concurrently with the
// reading: exec (it may run for minutes), and any call while the client's
// roots are being asked for (it waits for them, and their answer comes on
// the line).
func (s *server) concurrent(m *message) bool {
	if p, err := m.callParams(); err == nil && p.Name == "exec" {
		return true
	}
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	if ready == nil {
		return false
	}
	select {
	case <-ready:
		return false
	default:
		return true
	}
}

// handle answers one message: the response to a request, nil for a
// notification or a response to the server's own request.
func (s *server) handle(ctx context.Context, m *message) *message {
	if m.Method == "" {
		s.response(m)
		return nil
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		s.notification(m)
		return nil
	}
	reply := &message{JSONRPC: "2.0", ID: m.ID}
	if strings.HasPrefix(m.Method, "notifications/") {
		// A notification sent with an id: acted on, and told.
		s.notification(m)
		reply.Error = &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s is a notification: send it without an id (done all the same)", m.Method)}
		return reply
	}
	e, err := requestEra(m.Params)
	if err == nil {
		err = s.pin(e, m.Method)
	}
	if err == nil {
		err = statelessOnly(e, m.Method)
	}
	var res any
	if err == nil {
		res, err = s.answer(ctx, m, e)
	}
	if err == nil && e == eraStateless {
		res = s.complete(res)
	}
	if err != nil {
		reply.Error = err
		return reply
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		reply.Error = &rpcError{Code: codeInternal, Message: merr.Error()}
		return reply
	}
	reply.Result = b
	return reply
}

// answer answers a request of era e.
func (s *server) answer(ctx context.Context, m *message, e era) (any, *rpcError) {
	if len(m.Params) == 0 || string(m.Params) == "null" {
		switch m.Method {
		case "initialize", "tools/call":
			return nil, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s needs params", m.Method)}
		}
	}
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "ping":
		return struct{}{}, nil
	case "server/discover":
		return s.discover(), nil
	case "tools/list":
		if e == eraStateless {
			return &ListResult{Tools: s.toolList, Cache: &Cache{TTLMs: listTTL, CacheScope: "private"}}, nil
		}
		return &ListResult{Tools: s.toolList}, nil
	case "tools/call":
		return s.call(ctx, m)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + m.Method}
}

// initialize answers the handshake: the version (the client's, when served;
// the newest otherwise), the tools capability, hunk and its instructions.
func (s *server) initialize(params json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Roots json.RawMessage `json:"roots"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: initialize's params are an object {protocolVersion, capabilities, clientInfo}"}
	}
	version := protocolVersions[0]
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	s.mu.Lock()
	s.roots = len(p.Capabilities.Roots) > 0 && string(p.Capabilities.Roots) != "null"
	s.mu.Unlock()
	return InitializeResult{ProtocolVersion: version, ServerInfo: s.info(), Instructions: s.instructions()}, nil
}

// notification handles the client's notifications: initialized and a
// change of its roots (the roots are asked for), a cancellation (the call
// it names is stopped and gets no answer).
func (s *server) notification(m *message) {
	switch m.Method {
	case "notifications/initialized", "notifications/roots/list_changed":
		s.fetchRoots()
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			s.mu.Lock()
			cancel := s.inflight[canonID(p.RequestID)]
			if cancel != nil {
				s.dropped[canonID(p.RequestID)] = true
			}
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}

// response hands a response to the server's request that waits for it.
func (s *server) response(m *message) {
	s.mu.Lock()
	ch := s.waiting[canonID(m.ID)]
	delete(s.waiting, canonID(m.ID))
	s.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// request sends the client a request and waits for its response.
func (s *server) request(ctx context.Context, method string, params any) (*message, error) {
	s.mu.Lock()
	s.nextID++
	id := json.RawMessage(fmt.Sprintf(`"hunk-%d"`, s.nextID))
	ch := make(chan *message, 1)
	s.waiting[canonID(id)] = ch
	s.mu.Unlock()
	p, _ := json.Marshal(params)
	s.send(&message{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m, nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiting, canonID(id))
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// call runs a tools/call request; a tool's failure is an isError result,
// an unknown tool a protocol error.
func (s *server) call(ctx context.Context, m *message) (any, *rpcError) {
	p, err := m.callParams()
	if err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: tools/call's params are an object {name, arguments}"}
	}
	t := s.toolByName[p.Name]
	if t == nil {
		msg := fmt.Sprintf("unknown tool %q", p.Name)
		if s.reference {
			// The filesystem drop-in answers as the reference server does:
			// a result the model reads, not a protocol error.
			return &CallResult{IsError: true, Content: []any{map[string]any{"type": "text", "text": "[INVALID_ARGUMENT] " + msg + "; the tools are listed by tools/list"}}}, nil
		}
		return nil, &rpcError{Code: codeInvalidParams, Message: msg}
	}
	if len(p.Arguments) > 0 && p.Arguments[0] != '{' && string(p.Arguments) != "null" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: tools/call's arguments are an object"}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	id := canonID(m.ID)
	s.mu.Lock()
	s.inflight[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
	}()
	if tok := p.Meta.ProgressToken; len(tok) > 0 && string(tok) != "null" {
		ctx = tools.WithProgress(ctx, func(progress, total float64, text string) {
			params := map[string]any{"progressToken": tok, "progress": progress, "message": text}
			if total > 0 {
				params["total"] = total
			}
			b, _ := json.Marshal(params)
			s.send(&message{JSONRPC: "2.0", Method: "notifications/progress", Params: b})
		})
	}
	r := t.Call(ctx, s.session(ctx), p.Arguments)
	return callResult(t, r), nil
}

// CallResult is MCP's tool result.
type CallResult struct {
	Content           []any          `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
	Complete
}

// callResult is a tool result as MCP's: content blocks, the details as
// structuredContent, isError with hunk's code.
func callResult(t *tools.Tool, r result.ToolResult) *CallResult {
	out := &CallResult{IsError: r.IsError, StructuredContent: t.Structured(r), Content: []any{}}
	if len(r.Ignored) > 0 {
		out.Meta = map[string]any{IgnoredMeta: r.Ignored}
	}
	for _, c := range r.Content {
		switch c.Type {
		case "resource":
			out.Content = append(out.Content, map[string]any{"type": "resource",
				"resource": map[string]any{"uri": c.URI, "mimeType": c.MimeType, "blob": c.Data}})
		case "image", "audio":
			out.Content = append(out.Content, map[string]any{"type": c.Type, "data": c.Data, "mimeType": c.MimeType})
		default:
			text := c.Text
			if r.IsError && r.Code != "" {
				text = "[" + string(r.Code) + "] " + text
			}
			out.Content = append(out.Content, map[string]any{"type": "text", "text": text})
		}
	}
	return out
}
