package egress

import (
	"net"
	"net/netip"
	"sync"
)

// denySet are the address ranges no name leads to unless a rule names the
// address: the host's own services, the local network and the cloud's
// metadata endpoints (SSRF). Checked on every address a name resolves to
// and on every address literal, IPv4 embedded in IPv6 unwrapped first.
var denySet = sync.OnceValue(func() []denied {
	return []denied{
		{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified address"},
		{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
		{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
		{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
		{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
		{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"}, // Alibaba's metadata: 100.100.100.200
		{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (cloud metadata)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
		{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
		{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
		{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
		{netip.MustParsePrefix("::/128"), "an unspecified address"},
		{netip.MustParsePrefix("::1/128"), "a loopback address"},
		{netip.MustParsePrefix("fc00::/7"), "a unique-local address (cloud metadata: fd00:ec2::254)"},
		{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
		{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
		{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
	}
})

// denied is one range of the deny set and what it is.
type denied struct {
	prefix netip.Prefix
	kind   string
}

// Forbidden says which kind of deny-set address a is ("" none), after
// unwrapping IPv4 carried in IPv6: mapped (::ffff:a.b.c.d), compatible
// (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
func Forbidden(a netip.Addr) string {
	if v4, ok := embedded(a); ok {
		if k := Forbidden(v4); k != "" {
			return k
		}
	}
	for _, d := range denySet() {
		if d.prefix.Contains(a) {
			return d.kind
		}
	}
	return ""
}

// embedded is the IPv4 address a carries, if it is one of the embeddings.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	var v4 [4]byte
	switch {
	case isZero(b[:12]) && !isZero(b[12:14]): // ::a.b.c.d (not ::1, ::)
		copy(v4[:], b[12:])
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]):
		copy(v4[:], b[12:])
	case b[0] == 0x20 && b[1] == 0x02:
		copy(v4[:], b[2:6])
	default:
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(v4), true
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// hostAddrs are this host's interface addresses: a name leading to one
// would reach a service listening on the host.
func hostAddrs() map[netip.Addr]bool {
	m := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return m
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				m[ip.Unmap()] = true
			}
		}
	}
	return m
}
