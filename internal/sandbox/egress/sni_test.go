package egress

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/egress/egresstest"
)

// clientHello is the handshake message (header included) a Go TLS client
// sends for serverName, its ALPN list padded with protos names of 250
// bytes (a real client's way to make its hello as long as it likes).
func clientHello(t *testing.T, serverName string, protos int) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var names []string
	for i := range protos {
		names = append(names, fmt.Sprintf("%03d%s", i, strings.Repeat("p", 247)))
	}
	go tls.Client(a, &tls.Config{ServerName: serverName, NextProtos: names, InsecureSkipVerify: true}).Handshake()
	var msg []byte
	for len(msg) < 4 || len(msg) < 4+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) {
		var hdr [5]byte
		if _, err := io.ReadFull(b, hdr[:]); err != nil {
			t.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
		if _, err := io.ReadFull(b, body); err != nil {
			t.Fatal(err)
		}
		msg = append(msg, body...)
	}
	return msg
}

// records cuts a handshake message into TLS handshake records of n bytes.
func records(msg []byte, n int) []byte {
	var out []byte
	for len(msg) > 0 {
		k := min(n, len(msg))
		out = append(out, 0x16, 3, 1, byte(k>>8), byte(k))
		out = append(out, msg[:k]...)
		msg = msg[k:]
	}
	return out
}

// sink is a TCP server on 127.0.0.2 that counts the bytes each
// connection sends it.
func sink(t *testing.T) (port string, got chan int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	got = make(chan int, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				got <- int(n)
			}()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, got
}

// TestTunnelHelloInSmallRecords: a ClientHello cut into 2-byte records
// (ALPN-padded: 84 KB on the wire, more than any bound on wire bytes) is
// read whole and judged — a server name not allowed is refused and the
// server never gets a byte; a hello over the bound on the message, or one
// cut by another record type, is refused too, never passed on unread.
func TestTunnelHelloInSmallRecords(t *testing.T) {
	port, got := sink(t)
	names := map[string]string{"allowed.test": "127.0.0.2", "secret.test": "127.0.0.2"}
	p, _, sock := startProxy(t, []string{"allowed.test:" + port, "127.0.0.2"}, nil, egresstest.Table(names))
	send := func(b []byte) (int, bool) {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n\r\n", port, port)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.Contains(line, " 200 ") {
			t.Fatalf("CONNECT: %q %v", line, err)
		}
		go func() { c.Write(b); c.(interface{ CloseWrite() error }).CloseWrite() }()
		select {
		case n := <-got:
			c.Close()
			return n, true
		case <-time.After(time.Minute):
			c.Close()
			return 0, false
		}
	}
	evil := records(clientHello(t, "secret.test", 100), 2)
	if len(evil) < 80<<10 {
		t.Fatalf("the small-record hello is only %d bytes on the wire", len(evil))
	}
	if n, ok := send(evil); ok && n != 0 {
		t.Errorf("a hello for secret.test in 2-byte records: the server got %d bytes", n)
	}
	good := records(clientHello(t, "allowed.test", 100), 2)
	if n, ok := send(good); !ok || n != len(good) {
		t.Errorf("a hello for allowed.test in 2-byte records: the server got %d of %d bytes", n, len(good))
	}
	huge := append([]byte{1, 0x01, 0x20, 0}, make([]byte, 0x012000)...) // declares 73,728 bytes
	if n, ok := send(records(huge, 1000)); ok && n != 0 {
		t.Errorf("a hello over the bound: the server got %d bytes", n)
	}
	cut := append(records(clientHello(t, "allowed.test", 0)[:40], 40), 0x17, 3, 3, 0, 1, 0)
	if n, ok := send(cut); ok && n != 0 {
		t.Errorf("a hello cut by an application record: the server got %d bytes", n)
	}
	r := p.Close()
	var reasons []string
	for _, d := range r.Denied {
		reasons = append(reasons, d.Host+": "+d.Reason)
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"secret.test:" + port + ": the TLS server name in a tunnel to allowed.test",
		"allowed.test:" + port + ": the tunnel's TLS server name cannot be checked: a TLS ClientHello of 73728 bytes, over hunk's bound of 64 KiB"} {
		if !strings.Contains(all, want) {
			t.Errorf("denied lacks %q:\n%s", want, all)
		}
	}
	if len(r.Denied) != 2 || r.Denied[1].Count != 2 { // the hello too long, the hello cut
		t.Errorf("denied: %+v, want allowed.test twice", r.Denied)
	}
	if len(r.Reached) != 1 || r.Reached[0].Connections != 1 {
		t.Errorf("reached: %+v, want allowed.test once (the refused tunnels reached nothing)", r.Reached)
	}
}
