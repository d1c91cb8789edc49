package serve

// Who may call, and the guards against a browser page.

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// Auth is how a server decides who may call.
type Auth string

const (
	// AuthToken: every request carries the token, as `Authorization:
	// Bearer TOKEN` or, behind agent-sandbox's router (which strips
	// Authorization), as `X-Hunk-Token: TOKEN`.
	AuthToken Auth = "token"
	// AuthRouter: agent-sandbox's router decides (its --authz-mode) and a
	// network policy admits only the router; requests that did not come
	// through it (no X-Sandbox-ID) are refused — a guard against a
	// mistake, not an attacker.
	AuthRouter Auth = "router"
	// AuthNone: anyone who reaches the address may call.
	AuthNone Auth = "none"
)

// Auths are the modes, for --auth's help.
var Auths = []Auth{AuthToken, AuthRouter, AuthNone}

// decideAuth settles the mode: unset, a token means AuthToken; on a
// loopback address without one, AuthToken with a token hunk makes (Run:
// Token stays "" here) — every local user can reach 127.0.0.1, so none is
// only ever what the operator says; a non-loopback address without a
// token is refused unless the operator chose router or none.
func (o *Options) decideAuth() error {
	switch o.Auth {
	case "":
		switch {
		case o.Token != "":
			o.Auth = AuthToken
		case loopback(o.Listen):
			o.Auth = AuthToken // Run makes the token
		default:
			return result.Usagef("hunk serve on %s, a non-loopback address, needs a token", o.Listen).
				WithHint("give one with --token-file FILE or HUNK_SERVE_TOKEN; or say --auth router (behind agent-sandbox's router, its authz and a network policy the boundary) or --auth none")
		}
	case AuthToken:
		if o.Token == "" {
			return result.Usagef("--auth token needs a token").WithHint("give it with --token-file FILE or HUNK_SERVE_TOKEN")
		}
	case AuthRouter, AuthNone:
	default:
		return result.Usagef("--auth must be token, router or none, not %q", o.Auth)
	}
	return nil
}

// makeToken makes a random token and writes it to a new file of its own
// in dir (made 0700 if missing; the temporary directory when dir is ""),
// mode 0600, created exclusively: nothing planted there is followed.
func makeToken(dir string) (token, file string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b[:])
	if dir == "" {
		dir = os.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("the token's directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "serve-token-*")
	if err != nil {
		return "", "", fmt.Errorf("writing the token: %w", err)
	}
	_, werr := f.WriteString(token + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("writing the token: %w", werr)
	}
	return token, f.Name(), nil
}

// loopback reports whether a listen address is on a loopback interface
// only (an empty host is every interface).
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorized reports whether r may call, how it was let in (for the
// access log), and what a refusal says.
func (sv *server) authorized(r *http.Request) (ok bool, how, msg string) {
	switch sv.opts.Auth {
	case AuthNone:
		return true, "none", ""
	case AuthRouter:
		if r.Header.Get("X-Sandbox-ID") == "" {
			return false, "", "Unauthorized: this hunk serve (--auth router) answers only what agent-sandbox's router forwards (X-Sandbox-ID)"
		}
		return true, "router", ""
	}
	given, via := "", ""
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, tok, _ := strings.Cut(a, " ")
		if strings.EqualFold(scheme, "Bearer") {
			given, via = strings.TrimSpace(tok), "bearer"
		}
	}
	if t := r.Header.Get("X-Hunk-Token"); given == "" && t != "" {
		given, via = t, "x-hunk-token"
	}
	if given == "" {
		return false, "", "Unauthorized: no token: send Authorization: Bearer TOKEN (or X-Hunk-Token: TOKEN behind agent-sandbox's router)"
	}
	// Hashed first: the comparison's time says nothing of the length.
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(sv.opts.Token))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return false, "", "Unauthorized: the token is not this server's"
	}
	return true, via, ""
}

// browserGuard refuses what only a browser page would send: a request
// from another origin (Origin not the request's own host), and — on a
// loopback server — a Host that is not a loopback name (DNS rebinding).
// The Host check holds on any address under --auth none too: with nothing
// else between a page and the tools, a Host must be an address or
// localhost, never a name a page can make resolve to the server.
// "" lets r through.
func browserGuard(r *http.Request, listen string, auth Auth) string {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return fmt.Sprintf("Forbidden: a request from origin %q: hunk serve answers no web page", o)
		}
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	switch {
	case host == "localhost":
	case loopback(listen) && (ip == nil || !ip.IsLoopback()):
		return fmt.Sprintf("Forbidden: Host %q on a loopback server (a DNS rebinding?): use 127.0.0.1, [::1] or localhost", r.Host)
	case auth == AuthNone && ip == nil:
		return fmt.Sprintf("Forbidden: Host %q on a server without authentication (--auth none; a DNS rebinding?): use the server's address, or give it a token", r.Host)
	}
	return ""
}
