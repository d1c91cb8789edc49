package egress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The TLS server name a tunnel's client asks for (SNI) is checked against
// the name the tunnel was allowed for: a command that CONNECTs to an
// allowed name and then asks the server at that address (a CDN serving
// many names) for another is refused, unless that name is allowed too.
// What TLS hides is not seen: an encrypted inner name (ECH) nor the HTTP
// Host inside the tunnel (domain fronting).

// maxHello bounds the ClientHello message, not the bytes it comes in:
// TLS lets a handshake message be cut into records of any size (one byte
// each, if the client likes), so a bound on the wire bytes is one a client
// can pass by writing small records. A hello is ~0.5-2 KiB (a
// post-quantum key share included); 64 KiB is far above any real one.
const maxHello = 64 << 10

// errHello is a tunnel whose first bytes are a TLS handshake hunk cannot
// judge: it is refused (fail closed), never passed on unread.
type errHello struct{ why string }

func (e errHello) Error() string { return e.why }

// readHello reads the client's first TLS handshake message from r when
// the stream starts with one: its bytes (to send on as read) and its
// server name ("" none). A stream that is not TLS yields nothing read. A
// stream that starts as TLS but whose ClientHello cannot be read whole
// within maxHello — too long, cut by another kind of record, an empty
// record, or not a ClientHello — is an errHello: the caller refuses the
// tunnel. The bytes read stay bounded: every record adds at least one
// byte to the message, so at most maxHello+4 records of 5+n bytes.
func readHello(r interface {
	Peek(int) ([]byte, error)
	io.Reader
}) (raw []byte, sni string, err error) {
	h, err := r.Peek(1)
	if err != nil || h[0] != 0x16 { // not a TLS handshake record
		return nil, "", nil
	}
	var msg []byte
	need := 4 // the handshake header, then the whole message
	for len(msg) < need {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return raw, "", err
		}
		n := int(binary.BigEndian.Uint16(hdr[3:5]))
		switch {
		case hdr[0] != 0x16:
			return raw, "", errHello{"a TLS ClientHello cut by a record of another type"}
		case n == 0 || n > 16<<10+2048:
			return raw, "", errHello{fmt.Sprintf("a TLS handshake record of %d bytes", n)}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return append(raw, hdr[:]...), "", err
		}
		raw = append(append(raw, hdr[:]...), body...)
		msg = append(msg, body...)
		if need == 4 && len(msg) >= 4 {
			l := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
			if l > maxHello {
				return raw, "", errHello{fmt.Sprintf("a TLS ClientHello of %d bytes, over hunk's bound of %d KiB", l, maxHello>>10)}
			}
			need = 4 + l
		}
	}
	sni, err = helloServerName(msg[:need])
	if err != nil {
		return raw, "", errHello{"a TLS handshake that is not a ClientHello hunk can read"}
	}
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
