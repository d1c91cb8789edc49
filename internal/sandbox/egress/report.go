package egress

import (
	"log"
	"net"
	"strconv"
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

// count adds one connection to hp and its bytes to the report.
func (p *Proxy) count(hp string, sent, rx int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &p.report
	r.Connections++
	r.BytesSent += sent
	r.BytesReceived += rx
	for i := range r.Reached {
		if h := &r.Reached[i]; h.Host == hp {
			h.Connections++
			h.BytesSent += sent
			h.BytesReceived += rx
			return
		}
	}
	if len(r.Reached) < maxListed {
		r.Reached = append(r.Reached, Host{Host: hp, Connections: 1, BytesSent: sent, BytesReceived: rx})
	}
}
