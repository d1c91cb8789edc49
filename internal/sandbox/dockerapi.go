package sandbox

// A small client for the Docker Engine API (also served by Podman's
// Docker-compatible socket), written here instead of importing
// github.com/moby/moby/client.
//
// Why not the official client: hunk is spawned once per agent tool call, and
// every package linked into the binary runs its init on every start — `hunk
// read` included. github.com/moby/moby/client pulls in
// distribution/reference and opencontainers/go-digest (regular expressions
// compiled at init) and OpenTelemetry, which cost about 2.3 ms on every hunk
// invocation (measured with GODEBUG=inittrace=1; hunk --version is 3.3 ms in
// total), breaking the start-up budget. So does github.com/moby/moby/api/
// types/container (it imports the image spec and go-digest). What we do use
// from moby costs nothing at start-up: api/types/mount (the Mount type) and
// api/pkg/stdcopy (the stdout/stderr demultiplexer). The official client is
// still used by the tests, to check what this one did against the engine.
//
// The client speaks unversioned paths (the engine's current API version),
// which Docker and Podman both serve, so no version negotiation round trip is
// needed; the request bodies use only fields that have been stable since API
// 1.25.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// defaultDockerHost is where the engine listens when DOCKER_HOST is unset.
const defaultDockerHost = "unix:///var/run/docker.sock"

// engine is a connection to one Docker Engine API endpoint.
type engine struct {
	host   string // as given (DOCKER_HOST), for messages
	scheme string // http or https
	net    string // unix or tcp
	addr   string // host:port for tcp, the socket path for unix
	tls    *tls.Config
}

// engineError is a non-2xx answer from the engine.
type engineError struct {
	Status int
	Msg    string
}

func (e *engineError) Error() string { return e.Msg }

// unreachableError says the engine could not be reached at all.
type unreachableError struct {
	Host string
	Err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the Docker engine at %s: %v", e.Host, e.Err)
}
func (e *unreachableError) Unwrap() error { return e.Err }

func isStatus(err error, code int) bool {
	var ee *engineError
	return errors.As(err, &ee) && ee.Status == code
}

// newEngine connects to DOCKER_HOST (unix:// or tcp://, with TLS when
// DOCKER_TLS_VERIFY or DOCKER_CERT_PATH is set), else the default socket.
func newEngine(dockerHost string) (*engine, error) {
	if dockerHost == "" {
		dockerHost = defaultDockerHost
	}
	u, err := url.Parse(dockerHost)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("DOCKER_HOST %q: want unix:///path or tcp://host:port", dockerHost)
	}
	e := &engine{host: dockerHost, scheme: "http"}
	switch u.Scheme {
	case "unix":
		e.net = "unix"
		e.addr = u.Path
		if e.addr == "" {
			e.addr = u.Host + u.Path
		}
	case "tcp", "http", "https":
		e.net = "tcp"
		e.addr = u.Host
		if !strings.Contains(e.addr, ":") {
			e.addr += ":2375"
		}
		if u.Scheme == "https" || os.Getenv("DOCKER_TLS_VERIFY") != "" || os.Getenv("DOCKER_CERT_PATH") != "" {
			cfg, err := dockerTLS()
			if err != nil {
				return nil, err
			}
			e.tls, e.scheme = cfg, "https"
		}
	default:
		return nil, fmt.Errorf("DOCKER_HOST %q: unsupported scheme %q (want unix or tcp)", dockerHost, u.Scheme)
	}
	return e, nil
}

// dockerTLS reads ca.pem, cert.pem and key.pem from DOCKER_CERT_PATH
// (default ~/.docker), as the docker CLI does.
func dockerTLS() (*tls.Config, error) {
	dir := os.Getenv("DOCKER_CERT_PATH")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".docker")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca, err := os.ReadFile(filepath.Join(dir, "ca.pem")); err == nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		cfg.RootCAs = pool
	}
	if _, err := os.Stat(filepath.Join(dir, "cert.pem")); err == nil {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		if err != nil {
			return nil, fmt.Errorf("docker TLS certificates in %s: %v", dir, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if os.Getenv("DOCKER_TLS_VERIFY") == "" {
		cfg.InsecureSkipVerify = true
	}
	return cfg, nil
}

func (e *engine) dialRaw(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, e.net, e.addr)
	if err != nil {
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	return c, nil
}

// dial opens a fresh connection for a hijacked stream (TLS when configured).
func (e *engine) dial(ctx context.Context) (net.Conn, error) {
	c, err := e.dialRaw(ctx)
	if err != nil || e.tls == nil {
		return c, err
	}
	cfg := e.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(e.addr)
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	return tc, nil
}

func (e *engine) url(path string, q url.Values) string {
	s := e.scheme + "://docker" + path
	if e.tls != nil {
		s = e.scheme + "://" + e.addr + path
	}
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// do sends one request with an optional JSON body and decodes a JSON answer
// into out (when out is non-nil).
func (e *engine) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	resp, err := e.send(ctx, method, path, q, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %v", method, path, err)
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// send sends one request on a connection of its own and returns the
// response for a 2xx status, else an *engineError carrying the engine's
// message. Closing the response body closes the connection; cancelling ctx
// closes it too. (No http.Client: its Transport, with HTTP/2 and connection
// pooling, would add megabytes to a binary started once per tool call, for
// the handful of requests a run makes over a local socket.)
func (e *engine) send(ctx context.Context, method, path string, q url.Values, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequest(method, e.url(path, q), body)
	if err != nil {
		return nil, err
	}
	req.Host = "docker"
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	conn, err := e.dial(ctx)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &connBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, readEngineError(resp)
	}
	return resp, nil
}

// connBody is a response body that owns its connection.
type connBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
}

func (b *connBody) Close() error {
	b.stop()
	b.ReadCloser.Close()
	return b.conn.Close()
}

func readEngineError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var m struct {
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		msg = m.Message
	}
	if msg == "" {
		msg = resp.Status
	}
	return &engineError{Status: resp.StatusCode, Msg: msg}
}

// hijack sends a request that the engine answers by upgrading the
// connection to a raw stream (attach, exec start) and returns the stream.
func (e *engine) hijack(ctx context.Context, path string, q url.Values, in any) (*hijacked, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, err
		}
	}
	conn, err := e.dial(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, e.url(path, q), bytes.NewReader(body))
	if err != nil {
		conn.Close()
		return nil, err
	}
	req.Host = "docker"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		defer conn.Close()
		return nil, readEngineError(resp)
	}
	return &hijacked{Conn: conn, r: br}, nil
}

// hijacked is an upgraded connection: reads come through the buffered
// reader that parsed the HTTP answer.
type hijacked struct {
	net.Conn
	r *bufio.Reader
}

func (h *hijacked) Read(p []byte) (int, error) { return h.r.Read(p) }

// CloseWrite ends stdin while keeping the output flowing.
func (h *hijacked) CloseWrite() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ping checks that the engine answers.
func (e *engine) ping(ctx context.Context) error {
	resp, err := e.send(ctx, http.MethodGet, "/_ping", nil, nil, "")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
