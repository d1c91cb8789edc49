package mcpserver

// The Streamable HTTP transport (hunk serve): one endpoint, one POST per
// message (or batch). Legacy era: initialize opens a session (its
// Mcp-Session-Id names it on every later request; DELETE or idling ends
// it), a conn with a tools.Session of its own (its own read tracking).
// Stateless era (2026-07-28): each POST is a conn of its own in the
// server's one session, its headers mirroring its body. An answer is one
// JSON body, or for a call an event stream (its headers at once, so that a
// proxy does not cut a long call; its progress; its answer). There is
// no stream of the server's own (GET is 405): over HTTP the client's roots
// are not asked for — they name the client's files, not the server's.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/tools"
)

// HTTPOptions configure the Streamable HTTP transport. Options.Session is
// the session of the stateless era's requests.
type HTTPOptions struct {
	Options
	// NewSession makes the session of a new legacy-era MCP session (read
	// tracking of its own).
	NewSession func() *tools.Session
	// MaxSessions bounds the legacy sessions held at once; 0: no bound.
	MaxSessions int
	// IdleTimeout ends a session no request has used for this long; 0: never.
	IdleTimeout time.Duration
	// CallTimeout bounds one tools/call; 0: no bound.
	CallTimeout time.Duration
	// MaxBody bounds one POST's body; 0: no bound.
	MaxBody int64
	// Acquire takes a slot for one tools/call (release gives it back); ok
	// false refuses the call: too many are running. nil: no bound.
	Acquire func() (release func(), ok bool)
	// Note tells the access log what a request was: its method and, for a
	// call, its tool.
	Note func(ctx context.Context, method, tool string)
}

// HTTP is the Streamable HTTP transport: an http.Handler of the MCP
// endpoint.
type HTTP struct {
	s    *server
	opts HTTPOptions

	mu       sync.Mutex
	sessions map[string]*session
}

// session is a legacy-era MCP session over HTTP.
type session struct {
	*conn
	ctx    context.Context // done when the session ends: its calls stop
	end    context.CancelFunc
	last   time.Time // when a request last used it
	active int       // its requests being answered
}

// Headers of the transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerVersion  = "Mcp-Protocol-Version"
	headerMethod   = "Mcp-Method"
	headerName     = "Mcp-Name"
	codeNoSession  = -32001 // the session is unknown: initialize again
	codeBusy       = -32000 // too many sessions or calls: retry later
	codeHeaderDiff = -32020 // a stateless request's headers differ from its body
)

// NewHTTP is the transport of opts.
func NewHTTP(opts HTTPOptions) *HTTP {
	return &HTTP{s: newServer(opts.Options), opts: opts, sessions: map[string]*session{}}
}

// Sessions counts the legacy sessions held now.
func (h *HTTP) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expireLocked(time.Now())
	return len(h.sessions)
}

// ServeHTTP answers POST (messages) and DELETE (a session's end).
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest,
			"Method Not Allowed: POST a message (or DELETE a session); hunk serve opens no stream of its own")
	}
}

// httpError writes a JSON-RPC error response with an HTTP status.
func httpError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(errorReply(id, code, msg))
}

func (h *HTTP) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, nil, codeInvalidRequest, "Unsupported Media Type: POST a JSON-RPC message as Content-Type: application/json")
		return
	}
	if !accepts(r.Header.Values("Accept")) {
		httpError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "Not Acceptable: a client's Accept lists both application/json and text/event-stream")
		return
	}
	body, err := h.read(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("Request Entity Too Large: a message over %d bytes (--max-request); nothing of it was done", tooBig.Limit))
			return
		}
		httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: the body could not be read: "+err.Error())
		return
	}
	if reply := reject(body); reply != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(reply)
		return
	}
	msgs, batch := parseBody(body)
	if len(msgs) == 0 {
		httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: no message in the body")
		return
	}
	if v := r.Header.Get(headerVersion); v != "" && !slices.Contains(allVersions(), v) {
		httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, fmt.Sprintf("Bad Request: unsupported %s %q: hunk serves %s", headerVersion, v, strings.Join(allVersions(), ", ")))
		return
	}
	if h.opts.Note != nil && !batch {
		h.opts.Note(r.Context(), msgs[0].Method, toolName(msgs[0]))
	}
	if statelessBody(r, msgs) {
		if status, id, code, msg := checkStateless(r.Header, msgs, batch); status != 0 {
			httpError(w, status, id, code, msg)
			return
		}
		h.answer(w, r.Context(), h.s.newConn(h.opts.Session, nil), msgs, batch)
		return
	}
	sess, created, fail := h.session(r, msgs, batch)
	if fail != nil {
		fail(w)
		return
	}
	defer h.release(sess)
	ctx, stop := context.WithCancelCause(r.Context())
	defer stop(nil)
	defer context.AfterFunc(sess.ctx, func() { stop(interrupt.Because("its MCP session ended")) })()
	if created != "" {
		w.Header().Set(headerSession, created)
	}
	if ok := h.answer(w, ctx, sess.conn, msgs, batch); !ok && created != "" {
		h.drop(created) // an initialize that failed opens no session
	}
}

// read reads the body, at most MaxBody bytes.
func (h *HTTP) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := r.Body
	if h.opts.MaxBody > 0 {
		body = http.MaxBytesReader(w, body, h.opts.MaxBody)
	}
	return io.ReadAll(body)
}

// accepts reports whether an Accept header lists what a Streamable HTTP
// client must take: JSON and event streams (*/* counts for both).
func accepts(values []string) bool {
	var json, stream bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			json = json || mt == "application/json" || mt == "application/*" || mt == "*/*"
			stream = stream || mt == "text/event-stream" || mt == "text/*" || mt == "*/*"
		}
	}
	return json && stream
}

// parseBody is the body's messages (reject passed it): one, or a batch's.
func parseBody(body []byte) (msgs []*message, batch bool) {
	body = bytes.TrimSpace(body)
	if body[0] == '[' {
		json.Unmarshal(body, &msgs)
		return msgs, true
	}
	var m message
	if json.Unmarshal(body, &m) != nil {
		return nil, false
	}
	return []*message{&m}, false
}

// toolName is a tools/call's tool ("" for other messages).
func toolName(m *message) string {
	if m.Method != "tools/call" {
		return ""
	}
	if p, err := m.callParams(); err == nil {
		return p.Name
	}
	return ""
}

// isRequest reports whether m is a request (it gets an answer).
func isRequest(m *message) bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" && !strings.HasPrefix(m.Method, "notifications/")
}

// statelessBody reports whether a POST is of the stateless era: its
// version header says so, or a request's _meta does.
func statelessBody(r *http.Request, msgs []*message) bool {
	if r.Header.Get(headerVersion) >= statelessVersion {
		return true
	}
	for _, m := range msgs {
		if e, _ := requestEra(m.Params); e == eraStateless {
			return true
		}
	}
	return false
}

// checkStateless checks a stateless POST's headers against its body: one
// message, the version header equal to its _meta's, Mcp-Method and (for a
// call) Mcp-Name equal to its method and tool. A status of 0: it passes.
func checkStateless(hd http.Header, msgs []*message, batch bool) (status int, id json.RawMessage, code int, msg string) {
	if batch {
		return http.StatusBadRequest, nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: protocol %s has no batches: POST one message", statelessVersion)
	}
	m := msgs[0]
	if !isRequest(m) || m.Method == "ping" {
		return 0, nil, 0, "" // a ping is answered in every era, bare or not
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	var asked string
	json.Unmarshal(p.Meta[metaVersion], &asked)
	switch v := hd.Get(headerVersion); {
	case asked == "":
		return http.StatusBadRequest, m.ID, codeInvalidParams, fmt.Sprintf("Invalid params: a %s request carries _meta %q", statelessVersion, metaVersion)
	case v == "":
		return http.StatusBadRequest, m.ID, codeHeaderDiff, fmt.Sprintf("the %s header is required beside _meta %q", headerVersion, metaVersion)
	case v != asked:
		return http.StatusBadRequest, m.ID, codeHeaderDiff, fmt.Sprintf("the %s header %q differs from the request's _meta %q %q", headerVersion, v, metaVersion, asked)
	}
	if got := hd.Get(headerMethod); got != m.Method {
		return http.StatusBadRequest, m.ID, codeHeaderDiff, fmt.Sprintf("the %s header %q differs from the request's method %q", headerMethod, got, m.Method)
	}
	if m.Method == "tools/call" {
		if got, name := hd.Get(headerName), toolName(m); got != name {
			return http.StatusBadRequest, m.ID, codeHeaderDiff, fmt.Sprintf("the %s header %q differs from the call's tool %q", headerName, got, name)
		}
	}
	return 0, nil, 0, ""
}

// session finds the legacy session a POST belongs to, or opens one for an
// initialize (created: its id). fail answers a POST that has none.
func (h *HTTP) session(r *http.Request, msgs []*message, batch bool) (s *session, created string, fail func(http.ResponseWriter)) {
	initialize := slices.ContainsFunc(msgs, func(m *message) bool { return m.Method == "initialize" })
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.expireLocked(now)
	if initialize {
		if batch {
			return nil, "", func(w http.ResponseWriter) {
				httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Invalid Request: initialize is sent alone, not in a batch")
			}
		}
		if n := h.opts.MaxSessions; n > 0 && len(h.sessions) >= n {
			return nil, "", func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "5")
				httpError(w, http.StatusServiceUnavailable, msgs[0].ID, codeBusy, fmt.Sprintf("too many sessions: this hunk serve holds at most %d (--max-sessions); end one (DELETE with its %s) or wait for one to idle out", n, headerSession))
			}
		}
		id := rand.Text()
		ctx, end := context.WithCancel(context.Background())
		s := &session{conn: h.s.newConn(h.opts.NewSession(), nil), ctx: ctx, end: end, last: now, active: 1}
		h.sessions[id] = s
		return s, id, nil
	}
	id := r.Header.Get(headerSession)
	if id == "" {
		return nil, "", func(w http.ResponseWriter) {
			httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, fmt.Sprintf("Bad Request: no %s header: initialize first, then send its %s with every request (or send protocol %s requests, which need none)", headerSession, headerSession, statelessVersion))
		}
	}
	s = h.sessions[id]
	if s == nil {
		return nil, "", func(w http.ResponseWriter) {
			httpError(w, http.StatusNotFound, nil, codeNoSession, "Not Found: no such session (it ended, idled out, or the server restarted): initialize again")
		}
	}
	s.active++
	s.last = now
	return s, "", nil
}

// release marks one of s's requests answered.
func (h *HTTP) release(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.active--
	s.last = time.Now()
}

// drop ends session id: its running calls stop.
func (h *HTTP) drop(id string) bool {
	h.mu.Lock()
	s := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if s != nil {
		s.end()
	}
	return s != nil
}

// expireLocked ends the sessions idle longer than IdleTimeout (h.mu held).
func (h *HTTP) expireLocked(now time.Time) {
	if h.opts.IdleTimeout <= 0 {
		return
	}
	for id, s := range h.sessions {
		if s.active == 0 && now.Sub(s.last) > h.opts.IdleTimeout {
			delete(h.sessions, id)
			s.end()
		}
	}
}

// delete ends the session the request names.
func (h *HTTP) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(headerSession)
	if id == "" {
		httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, fmt.Sprintf("Bad Request: DELETE ends the session its %s header names", headerSession))
		return
	}
	if !h.drop(id) {
		httpError(w, http.StatusNotFound, nil, codeNoSession, "Not Found: no such session")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// answer answers a POST's messages on c: 202 when none is a request; an
// event stream for a call; JSON otherwise. ok
// reports whether every request succeeded.
func (h *HTTP) answer(w http.ResponseWriter, ctx context.Context, c *conn, msgs []*message, batch bool) (ok bool) {
	if !slices.ContainsFunc(msgs, isRequest) {
		for _, m := range msgs {
			c.handle(ctx, m, nil)
		}
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	if m := msgs[0]; !batch && m.Method == "tools/call" && isRequest(m) {
		return h.stream(w, ctx, c, m)
	}
	var replies []*message
	ok = true
	for _, m := range msgs {
		if r := h.handle(ctx, c, m, nil); r != nil {
			replies = append(replies, r)
			ok = ok && r.Error == nil
		}
	}
	w.Header().Set("Content-Type", "application/json")
	var b []byte
	switch {
	case len(replies) == 0:
		w.WriteHeader(http.StatusNoContent) // the client cancelled its request
		return false
	case batch:
		b, _ = json.Marshal(replies)
	default:
		b, _ = json.Marshal(replies[0])
	}
	w.Write(append(b, '\n'))
	return ok
}

// EarlyHeaders is how long a call's answer holds its headers back: a call
// done by then gets them with its answer; a longer one gets them then — a
// proxy that waits a bounded time for them (agent-sandbox's router: 30 s)
// does not cut it. KeepAlive is how often its stream then carries a
// comment while it runs, for proxies that cut a quiet connection.
var (
	EarlyHeaders = time.Second
	KeepAlive    = 15 * time.Second
)

// stream answers a call as an event stream: its progress notifications,
// then its response; its headers after EarlyHeaders and a comment every
// KeepAlive while it runs longer.
func (h *HTTP) stream(w http.ResponseWriter, ctx context.Context, c *conn, m *message) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	flusher, _ := w.(http.Flusher)
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		w.Write(b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send := func(v any) {
		if b, err := json.Marshal(v); err == nil {
			write(fmt.Appendf(nil, "event: message\ndata: %s\n\n", b))
		}
	}
	stop := KeepBusy(write, []byte(": keep-alive\n\n"))
	r := h.handle(ctx, c, m, send)
	stop()
	if r != nil {
		send(r)
	}
	return r != nil && r.Error == nil
}

// KeepBusy keeps a long answer from being cut by a proxy: after
// EarlyHeaders it writes nothing (the headers go), then beat every
// KeepAlive, until stop — which returns once nothing more is written.
func KeepBusy(write func([]byte), beat []byte) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		wait, next := EarlyHeaders, []byte{}
		for {
			t := time.NewTimer(wait)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
				write(next)
				wait, next = KeepAlive, beat
			}
		}
	}()
	return func() { close(done); <-ended }
}

// handle answers one message on c, a tools/call within the bounds: a slot
// among the calls running (Acquire) and CallTimeout.
func (h *HTTP) handle(ctx context.Context, c *conn, m *message, notify func(any)) *message {
	if m.Method == "tools/call" && isRequest(m) {
		if h.opts.Acquire != nil {
			release, ok := h.opts.Acquire()
			if !ok {
				return &message{JSONRPC: "2.0", ID: m.ID, Error: &rpcError{Code: codeBusy,
					Message: "too many calls running at once (--max-calls): this call was not run; retry it"}}
			}
			defer release()
		}
		if t := h.opts.CallTimeout; t > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, t, interrupt.Because("hunk serve --call-timeout "+t.String()))
			defer cancel()
		}
	}
	return c.handle(ctx, m, notify)
}
