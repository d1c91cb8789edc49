package sandbox

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// GuardEgress is the guard of an allowlist (Spec.Network.Proxied): the
// command reaches only the allowed hosts, through hunk's egress proxy.
const GuardEgress = "egress"

// DoorBinary is the binary of hunk's egress door (egress.DoorMain), bound
// into a sandbox whose command goes through the proxy: this binary, set
// by the main that knows the door's role; nil in a test binary of a
// package (no allowlist then).
var DoorBinary func() (string, error)

// Egress is a run's proxy (Spec.Network.Proxied): started before its
// driver builds the sandbox, stopped when the run ends. The command finds
// it at 127.0.0.1:egress.Port of its own network namespace, put there
// either by hunk itself before the command starts (Inside: a listener
// made in the namespace, Place) or by the door, hunk's binary bound into
// the sandbox, that forwards to the proxy's socket (Socket, Door).
type Egress struct {
	Inside bool
	// Loops are the loopback rules kept inside the sandbox (the door's
	// --loopback, or listeners placed there: egress/loopback.go).
	Loops  []egress.Loopback
	Socket string // host path of the proxy's socket
	Door   string // host path of the door's binary
	dir    string
	proxy  *egress.Proxy
	placed net.Listener
}

// egressRefused is the refusal of a driver that cannot hold an allowlist.
func egressRefused(driver, why string) error {
	return &GuardError{Driver: driver, Guard: GuardEgress, Reason: why,
		Hint: "--driver bwrap or --driver docker hold --allow-host (a network namespace with only the proxy in it); --network gives the whole network"}
}

// StartEgress starts the proxy of spec's allowlist and readies spec: the
// proxy's variables in its environment, the run's Egress. inside: the
// driver lets hunk place the listener in the sandbox's namespace (Place);
// otherwise the door is bound in — static: it runs without the host's
// libraries (in a container's image).
func StartEgress(spec *Spec, driver string, inside, static bool) (*Egress, error) {
	rules, err := egress.Parse(spec.Network.Allow, spec.Network.Deny)
	if err != nil {
		return nil, err
	}
	loops, err := rules.Loopbacks()
	if err != nil {
		return nil, err
	}
	e := &Egress{Inside: inside, Loops: loops}
	if !inside {
		if err := e.bindDoor(spec, driver, static); err != nil {
			return nil, err
		}
	}
	e.proxy = egress.Start(rules, egress.NewResolver(spec.Network.DNS))
	if !inside {
		ln, err := net.Listen("unix", e.Socket)
		if err != nil {
			os.RemoveAll(e.dir)
			return nil, fmt.Errorf("egress proxy: %w", err)
		}
		e.proxy.Serve(ln)
	}
	spec.Env = egress.Env(spec.Env)
	spec.Egress = e
	return e, nil
}

// bindDoor readies the door: hunk's binary, and a private directory for
// the proxy's socket.
func (e *Egress) bindDoor(spec *Spec, driver string, static bool) error {
	if DoorBinary == nil {
		return egressRefused(driver, "this binary has no egress door")
	}
	door, err := DoorBinary()
	if err != nil {
		return egressRefused(driver, "cannot find hunk's own binary: "+err.Error())
	}
	if static && !isStatic(door) {
		return &GuardError{Driver: driver, Guard: GuardEgress,
			Reason: door + " is linked dynamically and cannot run in the container as its egress door",
			Hint:   "use a static build of hunk (CGO_ENABLED=0 go build, as make build and the releases are), or --driver bwrap"}
	}
	dir, err := socketDir(spec)
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	e.Door, e.dir, e.Socket = door, dir, filepath.Join(dir, "proxy.sock")
	return nil
}

// Place puts the proxy's listener in the network namespace of pid (the
// sandbox's, before its command starts).
func (e *Egress) Place(pid int) error {
	ln, err := egress.ListenIn(pid, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), egress.Port))
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	if e.placed != nil {
		e.placed.Close() // a sandbox started again
	}
	e.placed = ln
	e.proxy.Serve(ln)
	for _, l := range e.Loops {
		ln, err := egress.ListenIn(pid, l.Listen)
		if err != nil {
			return fmt.Errorf("egress proxy: --allow-host %s: %w", l.Target(), err)
		}
		e.proxy.ServeTunnel(ln, l.Target())
	}
	return nil
}

// Stop ends the proxy (every connection through it) and says what went
// through.
func (e *Egress) Stop() *egress.Report {
	r := e.proxy.Close()
	if e.dir != "" {
		os.RemoveAll(e.dir)
		os.Remove(filepath.Dir(e.dir)) // the runs' parent, when no other run is in it
	}
	return &r
}

// socketDir is a new private directory for a proxy's socket, in a place
// no sandbox is shown — $XDG_RUNTIME_DIR (the user's own; every sandbox's
// /run is its own), else the temporary directory (so is its /tmp) — and
// never under a path spec shows its command (the workspace, --rw, --ro,
// the cache): another run's command must not reach this run's proxy.
// Short enough for a socket's path. Every run's directory is in one
// parent of the user's (EgressParents), which every other run hides where
// a place it shows holds it (a --rw /tmp): another run's command cannot
// name this run's socket either.
func socketDir(spec *Spec) (string, error) {
	shown := append(append([]string{spec.Workspace, spec.Cache}, spec.RW...), spec.RO...)
	var err error
	for _, place := range egressPlaces() {
		if Under(place, shown) {
			continue
		}
		parent := egressParent(place)
		for try := 0; try < 3; try++ { // a run ending may remove the empty parent between the two
			if err = privateDir(parent); err != nil {
				break
			}
			var d string
			if d, err = os.MkdirTemp(parent, "run-"); err == nil {
				return d, nil
			}
			if !os.IsNotExist(err) {
				break
			}
		}
	}
	if err == nil {
		err = fmt.Errorf("no private place for its socket (XDG_RUNTIME_DIR, TMPDIR and /tmp are all shown to the command)")
	}
	return "", err
}

// egressPlaces are where the runs' socket parents may be: the user's
// runtime directory, the temporary directory, /tmp (real paths; a place
// too long for a socket's path left out).
func egressPlaces() []string {
	var out []string
	for _, place := range []string{os.Getenv("XDG_RUNTIME_DIR"), os.TempDir(), "/tmp"} {
		if place == "" || len(place) > 56 {
			continue
		}
		if real, e := filepath.EvalSymlinks(place); e == nil {
			place = real
		}
		if !slices.Contains(out, place) {
			out = append(out, place)
		}
	}
	return out
}

// egressParent is the user's parent of run directories in place.
func egressParent(place string) string {
	return filepath.Join(place, fmt.Sprintf("hunk-egress-%d", os.Getuid()))
}

// privateDir makes dir (0700) or checks that it is a directory of the
// user's, mode 0700, not a link: a directory another user made there in
// advance is not used.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a private directory of this user's (mode 0700)", dir)
	}
	return nil
}

// EgressParents are the parents of the runs' proxy sockets that exist now:
// a run that shows one of them (a --rw /tmp) hides it as hunk's own state,
// so that its command cannot reach another run's proxy.
func EgressParents() []string {
	var out []string
	for _, place := range egressPlaces() {
		if p := egressParent(place); dirExists(p) {
			out = append(out, p)
		}
	}
	return out
}

func dirExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// isStatic reports whether the ELF binary at path needs no dynamic loader.
func isStatic(path string) bool {
	interp, elf := ELFInterp(path)
	return elf && interp == ""
}
