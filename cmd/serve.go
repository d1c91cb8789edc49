package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/mcpserver"
	"github.com/hunk-dev/hunk/internal/ownstate"
	"github.com/hunk-dev/hunk/internal/readtrack"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/serve"
	"github.com/hunk-dev/hunk/internal/tools"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// serveOptions are `hunk serve` parsed: the agent's settings and the
// server's.
type serveOptions struct {
	agentOptions
	Listen, AddrFile         string
	Auth, TokenFile          string
	ApproveTokenFile         string
	TLSCert, TLSKey          string
	MaxRequest               string
	MaxSessions, MaxCalls    int
	CallTimeout, IdleTimeout time.Duration
	ShutdownTimeout          time.Duration
}

// newServeCmd builds the command; runF is its action (nil: serveRun; tests
// pass one that records the parsed options).
func newServeCmd(app *App, runF func(*App, *serveOptions) error) *cobra.Command {
	if runF == nil {
		runF = serveRun
	}
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve hunk's tools over HTTP: MCP (Streamable HTTP) and hunk call's shapes",
		Long: `Serve hunk's tools over HTTP, for agents that reach the workspace over the
network (a sandbox pod of a fleet, a remote machine):

  POST /mcp    MCP over Streamable HTTP: sessions (initialize, Mcp-Session-Id)
               for protocols 2024-11-05 to 2025-11-25, and stateless requests
               for 2026-07-28
  POST /call   one tool call, or an array, in a provider's own shape (as hunk
               call reads it; ?format= names the shape): the answer in that shape
  GET /healthz, GET /readyz   liveness and readiness (no token needed)

The tools, the policy, the history and exec's sandbox are those of hunk mcp,
over the workspace (-C). Each MCP session has its own read tracking; the
stateless requests and /call share the server's.

Who may call (--auth): token (a token from --token-file or HUNK_SERVE_TOKEN,
sent as Authorization: Bearer TOKEN, or X-Hunk-Token: TOKEN behind
agent-sandbox's router, which strips Authorization); router (agent-sandbox's
router decides, a network policy admitting only it); none. With no --auth, a
token means token; a loopback address without one gets a token hunk makes,
written to a 0600 file under hunk's state directory (the log names it; every
local user can reach 127.0.0.1, so none is only what --auth none says); any
other address needs a token or an explicit --auth.

SIGTERM or SIGINT: no new request is taken; running calls get
--shutdown-timeout to finish, then are cancelled (exec stops its command).
The access log (stderr) is a JSON object a line, without file contents,
arguments or secrets.`,
		Example: `  hunk serve -C /workspace --listen 127.0.0.1:8888
  HUNK_SERVE_TOKEN=$(cat /run/secrets/hunk) hunk serve -C /workspace --listen :8888
  hunk serve -C /workspace --listen :8888 --auth router --driver landlock`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app, o)
		},
	}
	f := c.Flags()
	addAgentFlags(f, &o.agentOptions)
	f.StringVar(&o.Listen, "listen", "127.0.0.1:8888", "the address to serve on, host:port (port 0: any free one)")
	f.StringVar(&o.AddrFile, "addr-file", "", "write the address served on to this file once ready (for --listen HOST:0)")
	f.StringVar(&o.Auth, "auth", "", "who may call: token, router or none (default: token — the one given, or on a loopback address one hunk makes)")
	f.StringVar(&o.TokenFile, "token-file", "", "the file holding the token (default: $HUNK_SERVE_TOKEN)")
	f.StringVar(&o.ApproveTokenFile, "approve-token-file", "", "serve /approvals (a person's yes to a plan a rule asked about) under the operator's token in this file, never the agent's")
	f.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this certificate file (PEM; with --tls-key)")
	f.StringVar(&o.TLSKey, "tls-key", "", "the key file of --tls-cert (PEM)")
	f.StringVar(&o.MaxRequest, "max-request", "64MiB", "the largest request body taken, e.g. 16MiB")
	f.IntVar(&o.MaxSessions, "max-sessions", 64, "the most MCP sessions held at once (0: no bound)")
	f.IntVar(&o.MaxCalls, "max-calls", 16, "the most tool calls running at once, MCP's and /call's (0: no bound)")
	f.DurationVar(&o.CallTimeout, "call-timeout", 15*time.Minute, "stop a tool call after this long (0: never; exec's --timeout still bounds its command)")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", 30*time.Minute, "end an MCP session unused for this long (0: never)")
	f.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long running calls may finish before they are cancelled")
	return c
}

// serveRun serves until a signal.
func serveRun(app *App, o *serveOptions) error {
	token, err := serveToken(o.TokenFile)
	if err != nil {
		return err
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return result.Usagef("--tls-cert and --tls-key go together")
	}
	maxBody, err := parseSize(o.MaxRequest)
	if err != nil || maxBody <= 0 {
		return result.Usagef("--max-request %q: not a size", o.MaxRequest).WithHint("sizes look like 64MiB, 512K or 1048576")
	}
	sess, set, err := app.session(&o.agentOptions)
	if err != nil {
		return err
	}
	sess.Env.Warn = func(msg string) { fmt.Fprintf(app.Stderr, "hunk serve: warning: %s\n", msg) }
	_ = set // /call answers what /mcp serves, in every shape (sess.Tools)
	sess.Exec.Hide = append(sess.Exec.Hide, hiddenTokenFile(o.TokenFile)...)
	approveToken, approvals, err := serveApprovals(o, token, sess.Env.Workspace)
	if err != nil {
		return err
	}
	sess.Exec.Hide = append(sess.Exec.Hide, hiddenTokenFile(o.ApproveTokenFile)...)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	wsDir := sess.Env.Workspace.Dir()
	return serve.Run(ctx, serve.Options{
		Listen: o.Listen, AddrFile: o.AddrFile, TLSCert: o.TLSCert, TLSKey: o.TLSKey,
		Auth: serve.Auth(o.Auth), Token: token, TokenDir: serveTokenDir(), MaxBody: maxBody, MaxCalls: o.MaxCalls,
		ShutdownTimeout: o.ShutdownTimeout, Log: app.Stderr, ApproveToken: approveToken, Approvals: approvals,
		Ready: func() error {
			if fi, err := os.Stat(wsDir); err != nil || !fi.IsDir() {
				return fmt.Errorf("the workspace %s is not there", wsDir)
			}
			if err := sess.Env.Workspace.Replaced(); err != nil {
				return errors.New(result.As(err).Msg)
			}
			return nil
		},
		MCP: mcpserver.HTTPOptions{
			Options:     mcpserver.Options{Version: Version, Tools: set, Session: sess, Log: app.Stderr},
			NewSession:  func() *tools.Session { return forkSession(sess, o.NoTrack) },
			MaxSessions: o.MaxSessions, IdleTimeout: o.IdleTimeout, CallTimeout: o.CallTimeout,
		},
		CallSession: func(name string) (*tools.Session, func()) { return namedSession(app, sess, name, o.NoTrack) },
	})
}

// serveApprovals is the operator's token of /approvals and the store it
// approves in ("", nil: no --approve-token-file). The operator's token must
// not be the agent's.
func serveApprovals(o *serveOptions, agentToken string, ws *workspace.Workspace) (string, *approval.Store, error) {
	if o.ApproveTokenFile == "" {
		return "", nil, nil
	}
	b, err := os.ReadFile(o.ApproveTokenFile)
	if err != nil {
		return "", nil, result.Usagef("--approve-token-file: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", nil, result.Usagef("--approve-token-file %s is empty", o.ApproveTokenFile).WithHint("put the operator's token in it (one line)")
	case tok == agentToken:
		return "", nil, result.Usagef("--approve-token-file holds the agent's token: the operator's must be another").
			WithHint("a model that can call tools must never be able to approve what it asked for")
	}
	if err := weakToken(tok, "--approve-token-file "+o.ApproveTokenFile); err != nil {
		return "", nil, err
	}
	st, err := ws.Approvals()
	if err != nil {
		return "", nil, result.Wrap(result.IOError, err, "--approve-token-file: no store of approvals")
	}
	return tok, st, nil
}

// serveTokenDir is where a token hunk serve makes is written: hunk's
// state directory, which exec's commands never see ("" none: the
// temporary directory).
func serveTokenDir() string {
	if b := ownstate.StateBase(os.Getenv); b != "" {
		return filepath.Join(b, "hunk", "serve")
	}
	return ""
}

// serveToken is the token of --token-file, or of HUNK_SERVE_TOKEN ("":
// none).
func serveToken(file string) (string, error) {
	if file == "" {
		tok := os.Getenv("HUNK_SERVE_TOKEN")
		if tok == "" {
			return "", nil
		}
		return tok, weakToken(tok, "HUNK_SERVE_TOKEN")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", result.Usagef("--token-file: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", result.Usagef("--token-file %s is empty", file).WithHint("put the token in it (one line)")
	}
	return tok, weakToken(tok, "--token-file "+file)
}

// minToken is the shortest token hunk serve takes, in bytes.
const minToken = 16

// weakToken refuses a token anyone could guess: one shorter than minToken
// bytes, or the placeholder of hunk's own manifests.
func weakToken(tok, from string) error {
	const hint = "make one: head -c 32 /dev/urandom | base64"
	switch {
	case strings.HasPrefix(tok, "REPLACE-WITH"):
		return result.Usagef("%s holds the manifests' placeholder %q, not a token", from, tok).WithHint(hint)
	case len(tok) < minToken:
		bytes := "bytes"
		if len(tok) == 1 {
			bytes = "byte"
		}
		return result.Usagef("%s holds a token of %d %s: hunk serve takes %d bytes or more, so that it cannot be guessed", from, len(tok), bytes, minToken).WithHint(hint)
	}
	return nil
}

// hiddenTokenFile are the paths exec's commands must not read to learn the
// server's token: the token file as named and where its links lead; and
// when it is a Kubernetes Secret's file — a link into a "..DATE" directory
// beside it, which the kubelet replaces when the Secret changes — its
// whole directory, so that the next token is hidden too.
func hiddenTokenFile(file string) []string {
	if file == "" {
		return nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	paths := []string{abs}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || real == abs {
		return paths
	}
	dir := filepath.Dir(abs)
	if rel, err := filepath.Rel(dir, real); err == nil && strings.HasPrefix(rel, "..") && !strings.HasPrefix(rel, "../") && rel != ".." {
		return []string{dir}
	}
	return append(paths, real)
}

// namedSession is a /call?session=NAME's session: base's, its changes
// tagged name and its reads tracked in the history store as hunk call
// --session NAME tracks them (done saves them).
func namedSession(app *App, base *tools.Session, name string, noTrack bool) (*tools.Session, func()) {
	env := *base.Env
	env.Session, env.Reads = name, nil
	s := *base
	s.Env = &env
	if noTrack {
		return &s, func() {}
	}
	store, err := env.Workspace.History()
	if err != nil {
		app.Warn("no read tracking for session %s: %v", name, err)
		return &s, func() {}
	}
	t, err := readtrack.Load(store, name)
	if err != nil {
		app.Warn("read tracking: %v; starting afresh", err)
	}
	env.Reads = t
	return &s, func() {
		if err := t.Save(); err != nil {
			app.Warn("read tracking: %v", err)
		}
	}
}

// forkSession is base for one MCP session: its own id (its history
// entries, its own undo) and its own read tracking.
func forkSession(base *tools.Session, noTrack bool) *tools.Session {
	env := *base.Env
	serverSession(&env, "", noTrack)
	s := *base
	s.Env = &env
	return &s
}
