//go:build !linux

package egress

import (
	"errors"
	"net"
)

// ListenIn needs Linux's network namespaces.
func ListenIn(pid int) (net.Listener, error) { return nil, errors.New("no network namespaces here") }

// CanListenIn: never, here.
func CanListenIn() bool { return false }
