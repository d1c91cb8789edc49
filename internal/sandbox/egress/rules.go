// Package egress is exec's network allowlist: the rules (--allow-host,
// --deny-host), the addresses no name may lead to (the deny set), and the
// proxy in the hunk process that is a sandboxed command's only way out —
// HTTP CONNECT by host name for TLS (no interception) and plain HTTP by
// Host — deciding each connection on the address it connects to, and the
// door: the helper inside the sandbox that offers the proxy on the
// command's own 127.0.0.1.
package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultPorts are the ports a rule without one allows.
var DefaultPorts = []int{80, 443}

// Rule is one --allow-host or --deny-host pattern.
type Rule struct {
	Text   string       // as given
	Name   string       // a host name, lower case, no trailing dot ("" for an address rule)
	Suffix bool         // *.Name: any name under it, not Name itself
	Any    bool         // "*": every name (the deny set still holds)
	Prefix netip.Prefix // an address or a CIDR (valid when Name == "" && !Any)
	Port   int          // 0: DefaultPorts (allow) or every port (deny)
}

// ParseRule reads one pattern: host, *.domain, *, an address (1.2.3.4,
// ::1), a CIDR (10.0.0.0/8), each optionally with :port (an IPv6 address
// with a port in brackets: [::1]:8080).
func ParseRule(s string) (Rule, error) {
	r := Rule{Text: s}
	host := strings.TrimSpace(s)
	if host == "" {
		return r, fmt.Errorf("empty host pattern")
	}
	if scheme, rest, ok := strings.Cut(host, "://"); ok {
		return r, fmt.Errorf("host pattern %q: a host, not a URL (%s, not %s://%s)", s, strings.Split(rest, "/")[0], scheme, rest)
	}
	if h, p, ok := splitPort(host); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return r, fmt.Errorf("host pattern %q: port %q is not 1-65535", s, p)
		}
		host, r.Port = h, n
	}
	if pfx, err := netip.ParsePrefix(host); err == nil {
		r.Prefix = pfx.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if a.Zone() != "" {
			return r, fmt.Errorf("host pattern %q: an IPv6 address with a zone (%%%s) is not accepted; give the address without it", s, a.Zone())
		}
		r.Prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		return r, nil
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case host == "*":
		r.Any = true
		return r, nil
	case strings.HasPrefix(host, "*."):
		r.Suffix, host = true, host[2:]
	}
	if !validName(host) {
		return r, fmt.Errorf("host pattern %q: not a host name, *.domain, address or CIDR (with an optional :port)", s)
	}
	r.Name = host
	return r, nil
}

// splitPort splits host:port, [v6]:port; a bare IPv6 address has no port.
func splitPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]:"); i > 0 {
			return s[1:i], s[i+2:], true
		}
		return s, "", false
	}
	if strings.Count(s, ":") != 1 {
		return s, "", false
	}
	h, p, _ := strings.Cut(s, ":")
	return h, p, true
}

// validName reports whether s is a DNS name hunk accepts in a rule.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// matchName reports whether the rule names host (a lower-case name or an
// address's text).
func (r Rule) matchName(host string) bool {
	switch {
	case r.Any:
		return true
	case r.Name == "":
		a, err := netip.ParseAddr(host)
		return err == nil && r.Prefix.Contains(a.Unmap().WithZone(""))
	case r.Name == "localhost" && !r.Suffix:
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap().IsLoopback()
		}
	case r.Suffix:
		return strings.HasSuffix(host, "."+r.Name)
	}
	return host == r.Name
}

// matchPort reports whether the rule covers port; allow says which
// default a rule without a port has.
func (r Rule) matchPort(port int, allow bool) bool {
	if r.Port != 0 {
		return r.Port == port
	}
	if !allow {
		return true
	}
	for _, p := range DefaultPorts {
		if p == port {
			return true
		}
	}
	return false
}

// names reports whether the rule names the address explicitly (an
// address or CIDR rule containing it, on any port unless it names one):
// the deny set then yields, for the ports the name's own rule allows.
func (r Rule) names(a netip.Addr, port int) bool {
	return !r.Any && r.Name == "" && r.Prefix.IsValid() && r.Prefix.Contains(a.Unmap().WithZone("")) && (r.Port == 0 || r.Port == port)
}

// Rules are a run's allow and deny rules.
type Rules struct {
	Allow, Deny []Rule
}

// Parse reads the allow and deny patterns.
func Parse(allow, deny []string) (Rules, error) {
	var rs Rules
	for _, s := range allow {
		r, err := ParseRule(s)
		if err != nil {
			return rs, err
		}
		rs.Allow = append(rs.Allow, r)
	}
	for _, s := range deny {
		r, err := ParseRule(s)
		if err != nil {
			return rs, err
		}
		rs.Deny = append(rs.Deny, r)
	}
	return rs, nil
}

// Denial is why a connection was refused: the reason as the model reads
// it, and the rule that would allow it ("" when none can: a --deny-host).
type Denial struct {
	Reason string
	Fix    string
}

// decideName decides host:port on its name alone (the addresses are
// checked once resolved, by checkAddrs).
func (rs Rules) decideName(host string, port int) *Denial {
	for _, r := range rs.Deny {
		if r.matchName(host) && r.matchPort(port, false) {
			return &Denial{Reason: "denied by --deny-host " + r.Text}
		}
	}
	nameOK := false
	for _, r := range rs.Allow {
		if r.matchName(host) {
			nameOK = true
			if r.matchPort(port, true) {
				return nil
			}
		}
	}
	fix := host
	if strings.Contains(host, ":") {
		fix = "[" + host + "]"
	}
	switch {
	case nameOK:
		return &Denial{Reason: fmt.Sprintf("port %d not in --allow-host", port), Fix: fmt.Sprintf("%s:%d", fix, port)}
	case !isDefaultPort(port):
		return &Denial{Reason: "not in --allow-host", Fix: fmt.Sprintf("%s:%d", fix, port)}
	}
	return &Denial{Reason: "not in --allow-host", Fix: fix}
}

func isDefaultPort(port int) bool {
	for _, p := range DefaultPorts {
		if p == port {
			return true
		}
	}
	return false
}

// checkAddrs keeps the addresses of a name a connection may go to: none a
// deny rule names, none in the deny set unless an allow rule names it. The
// denial says why none is left.
func (rs Rules) checkAddrs(addrs []netip.Addr, port int, own func(netip.Addr) bool) ([]netip.Addr, *Denial) {
	var ok []netip.Addr
	var why *Denial
	for _, a := range addrs {
		a = a.Unmap().WithZone("") // decided (and dialled) as the address alone: no prefix holds a zoned one
		if d := rs.checkAddr(a, port, own); d != nil {
			if why == nil {
				why = d
			}
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 && why == nil {
		why = &Denial{Reason: "the name has no address"}
	}
	return ok, why
}

func (rs Rules) checkAddr(a netip.Addr, port int, own func(netip.Addr) bool) *Denial {
	for _, r := range rs.Deny {
		if r.Name == "" && !r.Any && r.Prefix.Contains(a) && r.matchPort(port, false) {
			return &Denial{Reason: fmt.Sprintf("resolves to %s, denied by --deny-host %s", a, r.Text)}
		}
	}
	kind := Forbidden(a)
	if kind == "" && own != nil && own(a) {
		kind = "an address of this host"
	}
	if kind == "" {
		return nil
	}
	for _, r := range rs.Allow {
		if r.names(a, port) || r.namesLoopback(a, port) {
			return nil
		}
	}
	fix := a.String()
	if a.IsLoopback() {
		// A loopback rule needs its port (Loopbacks).
		fix = netip.AddrPortFrom(a, uint16(port)).String()
	}
	return &Denial{Reason: fmt.Sprintf("resolves to %s, %s", a, kind), Fix: fix}
}
