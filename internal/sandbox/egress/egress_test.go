package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/egress/egresstest"
)

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: name/suffix/any/prefix:port, or "error"
	}{
		{"example.org", "example.org:0"},
		{"Example.ORG.", "example.org:0"},
		{"*.example.org", "*.example.org:0"},
		{"example.org:8443", "example.org:8443"},
		{"*", "*:0"},
		{"10.1.2.3", "10.1.2.3/32:0"},
		{"10.0.0.0/8", "10.0.0.0/8:0"},
		{"10.1.2.3:80", "10.1.2.3/32:80"},
		{"::1", "::1/128:0"},
		{"[::1]:8080", "::1/128:8080"},
		{"::ffff:127.0.0.1", "127.0.0.1/32:0"},
		{"", "error"},
		{"exa mple.org", "error"},
		{"example.org:0", "error"},
		{"example.org:70000", "error"},
		{"example.org:http", "error"},
		{"foo.*.org", "error"},
		{"-bad.org", "error"},
		{"http://example.org", "error"},
		{"fe80::1%eth0", "error"},
		{"[::1%lo]:80", "error"},
	} {
		r, err := ParseRule(c.in)
		got := "error"
		if err == nil {
			switch {
			case r.Any:
				got = "*"
			case r.Suffix:
				got = "*." + r.Name
			case r.Name != "":
				got = r.Name
			default:
				got = r.Prefix.String()
			}
			got += fmt.Sprintf(":%d", r.Port)
		}
		if got != c.want {
			t.Errorf("ParseRule(%q) = %s (%v), want %s", c.in, got, err, c.want)
		}
	}
}

func TestForbidden(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "10.0.0.1": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "100.100.100.200": true, "0.0.0.0": true, "224.0.0.1": true, "255.255.255.255": true,
		"::1": true, "::": true, "fe80::1": true, "fd00:ec2::254": true, "ff02::1": true,
		"::ffff:127.0.0.1": true, "::ffff:169.254.169.254": true, "::127.0.0.1": true,
		"64:ff9b::7f00:1": true, "64:ff9b::a9fe:a9fe": true, "2002:7f00:1::": true, "2002:a9fe:a9fe::1": true,
		"93.184.215.14": false, "8.8.8.8": false, "2606:4700::1111": false, "::ffff:8.8.8.8": false, "64:ff9b::808:808": false,
	} {
		if got := Forbidden(netip.MustParseAddr(addr)) != ""; got != want {
			t.Errorf("Forbidden(%s) = %v, want %v", addr, got, want)
		}
	}
}

// server is an HTTP server on a loopback address saying its name.
func server(t *testing.T, addr, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", name, r.Host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startProxy starts a proxy for allow/deny on a socket of its own, names
// resolved by answer; the client goes through it.
func startProxy(t *testing.T, allow, deny []string, answer egresstest.Answer) (*Proxy, *http.Client, string) {
	t.Helper()
	rules, err := Parse(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p := Start(rules, NewResolver(egresstest.DNS(t, answer)))
	p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	tr := &http.Transport{
		Proxy:       http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return net.Dial("unix", sock) },
	}
	return p, &http.Client{Transport: tr}, sock
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// connect asks the proxy for a tunnel to authority and returns its status
// line.
func connect(t *testing.T, sock, authority string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

func TestProxyDecides(t *testing.T) {
	good := server(t, "127.0.0.2:0", "good")
	names := map[string]string{
		"registry.test": "127.0.0.2", "other.test": "127.0.0.2",
		"loop.test": "127.0.0.1", "meta.test": "169.254.169.254", "mapped.test": "::ffff:127.0.0.1",
	}
	p, c, sock := startProxy(t, []string{"registry.test:" + good, "loop.test:" + good, "meta.test", "mapped.test:" + good, "127.0.0.2"}, []string{"other.test"}, egresstest.Table(names))

	if code, body := get(t, c, "http://registry.test:"+good+"/x"); code != 200 || body != "good registry.test:"+good {
		t.Errorf("allowed host: %d %q", code, body)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://nope.test/", "blocked nope.test:80 (not in --allow-host); add --allow-host nope.test"},
		{"http://registry.test:1/", "blocked registry.test:1 (port 1 not in --allow-host); add --allow-host registry.test:1"},
		{"http://other.test:" + good + "/", "denied by --deny-host other.test"},
		{"http://loop.test:" + good + "/", "blocked loop.test:" + good + " (resolves to 127.0.0.1, a loopback address); add --allow-host 127.0.0.1"},
		{"http://meta.test/", "blocked meta.test:80 (resolves to 169.254.169.254, a link-local address (cloud metadata)); add --allow-host 169.254.169.254"},
		{"http://mapped.test:" + good + "/", "resolves to 127.0.0.1, a loopback address"},
		{"http://[::ffff:127.0.0.1]:" + good + "/", "blocked 127.0.0.1:" + good + " (not in --allow-host)"},
	} {
		code, body := get(t, c, tc.url)
		if code != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %q, want 403 with %q", tc.url, code, body, tc.want)
		}
	}
	if got := connect(t, sock, "registry.test:"+good); got != "HTTP/1.1 200 Connection established" {
		t.Errorf("CONNECT allowed: %q", got)
	}
	if got := connect(t, sock, "registry.test:22"); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("CONNECT to a port not allowed: %q", got)
	}
	r := p.Close()
	if len(r.Reached) != 1 || r.Reached[0].Host != "registry.test:"+good || r.Reached[0].Connections != 2 || r.BytesReceived == 0 {
		t.Errorf("reached: %+v", r)
	}
	if len(r.Denied) != 8 {
		t.Errorf("denied: %d entries, want 8: %+v", len(r.Denied), r.Denied)
	}
}

// TestProxyZonedAddress: with every name allowed ('*', the documented
// pattern beside --deny-host), a service on the host's ::1 is not reached
// by writing the address with a zone (::1%lo): the deny set's prefixes hold
// no zoned address, so the literal is refused and a zoned answer of a
// name is decided without its zone.
func TestProxyZonedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	hits := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; io.WriteString(w, "secret") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	zoned := func(name string, _ int) []netip.Addr {
		if name == "zoned.test" {
			return []netip.Addr{netip.MustParseAddr("::1%lo")}
		}
		return nil
	}
	p, c, sock := startProxy(t, []string{"*:" + port}, nil, zoned)
	for _, u := range []string{"http://[::1%25lo]:" + port + "/secret.txt", "http://[::1%251]:" + port + "/", "http://zoned.test:" + port + "/"} {
		if code, body := get(t, c, u); code != http.StatusForbidden {
			t.Errorf("GET %s: %d %q, want 403", u, code, body)
		}
	}
	for _, a := range []string{"[::1%25lo]:" + port, "[::1%lo]:" + port, "[fe80::1%25lo]:" + port} {
		if got := connect(t, sock, a); !strings.HasPrefix(got, "HTTP/1.1 4") {
			t.Errorf("CONNECT %s: %q, want a refusal", a, got)
		}
	}
	for _, target := range []string{"http://[::1%25lo]:" + port + "/secret.txt", "http://[::1%lo]:" + port + "/"} { // as curl writes it
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: [::1%%25lo]:%s\r\n\r\n", target, port)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 4") {
			t.Errorf("GET %s: %q, want a refusal", target, line)
		}
	}
	r := p.Close()
	if hits != 0 || len(r.Reached) != 0 {
		t.Errorf("the host's ::1 was reached %d times: %+v", hits, r.Reached)
	}
	rs, _ := Parse([]string{"*"}, nil)
	for _, a := range []string{"fe80::1%eth0", "fd00:ec2::254%eth0", "::ffff:127.0.0.1%lo"} {
		if ok, why := rs.checkAddrs([]netip.Addr{netip.MustParseAddr(a)}, 80, nil); len(ok) != 0 || why == nil {
			t.Errorf("checkAddrs(%s) kept %v", a, ok)
		}
	}
}

// TestProxyRebinding: a name that answers an allowed address first and a
// loopback one on the next lookup (DNS rebinding) is connected to the
// address the proxy checked: the first request reaches the allowed
// server, the second is refused, and the server on the second address is
// never reached — a proxy that looked the name up again to connect would
// have reached it.
func TestProxyRebinding(t *testing.T) {
	good := server(t, "127.0.0.2:0", "good")
	evilHits := 0
	evil := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { evilHits++; io.WriteString(w, "evil") })}
	eln, err := net.Listen("tcp", "127.0.0.3:"+good) // the same port on another address
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.3:%s: %v", good, err)
	}
	go evil.Serve(eln)
	t.Cleanup(func() { evil.Close() })
	answer := func(name string, n int) []netip.Addr {
		switch {
		case name != "rebind.test":
			return nil
		case n%2 == 1:
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.3")}
	}
	_, c, _ := startProxy(t, []string{"rebind.test:" + good, "127.0.0.2"}, nil, answer)
	if code, body := get(t, c, "http://rebind.test:"+good+"/"); code != 200 || !strings.HasPrefix(body, "good") {
		t.Errorf("first request: %d %q, want good", code, body)
	}
	if code, body := get(t, c, "http://rebind.test:"+good+"/"); code != 403 || !strings.Contains(body, "resolves to 127.0.0.3, a loopback address") {
		t.Errorf("second request: %d %q, want 403", code, body)
	}
	if evilHits != 0 {
		t.Errorf("the rebound address was reached %d times", evilHits)
	}
}

// FuzzParseRule: any pattern parses or is refused, never panics, and a
// parsed rule decides any host without panicking.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"example.org", "*.example.org:8443", "*", "10.0.0.0/8", "[::1]:80", "::ffff:1.2.3.4", "a..b", "[::1", ":80"} {
		f.Add(s, "registry.test", 443)
	}
	f.Fuzz(func(t *testing.T, pattern, host string, port int) {
		r, err := ParseRule(pattern)
		if err != nil {
			return
		}
		rs := Rules{Allow: []Rule{r}, Deny: []Rule{r}}
		_ = rs.decideName(host, port)
		if a, err := netip.ParseAddr(host); err == nil {
			_, _ = rs.checkAddrs([]netip.Addr{a}, port, nil)
		}
		_, _, _ = target(host, port)
	})
}

// TestTunnelServerName: a tunnel to an allowed name whose TLS client asks
// for another name is refused; one that asks for the tunnel's own name,
// or for another allowed name, goes through.
func TestTunnelServerName(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls "+r.Host) }))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip(err)
	}
	srv.Listener = ln
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	names := map[string]string{"cdn.test": "127.0.0.2", "also.test": "127.0.0.2"}
	p, _, sock := startProxy(t, []string{"cdn.test:" + port, "also.test:" + port, "127.0.0.2"}, nil, egresstest.Table(names))
	get := func(serverName string) (string, error) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return "", err
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT cdn.test:%s HTTP/1.1\r\nHost: cdn.test:%s\r\n\r\n", port, port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			return "", fmt.Errorf("CONNECT: %v %v", resp, err)
		}
		tc := tls.Client(c, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			return "", err
		}
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", serverName)
		b, err := io.ReadAll(tc)
		return string(b), err
	}
	for _, name := range []string{"cdn.test", "also.test"} {
		if body, err := get(name); err != nil || !strings.HasSuffix(body, "tls "+name) {
			t.Errorf("server name %s through a tunnel to cdn.test: %q %v", name, body, err)
		}
	}
	if body, err := get("other.test"); err == nil {
		t.Errorf("server name other.test through a tunnel to cdn.test went through: %q", body)
	}
	r := p.Close()
	if len(r.Denied) != 1 || r.Denied[0].Host != "other.test:"+port || !strings.Contains(r.Denied[0].Reason, "TLS server name in a tunnel to cdn.test") {
		t.Errorf("denied: %+v", r.Denied)
	}
}

// FuzzHelloServerName: any bytes are read as a ClientHello or refused,
// never a panic.
func FuzzHelloServerName(f *testing.F) {
	f.Add([]byte{1, 0, 0, 5, 3, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = helloServerName(b)
		_, _, _ = readHello(bufio.NewReader(bytes.NewReader(append([]byte{0x16, 3, 1, byte(len(b) >> 8), byte(len(b))}, b...))))
	})
}

func TestEnv(t *testing.T) {
	got := strings.Join(Env([]string{"PATH=/bin", "HTTPS_PROXY=http://elsewhere:1", "MAVEN_OPTS=-Xmx1g"}), "\n")
	for _, want := range []string{"PATH=/bin", "HTTPS_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"MAVEN_OPTS=-Xmx1g -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128", "GRADLE_OPTS=-Dhttp.proxyHost=127.0.0.1"} {
		if !strings.Contains(got, want) {
			t.Errorf("Env lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "elsewhere") {
		t.Errorf("Env kept the command's own proxy:\n%s", got)
	}
}

// TestLoopbacks: the loopback rules with a port are kept inside the
// sandbox at their address (localhost's at 127.0.0.1), once each; a
// loopback rule without a port and any other rule keep nothing; the
// proxy's own port is refused.
func TestLoopbacks(t *testing.T) {
	rs, err := Parse([]string{"127.0.0.1:4873", "localhost:5432", "[::1]:8080", "127.0.0.2", "registry.npmjs.org", "127.0.0.1:4873", "10.0.0.1:80"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rs.Loopbacks()
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, l := range got {
		s = append(s, l.Listen.String()+"="+l.Target())
	}
	if want := "127.0.0.1:4873=127.0.0.1:4873 127.0.0.1:5432=127.0.0.1:5432 [::1]:8080=[::1]:8080"; strings.Join(s, " ") != want {
		t.Errorf("Loopbacks: %q, want %q", strings.Join(s, " "), want)
	}
	rs, _ = Parse([]string{"127.0.0.1:3128"}, nil)
	if _, err := rs.Loopbacks(); err == nil || !strings.Contains(err.Error(), "the proxy's own") {
		t.Errorf("the proxy's port: %v", err)
	}
	// localhost:PORT names the loopback addresses on its port, and no other.
	rs, _ = Parse([]string{"localhost:5432"}, nil)
	if d := rs.decideName("127.0.0.1", 5432); d != nil {
		t.Errorf("127.0.0.1:5432 under localhost:5432: %+v", d)
	}
	if _, why := rs.checkAddrs([]netip.Addr{netip.MustParseAddr("127.0.0.1")}, 5432, nil); why != nil {
		t.Errorf("127.0.0.1:5432 under localhost:5432: %+v", why)
	}
	if d := rs.decideName("127.0.0.1", 5433); d == nil {
		t.Error("127.0.0.1:5433 allowed under localhost:5432")
	}
}
