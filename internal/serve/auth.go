package serve

// Who may call, and the guards against a browser page.

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
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

// decideAuth settles the mode: unset, a token means AuthToken, none
// AuthNone on a loopback address; a non-loopback address without a token
// is refused unless the operator chose router or none.
func (o *Options) decideAuth() error {
	switch o.Auth {
	case "":
		switch {
		case o.Token != "":
			o.Auth = AuthToken
		case loopback(o.Listen):
			o.Auth = AuthNone
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
// "" lets r through.
func browserGuard(r *http.Request, listen string) string {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return fmt.Sprintf("Forbidden: a request from origin %q: hunk serve answers no web page", o)
		}
	}
	if loopback(listen) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if ip := net.ParseIP(strings.Trim(host, "[]")); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Sprintf("Forbidden: Host %q on a loopback server (a DNS rebinding?): use 127.0.0.1, [::1] or localhost", r.Host)
		}
	}
	return ""
}
