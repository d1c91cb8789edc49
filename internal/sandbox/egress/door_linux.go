//go:build linux

package egress

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// DoorMain is the door (args: SOCKET -- CMD ARGS...) and its forwarder
// (args: --forward SOCKET, the listener as descriptor 3). The door
// returns only on failure: 125 when the proxy could not be offered, else
// as a shell says a command that could not start (127, 126).
func DoorMain(args []string, stderr io.Writer) int {
	if len(args) == 2 && args[0] == "--forward" {
		return forward(args[1])
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(stderr, "hunk-egress: usage: hunk-egress SOCKET -- CMD [ARGS...]")
		return 125
	}
	code, err := door(args[0], args[2:])
	fmt.Fprintf(stderr, "hunk: %v\n", err)
	return code
}

// door listens, starts the forwarder and becomes the command; it returns
// only on failure. The forwarder is started and the command executed
// from one thread, so that the forwarder's parent-death signal comes when
// the command ends, not when some thread of the door does.
func door(sock string, argv []string) (int, error) {
	runtime.LockOSThread()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: Port})
	if err != nil {
		return 125, fmt.Errorf("egress door: %w", err)
	}
	f, err := ln.File()
	ln.Close()
	if err != nil {
		return 125, fmt.Errorf("egress door: %w", err)
	}
	fw := exec.Command("/proc/self/exe", "--forward", sock)
	fw.Args[0] = DoorName
	fw.ExtraFiles = []*os.File{f}
	fw.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := fw.Start(); err != nil {
		return 125, fmt.Errorf("egress door: %w", err)
	}
	f.Close()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 127, fmt.Errorf("%s: command not found", argv[0])
	}
	err = syscall.Exec(path, argv, os.Environ())
	return 126, fmt.Errorf("%s: %v", argv[0], err)
}

// forward carries each connection to the proxy's socket.
func forward(sock string) int {
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return 125
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer up.Close()
			splice(up, c, nil, nil) // as the proxy's tunnels, by splice(2)
		}()
	}
}
