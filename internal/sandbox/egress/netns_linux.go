//go:build linux

package egress

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// ListenIn listens on at (127.0.0.1:Port for the proxy; a loopback rule's
// address) inside the network namespace of pid
// (a sandbox's, before its command starts): the socket is made by a thread
// of hunk's that joins that namespace and is never used again, so the
// proxy serves the command's loopback directly — no door, no forwarder.
// Needs CAP_SYS_ADMIN (CanListenIn). The address is bound even before the
// namespace's loopback is up (IP_FREEBIND).
func ListenIn(pid int, at netip.AddrPort) (net.Listener, error) {
	type made struct {
		fd  int
		err error
	}
	c := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, its namespace with it
		fd, err := listenIn(pid, at)
		c <- made{fd, err}
	}()
	m := <-c
	if m.err != nil {
		return nil, m.err
	}
	f := os.NewFile(uintptr(m.fd), "egress")
	defer f.Close()
	return net.FileListener(f)
}

// listenIn joins pid's network namespace (on the calling, locked thread)
// and makes the listening socket with plain system calls: nothing of the
// net package's runs in that namespace.
func listenIn(pid int, at netip.AddrPort) (int, error) {
	ns, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(ns)
	if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("joining the sandbox's network namespace: %w", err)
	}
	family, level, freebind := unix.AF_INET, unix.SOL_IP, unix.IP_FREEBIND
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(at.Port()), Addr: at.Addr().As4()}
	if at.Addr().Is6() {
		family, level, freebind = unix.AF_INET6, unix.SOL_IPV6, unix.IPV6_FREEBIND
		sa = &unix.SockaddrInet6{Port: int(at.Port()), Addr: at.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, level, freebind, 1); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// CanListenIn reports whether hunk may join another network namespace
// (CAP_SYS_ADMIN): it tries its own, once.
var CanListenIn = sync.OnceValue(func() bool {
	c := make(chan bool, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			c <- false
			return
		}
		defer unix.Close(ns)
		c <- unix.Setns(ns, unix.CLONE_NEWNET) == nil
	}()
	return <-c
})
