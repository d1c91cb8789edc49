package egress

// This machine's loopback, for a rule that names it. The command's own
// 127.0.0.1 is its sandbox's (NO_PROXY sends its clients there directly:
// a test server it starts must be reached there), so a rule that allows
// a loopback address with a port — 127.0.0.1:4873, [::1]:8080,
// localhost:5432 — is kept at that address and port inside the sandbox:
// each connection to it there is carried through the proxy, decided as
// every other, to the same address and port of this machine. A loopback
// rule without a port (127.0.0.2) keeps nothing inside: it lets names that
// resolve there through the proxy, on every port, as any address rule.

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Loopback is what a loopback rule keeps inside the sandbox: the address
// and port listened on there, and the host the proxy is asked for.
type Loopback struct {
	Listen netip.AddrPort
	Host   string // the address the proxy is asked for (localhost's: 127.0.0.1)
}

// Target is the authority the proxy is asked to tunnel to.
func (l Loopback) Target() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Listen.Port())))
}

// Loopbacks are the loopback addresses and ports the allow rules name,
// each with its port; one that is the proxy's own is an error.
func (rs Rules) Loopbacks() ([]Loopback, error) {
	var out []Loopback
	seen := map[netip.AddrPort]bool{}
	for _, r := range rs.Allow {
		var host string
		var addr netip.Addr
		switch {
		case r.Name == "localhost":
			host, addr = "127.0.0.1", netip.AddrFrom4([4]byte{127, 0, 0, 1})
		case r.Name == "" && !r.Any && r.Prefix.IsValid() && r.Prefix.IsSingleIP() && r.Prefix.Addr().IsLoopback():
			addr = r.Prefix.Addr()
			host = addr.String()
		default:
			continue
		}
		if r.Port == 0 {
			continue // names that resolve there, through the proxy; no port to keep
		}
		ap := netip.AddrPortFrom(addr, uint16(r.Port))
		if ap.Port() == Port && addr == netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
			return nil, fmt.Errorf("--allow-host %s: port %d of the command's 127.0.0.1 is the proxy's own", r.Text, Port)
		}
		if !seen[ap] {
			seen[ap] = true
			out = append(out, Loopback{Listen: ap, Host: host})
		}
	}
	return out, nil
}

// namesLoopback reports whether r is a localhost rule covering a (a
// loopback address) on port: the deny set yields to it, as to a rule
// naming the address. (matchName takes a loopback address's text for
// localhost too.)
func (r Rule) namesLoopback(a netip.Addr, port int) bool {
	return r.Name == "localhost" && !r.Suffix && a.IsLoopback() && r.Port == port
}

// tunnelTo carries c through the proxy at up (the door's forwarder): a
// CONNECT to target, then the bytes both ways; a refusal closes c.
func tunnelTo(up, c net.Conn, target string) {
	if _, err := fmt.Fprintf(up, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return
	}
	br := bufio.NewReader(up)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		return
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if line == "\r\n" || line == "\n" {
			break
		}
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := c.Write(b); err != nil {
			return
		}
	}
	splice(up, c, nil, nil)
}

// ServeTunnel serves ln (a loopback rule's listener in the sandbox) until
// Close: each connection is a tunnel to target, decided as a CONNECT to it.
func (p *Proxy) ServeTunnel(ln net.Listener, target string) {
	host, port, err := splitTarget(target)
	p.mu.Lock()
	p.fixed = append(p.fixed, ln)
	p.mu.Unlock()
	p.serving.Add(1)
	go func() {
		defer p.serving.Done()
		for err == nil {
			c, aerr := ln.Accept()
			if aerr != nil {
				return
			}
			go p.tunnel(c, host, port)
		}
	}()
}

// tunnel carries c to host:port, as connect does a CONNECT's.
func (p *Proxy) tunnel(c net.Conn, host string, port int) {
	defer c.Close()
	p.calls.Add(1)
	defer p.calls.Done()
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		return
	}
	up, err := p.dial(p.ctx, host, port)
	if err != nil {
		return
	}
	defer up.Close()
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	sent, rx := splice(up, c, nil, nil)
	p.count(net.JoinHostPort(host, strconv.Itoa(port)), sent, rx)
}

// splitTarget is host and port of an ADDR:PORT target.
func splitTarget(target string) (string, int, error) {
	h, ps, err := net.SplitHostPort(target)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	return h, port, err
}
