package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resolver looks names up (net.Resolver is one); the proxy asks it once
// per connection and connects to an address it checked.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// NewResolver is the system's resolver, or one that asks the DNS server
// at addr (host:port) when addr is set.
func NewResolver(addr string) Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// MaxConns bounds the connections a run's proxy holds at once.
const MaxConns = 256

// Proxy is one run's egress proxy: it serves on its own listener (a unix
// socket bound into that run's sandbox alone) and ends with the run.
type Proxy struct {
	rules    Rules
	resolver Resolver
	own      map[netip.Addr]bool
	srv      *http.Server
	slots    chan struct{}

	mu      sync.Mutex
	report  Report
	tunnels map[net.Conn]bool
	closed  bool
	fixed   []net.Listener // loopback rules' listeners (ServeTunnel), closed by Close
	serving sync.WaitGroup // the listeners' Serve
	calls   sync.WaitGroup // requests being answered
	// ctx ends with the proxy: a request's work is not tied to its
	// client's connection (a client that shuts its side after asking,
	// as nc does, still gets its answer).
	ctx    context.Context
	cancel context.CancelFunc
}

// Start starts a proxy for rules (names resolved by resolver); it serves
// the listeners Serve gives it until Close.
func Start(rules Rules, resolver Resolver) *Proxy {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	p := &Proxy{rules: rules, resolver: resolver, own: hostAddrs(),
		slots: make(chan struct{}, MaxConns), tunnels: map[net.Conn]bool{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: discardLog}
	return p
}

// Serve serves the proxy on ln too, until Close.
func (p *Proxy) Serve(ln net.Listener) {
	p.serving.Add(1)
	go func() {
		defer p.serving.Done()
		_ = p.srv.Serve(ln)
	}()
}

// Close stops the proxy — its listeners and every connection through it —
// and returns what went through.
func (p *Proxy) Close() Report {
	p.cancel()
	_ = p.srv.Close()
	p.mu.Lock()
	for _, ln := range p.fixed {
		ln.Close()
	}
	p.mu.Unlock()
	p.serving.Wait()
	p.mu.Lock()
	p.closed = true
	var open []net.Conn
	for c := range p.tunnels {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	// Their connections closed, the requests end at once: wait for their
	// counts (bounded: a forward stuck on its upstream gives up its count).
	ended := make(chan struct{})
	go func() { p.calls.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report
}

// ServeHTTP answers a CONNECT with a tunnel and any other request by
// forwarding it over plain HTTP.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.calls.Add(1)
	defer p.calls.Done()
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		http.Error(w, fmt.Sprintf("hunk egress: more than %d connections at once through the proxy", MaxConns), http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	p.forward(w, r)
}

// target is the host and port a request asks for (def: the port when
// none is given).
func target(authority string, def int) (string, int, error) {
	host, port := authority, def
	if h, ps, err := net.SplitHostPort(authority); err == nil {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("bad port in %q", authority)
		}
		host, port = h, n
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" { // fe80::1%eth0: a zone picks the host's interface, and no prefix holds a zoned address
			return "", 0, fmt.Errorf("bad host %q: an IPv6 address with a zone (%%%s) is not accepted; name the address without it", authority, a.Zone())
		}
		return a.Unmap().String(), port, nil // ::ffff:127.0.0.1 is 127.0.0.1
	}
	if !validName(host) {
		return "", 0, fmt.Errorf("bad host %q", authority)
	}
	return host, port, nil
}

// refusal is a connection the proxy did not make: denied by the rules
// (Denial set; 403) or failed (502).
type refusal struct {
	host string
	port int
	deny *Denial
	err  error
}

func (e *refusal) Error() string {
	hp := net.JoinHostPort(e.host, strconv.Itoa(e.port))
	if e.deny != nil {
		s := "hunk egress: blocked " + hp + " (" + e.deny.Reason + ")"
		if e.deny.Fix != "" {
			s += "; add --allow-host " + e.deny.Fix
		}
		return s
	}
	return "hunk egress: cannot reach " + hp + ": " + e.err.Error()
}

func (e *refusal) status() int {
	if e.deny != nil {
		return http.StatusForbidden
	}
	return http.StatusBadGateway
}

// dial decides host:port, resolves the name once, and connects to an
// address it checked (never resolving again: a rebinding answer cannot
// redirect it).
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	if d := p.rules.decideName(host, port); d != nil {
		return nil, p.refuse(&refusal{host: host, port: port, deny: d})
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		addrs, err = p.resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil {
			var de *net.DNSError
			if errors.As(err, &de) && de.IsNotFound {
				err = errors.New("no such host")
			}
			return nil, p.refuse(&refusal{host: host, port: port, err: fmt.Errorf("cannot resolve the name: %w", err)})
		}
	}
	ok, why := p.rules.checkAddrs(addrs, port, func(a netip.Addr) bool { return p.own[a] })
	if len(ok) == 0 {
		return nil, p.refuse(&refusal{host: host, port: port, deny: why})
	}
	var err error
	for _, a := range ok {
		d := net.Dialer{Timeout: 30 * time.Second}
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String()); err == nil {
			return c, nil
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return nil, p.refuse(&refusal{host: host, port: port, err: err})
}

// connect tunnels a CONNECT: no interception, the bytes copied both ways
// (by the kernel, splice(2), where it can).
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	up, host, port, ok := p.reach(w, r.Host, 443)
	if !ok {
		return
	}
	defer up.Close()
	client, buf, ok := p.takeOver(w, up)
	if !ok {
		return
	}
	defer p.untrack(client, up)
	defer client.Close()
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	refused := false
	sent, rx := splice(up, client, buf.Reader, func(r *bufio.Reader) ([]byte, error) {
		raw, sni, err := readHello(r)
		var eh errHello
		switch {
		case errors.As(err, &eh):
			err = p.refuse(&refusal{host: host, port: port, deny: &Denial{
				Reason: "the tunnel's TLS server name cannot be checked: " + eh.why}})
		case err == nil && sni != "" && sni != host && p.rules.decideName(sni, port) != nil:
			err = p.refuse(&refusal{host: sni, port: port, deny: &Denial{
				Reason: "the TLS server name in a tunnel to " + host, Fix: sni}})
		}
		refused = err != nil
		return raw, err
	})
	if !refused { // a refused tunnel reached nothing: the model is told so
		p.count(net.JoinHostPort(host, strconv.Itoa(port)), sent, rx)
	}
}

// reach decides authority (def: its port when it names none) and
// connects to it; when it cannot, the client has its answer (ok false).
func (p *Proxy) reach(w http.ResponseWriter, authority string, def int) (up net.Conn, host string, port int, ok bool) {
	host, port, err := target(authority, def)
	if err != nil {
		http.Error(w, "hunk egress: "+err.Error(), http.StatusBadRequest)
		return nil, "", 0, false
	}
	if up, err = p.dial(p.ctx, host, port); err != nil {
		p.fail(w, err)
		return nil, "", 0, false
	}
	return up, host, port, true
}

// takeOver takes the client's connection over from the HTTP server and
// holds it and up for Close (untrack lets go).
func (p *Proxy) takeOver(w http.ResponseWriter, up net.Conn) (net.Conn, *bufio.ReadWriter, bool) {
	client, buf, err := hijack(w)
	if err != nil {
		return nil, nil, false
	}
	if !p.track(client, up) {
		client.Close()
		return nil, nil, false
	}
	return client, buf, true
}

// hijack takes the client's connection over from the HTTP server.
func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "hunk egress: cannot tunnel", http.StatusInternalServerError)
		return nil, nil, errors.New("no hijacker")
	}
	return hj.Hijack()
}

// splice copies both ways until both sides are done: what first reads of
// the client's first bytes and allows (nil: nothing), then what the client
// sent after its request, then the connections themselves (the kernel's
// splice(2) between sockets, no copy through hunk's memory). What first
// refuses ends both. pending and first may be nil (the door's forwarder).
func splice(up, client net.Conn, pending *bufio.Reader, first func(*bufio.Reader) ([]byte, error)) (sent, rx int64) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if first != nil {
			b, err := first(pending)
			if err != nil {
				up.Close()
				client.Close()
				return
			}
			m, _ := up.Write(b)
			sent += int64(m)
		}
		if n := bufferedOf(pending); n > 0 {
			b, _ := pending.Peek(n)
			m, err := up.Write(b)
			sent += int64(m)
			if err != nil {
				closeWrite(up)
				return
			}
		}
		sent += copyConn(up, client)
		closeWrite(up)
	}()
	rx = copyConn(client, up)
	closeWrite(client)
	<-done
	return sent, rx
}

// copyConn copies src to dst until src ends, by splice(2) between two
// sockets: a TCP destination reads from its source itself (io.Copy would
// go through src's WriteTo, which splices only into a unix socket).
func copyConn(dst, src net.Conn) int64 {
	var n int64
	if rf, ok := dst.(*net.TCPConn); ok {
		n, _ = rf.ReadFrom(src)
	} else {
		n, _ = io.Copy(dst, src)
	}
	return n
}

func bufferedOf(r *bufio.Reader) int {
	if r == nil {
		return 0
	}
	return r.Buffered()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// hopHeaders are a hop's own headers, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Upgrade"}

// forward sends a plain HTTP request to the host its URL (or Host) names,
// over a connection of its own that ends with the answer (Connection:
// close), and gives the answer back as the host sent it. The client's
// connection ends with it too: its next request is decided afresh.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	authority := r.URL.Host
	if authority == "" {
		authority = r.Host
	}
	if r.URL.Scheme != "" && r.URL.Scheme != "http" {
		http.Error(w, "hunk egress: only http:// is forwarded; "+r.URL.Scheme+":// goes through CONNECT", http.StatusBadRequest)
		return
	}
	up, host, port, ok := p.reach(w, authority, 80)
	if !ok {
		return
	}
	defer up.Close()
	out := r.Clone(p.ctx)
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host, out.Host = "http", authority, authority
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // Write adds none
	}
	out.Close = true
	sent := &countWriter{w: up}
	if err := out.Write(sent); err != nil {
		http.Error(w, "hunk egress: "+host+": "+err.Error(), http.StatusBadGateway)
		return
	}
	client, _, ok := p.takeOver(w, up)
	if !ok {
		return
	}
	defer p.untrack(client, up)
	defer client.Close()
	rx := copyConn(client, up)
	p.count(net.JoinHostPort(host, strconv.Itoa(port)), sent.n, rx)
}

// countWriter counts what is written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// fail answers a refused connection: 403 for a denial, 502 for a
// failure, the one line saying what to do.
func (p *Proxy) fail(w http.ResponseWriter, err error) {
	var rf *refusal
	if !errors.As(err, &rf) {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("X-Hunk-Egress", rf.Error())
	http.Error(w, rf.Error(), rf.status())
}

// track holds a tunnel's connections so Close can end them; false once
// the proxy is closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = true
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnels, c)
	}
}
