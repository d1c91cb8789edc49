package docker

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
// 1.25. For the same start-up reason it uses no http.Client (its Transport,
// with HTTP/2, cost 0.4 ms per start) and no in-process TLS (0.2 ms): each
// request gets a connection of its own, and TLS or ssh engines are reached
// through `docker system dial-stdio`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// defaultDockerHost is where the engine listens when DOCKER_HOST is unset.
const defaultDockerHost = "unix:///var/run/docker.sock"

// engine is a connection to one Docker Engine API endpoint.
type engine struct {
	host string // as given (DOCKER_HOST), for messages
	net  string // unix, tcp, or "helper" (docker system dial-stdio)
	addr string // host:port for tcp, the socket path for unix
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

// newEngine connects to DOCKER_HOST: unix:///path or plain tcp://host:port
// directly; an engine behind TLS (DOCKER_TLS_VERIFY or DOCKER_CERT_PATH set)
// or ssh:// through the docker CLI's `docker system dial-stdio`, which knows
// certificates and ssh as the CLI does. (Speaking TLS in-process would link
// crypto/tls's client and x509 verification into hunk: about 1 MB, and
// 0.2 ms on every start of every hunk command, for the rare remote engine.)
// Empty: the default socket.
func newEngine(dockerHost string) (*engine, error) {
	if dockerHost == "" {
		dockerHost = defaultDockerHost
	}
	u, err := url.Parse(dockerHost)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("DOCKER_HOST %q: want unix:///path, tcp://host:port or ssh://host", dockerHost)
	}
	e := &engine{host: dockerHost}
	switch u.Scheme {
	case "unix":
		e.net = "unix"
		e.addr = u.Path
		if e.addr == "" {
			e.addr = u.Host + u.Path
		}
	case "tcp", "http":
		e.net = "tcp"
		e.addr = u.Host
		if !strings.Contains(e.addr, ":") {
			e.addr += ":2375"
		}
		if os.Getenv("DOCKER_TLS_VERIFY") != "" || os.Getenv("DOCKER_CERT_PATH") != "" {
			e.net = "helper"
		}
	case "https", "ssh":
		e.net = "helper"
	default:
		return nil, fmt.Errorf("DOCKER_HOST %q: unsupported scheme %q (want unix, tcp or ssh)", dockerHost, u.Scheme)
	}
	return e, nil
}

// dialRaw connects to the engine.
func (e *engine) dialRaw(ctx context.Context) (net.Conn, error) {
	if e.net == "helper" {
		return dialStdio(ctx, e.host)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, e.net, e.addr)
	if err != nil {
		return nil, &unreachableError{Host: e.host, Err: err}
	}
	return c, nil
}

// dialStdio connects through `docker system dial-stdio` (DOCKER_HOST and
// the TLS variables reach it through the environment).
func dialStdio(ctx context.Context, host string) (net.Conn, error) {
	cli, err := exec.LookPath("docker")
	if err != nil {
		return nil, &unreachableError{Host: host, Err: fmt.Errorf("a TLS or ssh engine is reached through the docker CLI (docker system dial-stdio), which is not installed: %v", err)}
	}
	cmd := exec.Command(cli, "system", "dial-stdio")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, &unreachableError{Host: host, Err: err}
	}
	return &stdioConn{cmd: cmd, in: in, out: out, stderr: &stderr, host: host}, nil
}

// stdioConn is a connection to the engine over a helper's stdin and stdout.
type stdioConn struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *strings.Builder
	host   string
	once   sync.Once
}

func (c *stdioConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if err == io.EOF && n == 0 && c.stderr.Len() > 0 {
		return 0, &unreachableError{Host: c.host, Err: errors.New(strings.TrimSpace(c.stderr.String()))}
	}
	return n, err
}
func (c *stdioConn) Write(p []byte) (int, error) { return c.in.Write(p) }
func (c *stdioConn) CloseWrite() error           { return c.in.Close() }
func (c *stdioConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		if c.cmd.Process != nil {
			_ = c.cmd.Process.Kill()
		}
		_ = c.cmd.Wait()
	})
	return nil
}
func (c *stdioConn) LocalAddr() net.Addr              { return stdioAddr{} }
func (c *stdioConn) RemoteAddr() net.Addr             { return stdioAddr{} }
func (c *stdioConn) SetDeadline(time.Time) error      { return nil }
func (c *stdioConn) SetReadDeadline(time.Time) error  { return nil }
func (c *stdioConn) SetWriteDeadline(time.Time) error { return nil }

type stdioAddr struct{}

func (stdioAddr) Network() string { return "stdio" }
func (stdioAddr) String() string  { return "docker system dial-stdio" }

// dial opens a fresh connection (one per request or stream).
func (e *engine) dial(ctx context.Context) (net.Conn, error) { return e.dialRaw(ctx) }

func (e *engine) url(path string, q url.Values) string {
	s := "http://docker" + path
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
