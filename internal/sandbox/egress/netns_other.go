//go:build !linux

package egress

import (
	"errors"
	"net"
	"net/netip"
)

// ListenIn needs Linux's network namespaces.
func ListenIn(pid int, at netip.AddrPort) (net.Listener, error) {
	return nil, errors.New("no network namespaces here")
}

// CanListenIn: never, here.
func CanListenIn() bool { return false }
