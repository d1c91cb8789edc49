//go:build linux

package sandbox

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// bwrapEgressFD is the descriptor bubblewrap waits on (--block-fd) when
// hunk places the run's proxy in its network namespace.
const bwrapEgressFD = 5

// bwrapEgress appends what the run's proxy needs: the wait for hunk to
// place the proxy's listener in the sandbox's namespace (Egress.Inside),
// or the door and the proxy's socket, bound in.
func bwrapEgress(a []string, spec Spec) []string {
	e := spec.Egress
	switch {
	case e == nil:
		return a
	case e.Inside:
		return append(a, "--block-fd", strconv.Itoa(bwrapEgressFD))
	}
	// The one socket the command may reach, and the door that offers
	// it on the command's 127.0.0.1.
	return append(a, "--ro-bind", e.Door, egress.DoorPath, "--bind", e.Socket, egress.Socket)
}

// bwrapBlock holds bubblewrap before it runs the command until hunk has
// placed the proxy's listener in the sandbox's network namespace: the
// command's first connection finds it there.
type bwrapBlock struct {
	w   int   // the write end; -1 once released
	err error // the proxy could not be placed: the run was stopped
}

// newBwrapBlock readies the block for p when spec's proxy is placed from
// outside; otherwise a block that does nothing. Without a pipe for it,
// the command is not started (b.err).
func newBwrapBlock(spec Spec, p *proc, status *bwrapStatus) *bwrapBlock {
	b := &bwrapBlock{w: -1}
	if spec.Egress == nil || !spec.Egress.Inside {
		return b
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		b.err = err
		status.onChild = func(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
		return b
	}
	b.w = fds[1]
	p.extra = append(p.extra, fds[0]) // descriptor bwrapEgressFD of bubblewrap's
	status.onChild = func(pid int) {
		if err := spec.Egress.Place(pid); err != nil {
			b.err = err
			_ = syscall.Kill(pid, syscall.SIGKILL) // never the command without its proxy
		}
		b.close()
	}
	return b
}

// close releases bubblewrap (the command starts) or, if it never got
// that far, lets it go.
func (b *bwrapBlock) close() {
	if b.w >= 0 {
		_, _ = unix.Write(b.w, []byte{1})
		unix.Close(b.w)
		b.w = -1
	}
}
