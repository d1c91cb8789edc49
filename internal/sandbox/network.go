package sandbox

import "strings"

// Network is what a run's command may reach over the network: nothing
// (the zero value), the host's whole network (Host: --network), or only
// the hosts its egress rules allow, through hunk's egress proxy (Allow and
// Deny: --allow-host, --deny-host; docs/exec.md). A driver that cannot
// hold a setting refuses the run.
type Network struct {
	// Host is the host's whole network, its 127.0.0.1 and the cloud
	// metadata endpoint included.
	Host bool `json:"host,omitempty"`
	// Allow and Deny are host patterns (host, *.domain, host:port, an
	// address or a CIDR): a connection is made only to a host an Allow
	// rule names and no Deny rule does.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// DNS is the DNS server the proxy asks (host:port; "" the system's).
	DNS string `json:"dns,omitempty"`
}

// Any reports whether the command reaches any network at all.
func (n Network) Any() bool { return n.Host || len(n.Allow) > 0 }

// Proxied reports whether the command's only way out is hunk's egress
// proxy (an allowlist without --network).
func (n Network) Proxied() bool { return !n.Host && len(n.Allow) > 0 }

// String is the setting as a person reads it: "none", "host" or
// "allow a, b".
func (n Network) String() string {
	switch {
	case n.Host:
		return "host"
	case len(n.Allow) > 0:
		return "allow " + strings.Join(n.Allow, ", ")
	}
	return "none"
}
