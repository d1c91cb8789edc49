package egress

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
)

// The TLS server name a tunnel's client asks for (SNI) is checked against
// the name the tunnel was allowed for: a command that CONNECTs to an
// allowed name and then asks the server at that address (a CDN serving
// many names) for another is refused, unless that name is allowed too.
// What TLS hides is not seen: an encrypted inner name (ECH) nor the HTTP
// Host inside the tunnel (domain fronting).

// maxHello bounds the ClientHello read (TLS allows a record of 16 KiB;
// a hello in several records is read up to this).
const maxHello = 64 << 10

// readHello reads the client's first TLS handshake message from r when
// the stream starts with one: its bytes (to send on as read) and its
// server name ("" none). A stream that is not TLS yields nothing read.
func readHello(r interface {
	Peek(int) ([]byte, error)
	io.Reader
}) (raw []byte, sni string, err error) {
	h, err := r.Peek(1)
	if err != nil || h[0] != 0x16 { // not a TLS handshake record
		return nil, "", nil
	}
	var msg []byte
	for len(msg) < 4 || len(msg) < 4+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return raw, "", err
		}
		n := int(binary.BigEndian.Uint16(hdr[3:5]))
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return append(raw, hdr[:]...), "", err
		}
		raw = append(append(raw, hdr[:]...), body...)
		if hdr[0] != 0x16 || len(raw) > maxHello {
			return raw, "", nil // not a hello hunk can read: not judged
		}
		msg = append(msg, body...)
	}
	sni, _ = helloServerName(msg)
	return raw, sni, nil
}

// helloServerName finds the server_name extension in a ClientHello
// handshake message.
func helloServerName(m []byte) (string, error) {
	bad := errors.New("not a ClientHello")
	if len(m) < 4 || m[0] != 1 {
		return "", bad
	}
	m = m[4:]
	skip := func(n int) bool {
		if len(m) < n {
			return false
		}
		m = m[n:]
		return true
	}
	vec := func(lenBytes int) ([]byte, bool) {
		if len(m) < lenBytes {
			return nil, false
		}
		n := 0
		for _, b := range m[:lenBytes] {
			n = n<<8 | int(b)
		}
		m = m[lenBytes:]
		if len(m) < n {
			return nil, false
		}
		v := m[:n]
		m = m[n:]
		return v, true
	}
	if !skip(2 + 32) { // version, random
		return "", bad
	}
	for _, l := range []int{1, 2, 1} { // session id, cipher suites, compression
		if _, ok := vec(l); !ok {
			return "", bad
		}
	}
	exts, ok := vec(2)
	if !ok {
		return "", nil // no extensions
	}
	for len(exts) >= 4 {
		typ := binary.BigEndian.Uint16(exts)
		n := int(binary.BigEndian.Uint16(exts[2:]))
		if len(exts) < 4+n {
			return "", bad
		}
		data := exts[4 : 4+n]
		exts = exts[4+n:]
		if typ != 0 || len(data) < 2 {
			continue
		}
		list := data[2:]
		for len(list) >= 3 {
			kind, l := list[0], int(binary.BigEndian.Uint16(list[1:]))
			if len(list) < 3+l {
				return "", bad
			}
			if kind == 0 {
				return strings.TrimSuffix(strings.ToLower(string(list[3:3+l])), "."), nil
			}
			list = list[3+l:]
		}
	}
	return "", nil
}
