// Package serve is `hunk serve`: hunk's tools over HTTP — MCP's Streamable
// HTTP at /mcp (mcpserver.HTTP), hunk call's provider shapes at /call —
// behind one front: who may call (auth.go), the guards against a browser
// page (a loopback server's Host, a foreign Origin), the bounds (a
// request's size, the calls running at once, a call's time), health and
// readiness, a structured access log, and an end that lets running calls
// finish, then stops them.
package serve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/call"
	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/mcpserver"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// Options configure a server.
type Options struct {
	// Listen is the address (host:port; port 0 picks one).
	Listen string
	// AddrFile, when set, receives the address listened on once the server
	// is ready (written whole, by rename).
	AddrFile string
	// TLSCert and TLSKey serve HTTPS from these files (both or neither).
	TLSCert, TLSKey string
	// Auth is who may call (see Auth); Token the token of AuthToken.
	Auth  Auth
	Token string
	// TokenDir is where a token hunk makes itself is written (a loopback
	// server given neither a token nor --auth): a file of its own, mode
	// 0600, named in the log, removed when the server ends.
	TokenDir string
	// MaxBody bounds a request's body.
	MaxBody int64
	// MaxCalls bounds the tool calls running at once, MCP's and /call's.
	MaxCalls int
	// ShutdownTimeout is how long running calls may finish once the server
	// is told to stop; then they are cancelled.
	ShutdownTimeout time.Duration
	// ApproveToken is the operator's token of /approvals (approvals.go;
	// "": not served); Approvals the workspace's store.
	ApproveToken string
	Approvals    *approval.Store
	// MCP configures /mcp; its Session is also /call's.
	MCP mcpserver.HTTPOptions
	// CallSession makes the session a /call?session=NAME runs in: its
	// changes tagged NAME, its reads tracked across calls as hunk call
	// --session tracks them; done saves them once the call is answered.
	CallSession func(name string) (s *tools.Session, done func())
	// Ready reports whether the server can serve (the workspace is there).
	Ready func() error
	// Log receives the server's messages and its access log, a JSON object
	// a line.
	Log io.Writer
}

// server is a running hunk serve.
type server struct {
	opts     Options
	log      *slog.Logger
	mcp      *mcpserver.HTTP
	slots    chan struct{} // one per call running
	bodies   chan struct{} // one per request body being read (bodies.go)
	draining atomic.Bool
}

// Run serves until ctx is done, then ends: no new request is taken, the
// running calls get ShutdownTimeout to finish, then are cancelled.
func Run(ctx context.Context, o Options) error {
	if err := o.decideAuth(); err != nil {
		return err
	}
	tokenFile := ""
	if o.Auth == AuthToken && o.Token == "" { // decided: a token of our own
		var err error
		if o.Token, tokenFile, err = makeToken(o.TokenDir); err != nil {
			return err
		}
		defer os.Remove(tokenFile)
	}
	sv := &server{opts: o, log: slog.New(slog.NewJSONHandler(o.Log, nil))}
	if o.MaxCalls > 0 {
		sv.slots = make(chan struct{}, o.MaxCalls)
		sv.bodies = make(chan struct{}, o.MaxCalls)
	}
	mo := o.MCP
	mo.MaxBody, mo.Acquire, mo.Note = o.MaxBody, sv.acquire, note
	sv.mcp = mcpserver.NewHTTP(mo)

	var cert []tls.Certificate
	if o.TLSCert != "" {
		// Read before listening: a server that says it is ready serves.
		c, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return result.Usagef("--tls-cert %s, --tls-key %s: %v", o.TLSCert, o.TLSKey, err)
		}
		cert = []tls.Certificate{c}
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.Listen, err)
	}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: cert, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	}
	calls, cancelCalls := context.WithCancelCause(context.Background())
	stopCalls := func() { cancelCalls(interrupt.Because("hunk serve shutting down")) }
	defer stopCalls()
	hs := &http.Server{Handler: sv, BaseContext: func(net.Listener) context.Context { return calls },
		ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(sv.log.Handler(), slog.LevelWarn)}
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
	}
	addr := ln.Addr().String()
	sv.log.Info("listening", "url", scheme+"://"+addr, "auth", string(o.Auth), "tools", o.MCP.Tools.Names(),
		"workspace", o.MCP.Session.Env.Workspace.Dir(), "max_calls", o.MaxCalls, "max_sessions", o.MCP.MaxSessions)
	if o.Auth == AuthNone {
		sv.log.Warn("no authentication (--auth none): anyone who can reach " + addr + " can read, write and run commands in the workspace")
	}
	if tokenFile != "" {
		sv.log.Info("no token given: hunk made one; every request carries it as Authorization: Bearer TOKEN",
			"token_file", tokenFile)
	}
	if err := writeAddr(o.AddrFile, addr); err != nil {
		ln.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return sv.shutdown(hs, stopCalls)
}

// shutdown ends the server: readiness fails, no new connection is taken,
// running calls finish within ShutdownTimeout or are cancelled.
func (sv *server) shutdown(hs *http.Server, stopCalls func()) error {
	sv.draining.Store(true)
	sv.log.Info("shutting down", "calls_running", sv.running(), "grace", sv.opts.ShutdownTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), sv.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		sv.log.Warn("cancelling the calls still running", "calls_running", sv.running())
		stopCalls() // exec stops its command; every call answers
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
	}
	sv.log.Info("stopped")
	return nil
}

// writeAddr writes addr to file (none: nothing), whole.
func writeAddr(file, addr string) error {
	if file == "" {
		return nil
	}
	// A new file of a random name (O_EXCL: nothing planted there is
	// followed), renamed over the name (a link there is replaced, not
	// followed).
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return fmt.Errorf("--addr-file: %w", err)
	}
	_, werr := f.WriteString(addr + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), file)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("--addr-file: %w", werr)
	}
	return nil
}

// acquire takes a call's slot; ok false: every slot is taken.
func (sv *server) acquire() (release func(), ok bool) {
	if sv.slots == nil {
		return func() {}, true
	}
	select {
	case sv.slots <- struct{}{}:
		return func() { <-sv.slots }, true
	default:
		return nil, false
	}
}

func (sv *server) running() int { return len(sv.slots) }

// ServeHTTP is the front: the record the access log writes, the browser
// guards, health, auth, then /mcp or /call.
func (sv *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &record{start: time.Now()}
	rw := &recorder{ResponseWriter: w, status: http.StatusOK}
	r = r.WithContext(tools.WithDecided(context.WithValue(r.Context(), recordKey{}, rec), rec.decided))
	defer sv.access(rec, rw, r)
	if msg := browserGuard(r, sv.opts.Listen, sv.opts.Auth); msg != "" {
		rec.auth = "refused"
		sv.fail(rw, r, http.StatusForbidden, msg)
		return
	}
	switch r.URL.Path {
	case "/healthz":
		rw.Header().Set("Content-Type", "application/json")
		rw.Write([]byte(`{"status":"ok"}` + "\n"))
		return
	case "/readyz":
		sv.ready(rw)
		return
	}
	if r.URL.Path == "/approvals" || strings.HasPrefix(r.URL.Path, "/approvals/") {
		sv.approvals(rw, r, rec)
		return
	}
	if ok, how, msg := sv.authorized(r); !ok {
		rec.auth = "refused"
		rw.Header().Set("WWW-Authenticate", `Bearer realm="hunk"`)
		sv.fail(rw, r, http.StatusUnauthorized, msg)
		return
	} else {
		rec.auth = how
	}
	switch r.URL.Path {
	case "/mcp", "/call":
		done, ok := sv.admitBody(rw, r)
		if !ok {
			return
		}
		defer done()
		if r.URL.Path == "/mcp" {
			sv.mcp.ServeHTTP(rw, r)
		} else {
			sv.call(rw, r)
		}
	default:
		sv.fail(rw, r, http.StatusNotFound, "Not Found: hunk serve answers /mcp (MCP, Streamable HTTP), /call (hunk call's shapes), /healthz and /readyz")
	}
}

// ready answers /readyz: 200 while the server takes calls and its
// workspace is there, 503 otherwise.
func (sv *server) ready(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	status, state := http.StatusOK, map[string]any{"status": "ready", "sessions": sv.mcp.Sessions(), "calls_running": sv.running()}
	if sv.draining.Load() {
		status, state["status"] = http.StatusServiceUnavailable, "shutting down"
	} else if sv.opts.Ready != nil {
		if err := sv.opts.Ready(); err != nil {
			status, state["status"], state["reason"] = http.StatusServiceUnavailable, "not ready", err.Error()
		}
	}
	w.WriteHeader(status)
	b, _ := json.Marshal(state)
	w.Write(append(b, '\n'))
}

// fail answers a request the front refuses: as a JSON-RPC error on /mcp,
// as hunk's error object elsewhere.
func (sv *server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	var v any = struct {
		Error any `json:"error"`
	}{struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}{status, msg}}
	if r.URL.Path == "/mcp" {
		v = struct {
			JSONRPC string    `json:"jsonrpc"`
			ID      *int      `json:"id"`
			Error   *rpcError `json:"error"`
		}{"2.0", nil, &rpcError{-32600, msg}}
	}
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// call answers POST /call: one call or an array of calls in a provider's
// shape (?format= names it; detected otherwise), the provider's answer
// out; X-Hunk-Failed says a call failed.
func (sv *server) call(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		sv.fail(w, r, http.StatusMethodNotAllowed, "Method Not Allowed: POST a tool call as JSON")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		sv.fail(w, r, http.StatusUnsupportedMediaType, "Unsupported Media Type: POST the call as Content-Type: application/json")
		return
	}
	release, ok := sv.acquire() // before the body is read: a refused call costs no memory
	if !ok {
		w.Header().Set("Retry-After", "1")
		sv.fail(w, r, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: %d calls are running (--max-calls); this one was not run: retry it", sv.opts.MaxCalls))
		return
	}
	defer release()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sv.opts.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			sv.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: a call over %d bytes (--max-request); nothing of it was done", tooBig.Limit))
			return
		}
		sv.fail(w, r, http.StatusBadRequest, "Bad Request: the body could not be read: "+err.Error())
		return
	}
	ctx := r.Context()
	if t := sv.opts.MCP.CallTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, interrupt.Because("hunk serve --call-timeout "+t.String()))
		defer cancel()
	}
	format := r.URL.Query().Get("format")
	sess := sv.opts.MCP.Session
	if name := r.URL.Query().Get("session"); name != "" && sv.opts.CallSession != nil {
		if !validSession(name) {
			sv.fail(w, r, http.StatusBadRequest, fmt.Sprintf("Bad Request: ?session=%.80q: a session's name is 1 to 64 letters, digits, '.', '_' or '-'; nothing was run", name))
			return
		}
		s, done := sv.opts.CallSession(name)
		defer done()
		sess = s
	}
	note(r.Context(), "call", "")
	// A call that runs long gets its headers early (a proxy that waits a
	// bounded time for them — agent-sandbox's router, 30 s — does not cut
	// it), X-Hunk-Failed then a trailer, and a newline every KeepAlive
	// (JSON allows whitespace before the value) until it answers.
	w.Header().Set("Content-Type", "application/json")
	early := false
	stop := mcpserver.KeepBusy(func(b []byte) {
		if !early {
			w.Header().Set("Trailer", "X-Hunk-Failed")
			early = true
		}
		w.Write(b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}, []byte("\n"))
	out, failed := call.Run(ctx, sess, body, format)
	stop()
	if failed {
		w.Header().Set("X-Hunk-Failed", "true") // a trailer once the headers went
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(out)
}

// validSession reports whether name may name a /call session.
func validSession(name string) bool {
	if len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return name != ""
}
