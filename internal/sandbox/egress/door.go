package egress

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// The door: the proxy is offered to the command on its own loopback, at
// 127.0.0.1:Port — its network namespace has nothing else — by a helper
// inside the sandbox, hunk's own binary in that role (DoorName): it
// listens, starts a forwarder that carries each connection to the run's
// proxy socket (bound into the sandbox at Socket), and then becomes the
// command (execve: same pid, same exit status, same signals).

// DoorName is argv[0] of the door.
const DoorName = "hunk-egress"

// Port is the proxy's port on the command's 127.0.0.1.
const Port = 3128

// Inside the sandbox: where the door's binary and the proxy's socket are
// bound.
const (
	DoorPath = "/run/hunk-egress/" + DoorName
	Socket   = "/run/hunk-egress/proxy.sock"
)

// DoorArgv is the sandbox's command: the door, then argv.
func DoorArgv(argv []string) []string {
	return append([]string{DoorPath, Socket, "--"}, argv...)
}

// ProxyURL is the proxy's address as the command's environment gives it.
var ProxyURL = "http://127.0.0.1:" + strconv.Itoa(Port)

// Env sets the command's proxy variables in env (K=V), in both spellings
// and in the package managers' own, replacing any the command was given.
func Env(env []string) []string {
	set := map[string]string{
		"HTTP_PROXY": ProxyURL, "HTTPS_PROXY": ProxyURL, "ALL_PROXY": ProxyURL,
		"http_proxy": ProxyURL, "https_proxy": ProxyURL, "all_proxy": ProxyURL,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
		"npm_config_proxy": ProxyURL, "npm_config_https_proxy": ProxyURL, // npm's own settings win over the variables above
		"YARN_HTTP_PROXY": ProxyURL, "YARN_HTTPS_PROXY": ProxyURL, // yarn berry reads only its own
		"CARGO_HTTP_PROXY": ProxyURL,
	}
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := cut(kv)
		if _, ours := set[k]; !ours {
			out = append(out, kv)
		}
	}
	for _, k := range envOrder {
		out = append(out, k+"="+set[k])
	}
	return out
}

var envOrder = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY"}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// DoorMain is the door (args: SOCKET -- CMD ARGS...) and its forwarder
// (args: --forward SOCKET, the listener as descriptor 3). It returns only
// on failure: 125, as a sandbox that could not start.
func DoorMain(args []string, stderr io.Writer) int {
	if len(args) == 2 && args[0] == "--forward" {
		return forward(args[1])
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(stderr, "hunk-egress: usage: hunk-egress SOCKET -- CMD [ARGS...]")
		return 125
	}
	if err := door(args[0], args[2:]); err != nil {
		fmt.Fprintf(stderr, "hunk: egress door: %v\n", err)
		return 125
	}
	return 0
}

// door listens, starts the forwarder and becomes the command. The
// forwarder is started and the command executed from one thread, so that
// the forwarder's parent-death signal comes when the command ends, not
// when some thread of the door does.
func door(sock string, argv []string) error {
	runtime.LockOSThread()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: Port})
	if err != nil {
		return err
	}
	f, err := ln.File()
	ln.Close()
	if err != nil {
		return err
	}
	fw := exec.Command("/proc/self/exe", "--forward", sock)
	fw.Args[0] = DoorName
	fw.ExtraFiles = []*os.File{f}
	fw.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := fw.Start(); err != nil {
		return err
	}
	f.Close()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "hunk: %s: command not found\n", argv[0])
		os.Exit(127)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "hunk: %s: %v\n", argv[0], err)
	os.Exit(126)
	return nil
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
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(up, c)
				closeWrite(up)
				close(done)
			}()
			_, _ = io.Copy(c, up)
			closeWrite(c)
			<-done
		}()
	}
}
