// Package mcpserver is hunk's MCP server: the protocol (a conn per
// connection: its era, its calls, the client's roots) over a tool set of
// package tools in one workspace, carried by a transport — stdio for `hunk
// mcp` (stdio.go). Roots the client sends may narrow the workspace, never
// widen it.
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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/execrun"
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
	Meta         map[string]any     `json:"_meta,omitempty"`
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
//
// hunk's own tools (not the filesystem drop-in, declared as the reference
// server declares them) carry Claude Code's hints: always loaded, never
// deferred behind its tool search (a model might never see them), and a
// phrase its search finds them by.
func Declaration(t *tools.Tool) *Tool {
	d := &Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.Input, OutputSchema: t.Output,
		Annotations: Annotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive,
			IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld},
	}
	if !t.Reference {
		d.Meta = map[string]any{metaAlwaysLoad: true, metaSearchHint: strings.ToLower(t.Title) + " in the workspace"}
	}
	return d
}

// Claude Code's keys of a tool's _meta.
const (
	metaAlwaysLoad = "anthropic/alwaysLoad"
	metaSearchHint = "anthropic/searchHint"
)

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
		// Capabilities are a stateless request's client capabilities.
		Capabilities map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		// ClientInfo names a stateless request's client (clients.go).
		ClientInfo struct {
			Name string `json:"name"`
		} `json:"io.modelcontextprotocol/clientInfo"`
	} `json:"_meta"`
	// InputResponses and RequestState are a stateless call's retry with
	// the person's answer (mrtr.go).
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
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

// server is what every connection shares: the options and the tool table.
type server struct {
	opts       Options
	toolByName map[string]*tools.Tool
	toolList   json.RawMessage // the tools/list result's tools
	factsList  json.RawMessage // the same, for a client that reads text and structuredContent both (clients.go)
	reference  bool            // the filesystem drop-in: answered as the reference server
}

// newServer builds the tool table of opts.
func newServer(opts Options) *server {
	s := &server{opts: opts, toolByName: map[string]*tools.Tool{}}
	var decls, facts []*Tool
	for _, t := range opts.Tools {
		s.toolByName[t.Name] = t
		s.reference = s.reference || t.Reference
		decls = append(decls, Declaration(t))
		f := Declaration(t)
		f.OutputSchema = factsSchema(f.OutputSchema, t.Reference)
		facts = append(facts, f)
	}
	byName := func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) } // by name, as the SDK lists
	slices.SortFunc(decls, byName)
	slices.SortFunc(facts, byName)
	s.toolList, _ = json.Marshal(decls)
	s.factsList, _ = json.Marshal(facts)
	return s
}

// conn is one connection's protocol state: a stdio connection, an HTTP
// session (legacy era), or one stateless HTTP request.
type conn struct {
	*server
	base *tools.Session // the session its calls run in, before the client's roots
	// send writes a message on the connection's own stream (the server's
	// requests to the client: roots/list); nil when it has none (HTTP),
	// and the client's roots are then not asked for.
	send func(v any)

	mu       sync.Mutex
	era      era                           // pinned by the first request
	begun    bool                          // a legacy connection's initialize was answered
	roots    bool                          // the client declared the roots capability
	narrowed *tools.Session                // the session under the client's roots; nil: the base
	ready    chan struct{}                 // closed once the roots asked for are known; nil: none asked
	inflight map[string]context.CancelFunc // requests being answered, by id (canonID)
	dropped  map[string]bool               // requests the client cancelled: no answer
	waiting  map[string]chan *message      // the server's requests to the client, by id
	nextID   int
	elicit   bool // the client declared elicitation, and requests can be sent to it
	// elicitOnCall: the client declared elicitation on a connection with
	// no stream of its own (an HTTP session): it is asked on the event
	// stream of the call that asks, and answers by a POST of its own.
	elicitOnCall bool
	allowed      map[string]bool // what the person allowed for this session (elicit.go)
	client       string          // the legacy client's name (initialize's clientInfo)
}

// newConn is a connection of s whose calls run in base.
func (s *server) newConn(base *tools.Session, send func(any)) *conn {
	return &conn{server: s, base: base, send: send, inflight: map[string]context.CancelFunc{},
		dropped: map[string]bool{}, waiting: map[string]chan *message{}, allowed: map[string]bool{}}
}

func (s *server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "hunk mcp: "+format+"\n", args...)
	}
}

// handle answers one message: the response to a request, nil for a
// notification or a response to the server's own request.
func (c *conn) handle(ctx context.Context, m *message, notify func(any)) *message {
	if m.Method == "" {
		c.response(m)
		return nil
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		c.notification(m)
		return nil
	}
	reply := &message{JSONRPC: "2.0", ID: m.ID}
	if strings.HasPrefix(m.Method, "notifications/") {
		// A notification sent with an id: acted on, and told.
		c.notification(m)
		reply.Error = &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s is a notification: send it without an id (done all the same)", m.Method)}
		return reply
	}
	if m.Method == "ping" {
		// Answered in every era, with the era's envelope or without it
		// (the go-sdk pings bare before its calls, and takes a refusal
		// for a dead server), pinning nothing.
		reply.Result = json.RawMessage("{}")
		return reply
	}
	e, err := requestEra(m.Params)
	if err == nil {
		err = c.pin(e, m.Method)
	}
	if err == nil {
		err = statelessOnly(e, m.Method)
	}
	if err == nil && e == eraLegacy && m.Method == "tools/call" && !c.hasBegun() {
		// The legacy protocol begins with initialize (its version and
		// capabilities decide what follows): no tool runs before it (a
		// listing or a ping may be answered).
		err = &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s before initialize: a session begins with initialize (or send %s's _meta with every request)", m.Method, statelessVersion)}
	}
	var res any
	if err == nil {
		res, err = c.answer(ctx, m, e, notify)
	}
	if c.cancelled(m.ID) {
		return nil // a request the client cancelled gets no answer
	}
	if err == nil && e == eraStateless {
		res = c.complete(res)
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

// hasBegun reports whether the connection's initialize was answered.
func (c *conn) hasBegun() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.begun
}

// cancelled reports whether the client cancelled request id (once).
func (c *conn) cancelled(id json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.dropped[canonID(id)]
	delete(c.dropped, canonID(id))
	return was
}

// answer answers a request of era e.
func (c *conn) answer(ctx context.Context, m *message, e era, notify func(any)) (any, *rpcError) {
	if len(m.Params) == 0 || string(m.Params) == "null" {
		switch m.Method {
		case "initialize", "tools/call":
			return nil, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Invalid Request: %s needs params", m.Method)}
		}
	}
	switch m.Method {
	case "initialize":
		return c.initialize(m.Params)
	case "server/discover":
		return c.discover(), nil
	case "tools/list":
		list := c.toolList
		if c.factsOnly(m, e) {
			list = c.factsList
		}
		if e == eraStateless {
			return &ListResult{Tools: list, Cache: &Cache{TTLMs: listTTL, CacheScope: "private"}}, nil
		}
		return &ListResult{Tools: list}, nil
	case "tools/call":
		res, err := c.call(ctx, m, notify)
		if r, ok := res.(*CallResult); ok && c.factsOnly(m, e) {
			r.StructuredContent = factsOf(r.StructuredContent)
		}
		return res, err
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + m.Method}
}

// initialize answers the handshake: the version (the client's, when served;
// the newest otherwise), the tools capability, hunk and its instructions.
func (c *conn) initialize(params json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Roots       json.RawMessage `json:"roots"`
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: initialize's params are an object {protocolVersion, capabilities, clientInfo}"}
	}
	version := protocolVersions[0]
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	c.mu.Lock()
	c.roots = c.send != nil && len(p.Capabilities.Roots) > 0 && string(p.Capabilities.Roots) != "null"
	declared := len(p.Capabilities.Elicitation) > 0 && string(p.Capabilities.Elicitation) != "null"
	c.elicit, c.elicitOnCall = c.send != nil && declared, c.send == nil && declared
	c.begun = true
	c.client = clientOfInitialize(params)
	c.mu.Unlock()
	return InitializeResult{ProtocolVersion: version, ServerInfo: c.info(), Instructions: c.instructions()}, nil
}

// notification handles the client's notifications: initialized and a
// change of its roots (the roots are asked for), a cancellation (the call
// it names is stopped and gets no answer).
func (c *conn) notification(m *message) {
	switch m.Method {
	case "notifications/initialized", "notifications/roots/list_changed":
		c.fetchRoots()
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			c.mu.Lock()
			cancel := c.inflight[canonID(p.RequestID)]
			if cancel != nil {
				c.dropped[canonID(p.RequestID)] = true
			}
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}

// response hands a response to the server's request that waits for it.
func (c *conn) response(m *message) {
	c.mu.Lock()
	ch := c.waiting[canonID(m.ID)]
	delete(c.waiting, canonID(m.ID))
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// request sends the client a request and waits for its response.
func (c *conn) request(ctx context.Context, method string, params any) (*message, error) {
	return c.requestOn(ctx, c.send, method, params)
}

// requestOn sends the client a request on send (the connection's stream,
// or a call's event stream) and waits for its response.
func (c *conn) requestOn(ctx context.Context, send func(any), method string, params any) (*message, error) {
	c.mu.Lock()
	c.nextID++
	id := json.RawMessage(fmt.Sprintf(`"hunk-%d"`, c.nextID))
	ch := make(chan *message, 1)
	c.waiting[canonID(id)] = ch
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	send(&message{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiting, canonID(id))
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// call runs a tools/call request; a tool's failure is an isError result,
// an unknown tool a protocol error.
func (c *conn) call(ctx context.Context, m *message, notify func(any)) (any, *rpcError) {
	p, err := m.callParams()
	if err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "Invalid params: tools/call's params are an object {name, arguments}"}
	}
	t := c.toolByName[p.Name]
	if t == nil && c.base != nil {
		if err := c.base.Guard(p.Name); err != nil {
			// A tool hunk has and the person running it does not serve:
			// a result the model reads (what it may use instead).
			return callResult(&tools.Tool{}, result.Failure(err, nil)), nil
		}
	}
	if t == nil {
		msg := fmt.Sprintf("unknown tool %q", p.Name)
		if c.reference {
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
	c.mu.Lock()
	c.inflight[id] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.inflight, id)
		c.mu.Unlock()
	}()
	if tok := p.Meta.ProgressToken; notify != nil && len(tok) > 0 && string(tok) != "null" {
		ctx = tools.WithProgress(ctx, func(progress, total float64, text string) {
			params := map[string]any{"progressToken": tok, "progress": progress, "message": text}
			if total > 0 {
				params["total"] = total
			}
			b, _ := json.Marshal(params)
			notify(&message{JSONRPC: "2.0", Method: "notifications/progress", Params: b})
		})
	}
	s := c.session(ctx)
	c.mu.Lock()
	stateless := c.era == eraStateless
	onCall := c.elicitOnCall && !stateless && notify != nil
	c.mu.Unlock()
	var rt *roundTrip
	if onCall {
		cp := *s
		cp.Confirm = func(ctx context.Context, p execrun.Plan) (bool, error) { return c.confirmOn(ctx, notify, p) }
		cp.ConfirmWrite = func(ctx context.Context, text, _ string) (bool, error) { return c.confirmWriteOn(ctx, notify, text) }
		s = &cp
	}
	if stateless {
		if rt = newRoundTrip(t.Name, p, time.Now()); rt != nil {
			cp := *s
			cp.Confirm, cp.ConfirmWrite = rt.confirm, rt.confirmWrite
			s = &cp
		}
	}
	r := t.Call(ctx, s, p.Arguments)
	if rt != nil && rt.needed() != nil {
		return rt.needed(), nil
	}
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
