// Package egresstest is the tests' DNS: a server on 127.0.0.1 answering
// A and AAAA questions from a function, so that a test names its loopback
// servers, and can answer differently on a second lookup (rebinding).
package egresstest

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// Answer gives the addresses of name for its nth lookup (n from 1; A and
// AAAA questions counted apart); nil: no such name.
type Answer func(name string, n int) []netip.Addr

// Table answers from a fixed table, the same every time.
func Table(m map[string]string) Answer {
	return func(name string, _ int) []netip.Addr {
		if a, ok := m[name]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}
		}
		return nil
	}
}

// DNS serves answer on a UDP port of 127.0.0.1 until the test ends and
// returns its address (host:port).
func DNS(t testing.TB, answer Answer) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	var mu sync.Mutex
	counts := map[string]int{}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			name, qtype, end, ok := question(q)
			if !ok {
				continue
			}
			mu.Lock()
			key := fmt.Sprint(name, "/", qtype)
			counts[key]++
			nth := counts[key]
			mu.Unlock()
			addrs := answer(name, nth)
			_, _ = pc.WriteTo(reply(q[:end], addrs, qtype), from)
		}
	}()
	return pc.LocalAddr().String()
}

// question reads the one question of a query: its name (lower case, no
// trailing dot), type and where it ends.
func question(q []byte) (string, uint16, int, bool) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return "", 0, 0, false
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l > 63 || i+1+l > len(q) {
			return "", 0, 0, false
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return "", 0, 0, false
	}
	qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
	return strings.ToLower(strings.Join(labels, ".")), qtype, i + 5, true
}

// reply answers the query (its header and question) with the addresses
// of the asked type; no address at all is NXDOMAIN.
func reply(q []byte, addrs []netip.Addr, qtype uint16) []byte {
	r := append([]byte(nil), q...)
	r[2] = 0x84 | r[2]&0x01 // response, authoritative, RD copied
	r[3] = 0x80             // RA, NOERROR
	if addrs == nil {
		r[3] |= 3 // NXDOMAIN
	}
	var count uint16
	for _, a := range addrs {
		var data []byte
		switch {
		case qtype == 1 && a.Is4():
			b := a.As4()
			data = b[:]
		case qtype == 28 && a.Is6():
			b := a.As16()
			data = b[:]
		default:
			continue
		}
		r = append(r, 0xc0, 12) // the question's name
		r = binary.BigEndian.AppendUint16(r, qtype)
		r = binary.BigEndian.AppendUint16(r, 1)
		r = binary.BigEndian.AppendUint32(r, 0) // TTL 0: never cached
		r = binary.BigEndian.AppendUint16(r, uint16(len(data)))
		r = append(r, data...)
		count++
	}
	binary.BigEndian.PutUint16(r[6:8], count)
	binary.BigEndian.PutUint16(r[8:10], 0)
	binary.BigEndian.PutUint16(r[10:12], 0)
	return r
}
