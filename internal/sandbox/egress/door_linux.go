//go:build linux

package egress

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// DoorMain is the door (args: SOCKET [--loopback ADDR:PORT=TARGET]... --
// CMD ARGS...) and its forwarder (args: --forward SOCKET [TARGET]..., the
// proxy's listener as descriptor 3, each loopback rule's after it). The
// door returns only on failure: 125 when the proxy could not be offered,
// else as a shell says a command that could not start (127, 126).
func DoorMain(args []string, stderr io.Writer) int {
	if len(args) >= 2 && args[0] == "--forward" {
		return forward(args[1], args[2:])
	}
	if len(args) < 3 {
		fmt.Fprintln(stderr, "hunk-egress: usage: hunk-egress SOCKET [--loopback ADDR:PORT=TARGET]... -- CMD [ARGS...]")
		return 125
	}
	sock, rest := args[0], args[1:]
	var loops []string
	for len(rest) >= 2 && rest[0] == "--loopback" {
		loops, rest = append(loops, rest[1]), rest[2:]
	}
	if len(rest) < 2 || rest[0] != "--" {
		fmt.Fprintln(stderr, "hunk-egress: usage: hunk-egress SOCKET [--loopback ADDR:PORT=TARGET]... -- CMD [ARGS...]")
		return 125
	}
	code, err := door(sock, loops, rest[1:])
	fmt.Fprintf(stderr, "hunk: %v\n", err)
	return code
}

// door listens, starts the forwarder and becomes the command; it returns
// only on failure. The forwarder is started and the command executed
// from one thread, so that the forwarder's parent-death signal comes when
// the command ends, not when some thread of the door does.
func door(sock string, loops []string, argv []string) (int, error) {
	runtime.LockOSThread()
	addrs := []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(Port))}
	fwArgs := []string{"--forward", sock}
	for _, l := range loops {
		at, target, ok := strings.Cut(l, "=")
		if !ok {
			return 125, fmt.Errorf("egress door: --loopback %q is not ADDR:PORT=TARGET", l)
		}
		addrs, fwArgs = append(addrs, at), append(fwArgs, target)
	}
	fw := exec.Command("/proc/self/exe", fwArgs...)
	fw.Args[0] = DoorName
	for _, at := range addrs {
		ln, err := net.Listen("tcp", at)
		if err != nil {
			return 125, fmt.Errorf("egress door: %w", err)
		}
		f, err := ln.(*net.TCPListener).File()
		ln.Close()
		if err != nil {
			return 125, fmt.Errorf("egress door: %w", err)
		}
		defer f.Close()
		fw.ExtraFiles = append(fw.ExtraFiles, f)
	}
	fw.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := fw.Start(); err != nil {
		return 125, fmt.Errorf("egress door: %w", err)
	}
	for _, f := range fw.ExtraFiles {
		f.Close()
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 127, fmt.Errorf("%s: command not found", argv[0])
	}
	err = syscall.Exec(path, argv, os.Environ())
	return 126, fmt.Errorf("%s: %v", argv[0], err)
}

// forward carries each connection to the proxy's socket: the proxy's own
// listener's as they are, each loopback rule's as a tunnel to its target.
func forward(sock string, targets []string) int {
	serve := func(fd uintptr, target string) error {
		ln, err := net.FileListener(os.NewFile(fd, "listener"))
		if err != nil {
			return err
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				return nil
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer up.Close()
				if target != "" {
					tunnelTo(up, c, target)
					return
				}
				splice(up, c, nil, nil) // as the proxy's tunnels, by splice(2)
			}()
		}
	}
	for i, t := range targets {
		go serve(uintptr(4+i), t)
	}
	if serve(3, "") != nil {
		return 125
	}
	return 0
}
