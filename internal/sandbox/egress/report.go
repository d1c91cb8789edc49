package egress

import (
	"log"
	"net"
	"strconv"
	"sync/atomic"
)

// Report is what went through a run's proxy (details.network): the hosts
// reached, those refused and why, the connections and the bytes.
type Report struct {
	Connections   int     `json:"connections"`
	BytesSent     int64   `json:"bytesSent"`     // from the command to the hosts
	BytesReceived int64   `json:"bytesReceived"` // from the hosts to the command
	Reached       []Host  `json:"reached,omitempty"`
	Denied        []Block `json:"denied,omitempty"` // refused by the rules
	Failed        []Block `json:"failed,omitempty"` // allowed, but not reached (no such name, refused, timed out)
}

// Host is a host:port the command reached, its connections and bytes.
type Host struct {
	Host          string `json:"host"`
	Connections   int    `json:"connections"`
	BytesSent     int64  `json:"bytesSent"`
	BytesReceived int64  `json:"bytesReceived"`
}

// Block is a host:port the proxy did not connect to: why, the
// --allow-host value that would allow it ("" when none would), and how
// many times it was asked for.
type Block struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
	Fix    string `json:"allowHost,omitempty"`
	Count  int    `json:"count"`
}

// maxListed bounds each list of a Report.
const maxListed = 64

var discardLog = log.New(discard{}, "", 0)

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// refuse records a refused connection and returns it.
func (p *Proxy) refuse(rf *refusal) error {
	hp := net.JoinHostPort(rf.host, strconv.Itoa(rf.port))
	b := Block{Host: hp, Count: 1}
	list := &p.report.Failed
	if rf.deny != nil {
		b.Reason, b.Fix, list = rf.deny.Reason, rf.deny.Fix, &p.report.Denied
	} else {
		b.Reason = rf.err.Error()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range *list {
		if (*list)[i].Host == hp {
			(*list)[i].Count++
			return rf
		}
	}
	if len(*list) < maxListed {
		*list = append(*list, b)
	}
	return rf
}

// reached counts a new connection to hp and returns it wrapped, so that
// its bytes are counted when it closes.
func (p *Proxy) reached(c net.Conn, hp string) net.Conn {
	return &countedConn{Conn: c, p: p, hp: hp}
}

// countedConn counts a connection's bytes into its proxy's report.
type countedConn struct {
	net.Conn
	p        *Proxy
	hp       string
	sent, rx atomic.Int64
	once     atomic.Bool
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.rx.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n))
	return n, err
}

func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	if c.once.Swap(true) {
		return err
	}
	sent, rx := c.sent.Load(), c.rx.Load()
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &p.report
	r.Connections++
	r.BytesSent += sent
	r.BytesReceived += rx
	for i := range r.Reached {
		if r.Reached[i].Host == c.hp {
			h := &r.Reached[i]
			h.Connections++
			h.BytesSent += sent
			h.BytesReceived += rx
			return err
		}
	}
	if len(r.Reached) < maxListed {
		r.Reached = append(r.Reached, Host{Host: c.hp, Connections: 1, BytesSent: sent, BytesReceived: rx})
	}
	return err
}
