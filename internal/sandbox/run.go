//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// KillGrace is how long a timed-out (or interrupted) command has between
// SIGTERM and SIGKILL.
const KillGrace = 2 * time.Second

// Outcome is how a supervised process ended, before a driver interprets it.
type Outcome struct {
	ExitCode int // exit status, or 128+signal
	Signaled bool
	TimedOut bool
	Canceled bool // ctx was canceled (hunk was interrupted)
	Duration time.Duration
}

// Streams are the two captures of a run.
type Streams struct {
	Stdout, Stderr *Capture
}

// NewStreams returns the captures for spec (capped at spec.MaxOutput, live
// copies to spec.Stdout and spec.Stderr).
func NewStreams(spec Spec) Streams {
	return Streams{Stdout: NewCapture(spec.MaxOutput, spec.Stdout), Stderr: NewCapture(spec.MaxOutput, spec.Stderr)}
}

// Fill copies the captured output into r.
func (s Streams) Fill(r *Result) {
	s.Stdout.Close()
	s.Stderr.Close()
	r.Stdout, r.Stderr = s.Stdout.Bytes(), s.Stderr.Bytes()
	r.Truncated = s.Stdout.Truncated() || s.Stderr.Truncated()
}

var subreaperOnce sync.Once

// supervise runs p as the root of a process tree: output captured without
// ever blocking the tree, the timeout and ctx enforced on every process of
// it (SIGTERM, KillGrace, SIGKILL), and nothing of the tree left running
// once the main process has exited — background and daemonized processes
// included, which the calling process, made a child subreaper, gets back as
// orphans.
//
// The whole run happens on one new goroutine locked to its thread, which
// forks the command (confined by opts.confine in the child: fork.go) and
// watches it: no goroutine per pipe, no hand-off between threads to start,
// wait and drain (each wake-up of another thread costs a good fraction of a
// millisecond on a small virtual machine). Under cgroup v1 the thread joins
// the run's cgroups just for the fork. A failure to start is a *setupError
// (the confinement failed) or a *startError (the exec failed).
func supervise(ctx context.Context, spec Spec, p *proc, cg *cgroup, st Streams, opts superviseOpts) (Outcome, error) {
	type result struct {
		out Outcome
		err error
	}
	if !isRoot() { // root's processes are exempt from RLIMIT_NPROC
		reserveThreads(4)
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the goroutine exits locked and takes the thread
		// (which may have been in the run's v1 cgroups) with it. The
		// command's parent-death signal is bound to this thread.
		runtime.LockOSThread()
		out, err := superviseHere(ctx, spec, p, cg, st, opts)
		done <- result{out, err}
	}()
	r := <-done
	return r.out, r.err
}

var reserveOnce sync.Once

// reserveThreads makes the Go runtime hold n idle OS threads before the
// command starts. A command that exhausts the user's process limit (a fork
// bomb under RLIMIT_NPROC, which hunk shares with it) would otherwise make
// the runtime's next thread creation fail, and hunk die of it mid-run; with
// threads in reserve, hunk goes on supervising, kills the tree and reports.
// Each goroutine holds a thread of its own until all have one, then lets
// it go back to the runtime's idle list.
func reserveThreads(n int) {
	reserveOnce.Do(func() {
		var held, release sync.WaitGroup
		held.Add(n)
		release.Add(1)
		for range n {
			go func() {
				runtime.LockOSThread()
				held.Done()
				release.Wait()
				runtime.UnlockOSThread()
			}()
		}
		held.Wait()
		release.Done()
	})
}

// stream is one descriptor the supervisor reads until EOF.
type stream struct {
	fd   int
	w    io.Writer
	live *liveWriter // the live copy of w, read from only while it keeps up
	eof  bool
}

// superviseHere is supervise on the calling, locked thread.
func superviseHere(ctx context.Context, spec Spec, p *proc, cg *cgroup, st Streams, opts superviseOpts) (Outcome, error) {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })

	fds := append([]int(nil), p.extra...) // every descriptor still open here, closed on return
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	pipe := func() (r, w int, err error) {
		var pp [2]int
		if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
			return -1, -1, err
		}
		fds = append(fds, pp[0], pp[1])
		// Bigger pipes, fewer wake-ups for a command that prints a lot.
		_, _ = unix.FcntlInt(uintptr(pp[0]), unix.F_SETPIPE_SZ, 1<<20)
		return pp[0], pp[1], unix.SetNonblock(pp[0], true)
	}
	rOut, wOut, err := pipe()
	if err != nil {
		return Outcome{}, err
	}
	rErr, wErr, err := pipe()
	if err != nil {
		return Outcome{}, err
	}
	stdin, closeStdin, err := stdinFD(spec.Stdin, &fds)
	if err != nil {
		return Outcome{}, err
	}
	defer closeStdin()
	// ctx's cancellation (hunk interrupted) wakes the poll through an eventfd.
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return Outcome{}, err
	}
	fds = append(fds, wake)
	var wakeMu sync.Mutex
	wakeClosed := false
	signalWake := func() {
		wakeMu.Lock()
		defer wakeMu.Unlock()
		if !wakeClosed {
			_, _ = unix.Write(wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		}
	}
	stopWake := context.AfterFunc(ctx, signalWake)
	defer func() {
		stopWake()
		wakeMu.Lock() // a wake-up under way finishes before wake is closed
		wakeClosed = true
		wakeMu.Unlock()
	}()

	if spec.Ready != nil {
		<-spec.Ready
	}
	t := newTree(cg)
	start := time.Now()
	cgroupFD, err := cg.enter()
	if err != nil {
		cg.leaveThread()
		return Outcome{}, &setupError{err}
	}
	pid, pidfd, err := p.start(stdin, wOut, wErr, opts.confine, cgroupFD)
	cg.leaveThread()
	for _, fd := range p.extra {
		unix.Close(fd)
	}
	fds = without(fds, p.extra...)
	var se *setupError
	switch {
	case errors.As(err, &se):
		return Outcome{}, err
	case err != nil:
		return Outcome{}, &startError{err}
	}
	if pidfd >= 0 {
		fds = append(fds, pidfd)
	}
	t.mainPid = pid
	// The write ends belong to the command now.
	unix.Close(wOut)
	unix.Close(wErr)
	fds = without(fds, wOut, wErr)

	// Live output goes out from goroutines of its own: a destination that
	// blocks must not stop this loop (and with it the timeout).
	streams := []*stream{
		{fd: rOut, w: st.Stdout, live: st.Stdout.liveAsync(signalWake)},
		{fd: rErr, w: st.Stderr, live: st.Stderr.liveAsync(signalWake)},
	}
	for _, x := range opts.extra {
		streams = append(streams, &stream{fd: x.fd, w: x.w})
	}
	buf := make([]byte, 32<<10)
	// readAll reads what s holds, but at most 1 MiB a turn: a command that
	// writes as fast as hunk reads must not keep the loop from its deadline
	// (and from noticing that the live copy lags).
	readAll := func(s *stream) {
		for turn := 0; !s.eof && turn < 32; turn++ {
			n, err := unix.Read(s.fd, buf)
			if n > 0 {
				_, _ = s.w.Write(buf[:n])
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err != unix.EAGAIN {
				s.eof = true // EOF, or an error that will not go away
			}
			return
		}
	}

	var (
		out        Outcome
		ws         syscall.WaitStatus
		mainDone   bool
		terminated atomic.Bool // the background terminate has finished
		stopping   bool        // timed out or canceled: terminate started
		drainBy    time.Time   // the tree is gone: drain the pipes until then
	)
	var deadline time.Time
	if spec.Timeout > 0 {
		deadline = start.Add(spec.Timeout)
	}
	reapMain := func() bool {
		for {
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if wpid == pid || err == syscall.ECHILD {
				return true
			}
			return false
		}
	}
	stop := func() {
		// SIGTERM, the grace period, SIGKILL: on another goroutine, so that
		// this one keeps draining the pipes the tree may still write to.
		stopping = true
		go func() {
			t.terminate(KillGrace)
			terminated.Store(true)
			signalWake()
		}()
	}
	pfds := make([]unix.PollFd, 0, len(streams)+2)
	for {
		if !mainDone && !stopping {
			switch {
			case ctx.Err() != nil:
				out.Canceled = true
				stop()
			case !deadline.IsZero() && !time.Now().Before(deadline):
				out.TimedOut = true
				stop()
			}
		}
		if mainDone && drainBy.IsZero() && (!stopping || terminated.Load()) {
			// The main process is gone: what it left behind goes too. In
			// the common case nothing is left — no child of hunk (every
			// orphan of the tree comes back to hunk, the subreaper), an
			// empty cgroup — and one system call or two say so; otherwise
			// the tree is searched and killed.
			if !stopping && opts.afterExit != nil {
				for _, s := range streams[2:] {
					readAll(s) // what the driver reported, before it is asked
				}
				opts.afterExit()
			}
			if stopping || !t.settled() {
				t.kill(5 * time.Second)
			}
			// Every writer of the pipes is dead now; drain them (bounded,
			// in case something outside the tree inherited a pipe).
			drainBy = time.Now().Add(2 * time.Second)
		}
		open := false
		for _, s := range streams[:2] {
			open = open || !s.eof
		}
		if !drainBy.IsZero() && (!open || !time.Now().Before(drainBy)) {
			break
		}

		pfds = pfds[:0]
		// While the tree runs, a stream whose live copy lags is left unread;
		// once it is gone, what is left in the pipes is bounded: drain it.
		held := func(s *stream) bool { return drainBy.IsZero() && s.live != nil && s.live.backlogged() }
		for _, s := range streams {
			if !s.eof && !held(s) {
				pfds = append(pfds, unix.PollFd{Fd: int32(s.fd), Events: unix.POLLIN})
			}
		}
		if !mainDone && pidfd >= 0 {
			pfds = append(pfds, unix.PollFd{Fd: int32(pidfd), Events: unix.POLLIN})
		}
		pfds = append(pfds, unix.PollFd{Fd: int32(wake), Events: unix.POLLIN})
		timeout := -1
		until := func(at time.Time) {
			if at.IsZero() {
				return
			}
			ms := int(time.Until(at)/time.Millisecond) + 1
			if ms < 0 {
				ms = 0
			}
			if timeout < 0 || ms < timeout {
				timeout = ms
			}
		}
		if !mainDone && !stopping {
			until(deadline)
		}
		until(drainBy)
		if !mainDone && pidfd < 0 {
			until(time.Now().Add(10 * time.Millisecond)) // no pidfd: look every 10 ms
		}
		if _, err := unix.Poll(pfds, timeout); err != nil && err != unix.EINTR {
			return out, fmt.Errorf("poll: %w", err)
		}
		for _, s := range streams {
			if !held(s) {
				readAll(s)
			}
		}
		var drop [8]byte
		_, _ = unix.Read(wake, drop[:])
		if !mainDone && reapMain() {
			mainDone = true
			t.mainDone.Store(true)
			out.Duration = time.Since(start)
		}
	}

	switch {
	case ws.Signaled():
		out.Signaled = true
		out.ExitCode = 128 + int(ws.Signal())
	default:
		out.ExitCode = ws.ExitStatus()
	}
	return out, nil
}

// stdinFD is the descriptor the command reads: r's own for a file, /dev/null
// for none, else a pipe fed from r by a goroutine (stopped by done once the
// run is over). Descriptors opened here are added to fds (closed by the
// caller).
func stdinFD(r io.Reader, fds *[]int) (fd int, done func(), err error) {
	switch f := r.(type) {
	case *os.File:
		return int(f.Fd()), func() {}, nil
	case nil:
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, nil, err
		}
		*fds = append(*fds, fd)
		return fd, func() {}, nil
	}
	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		return -1, nil, err
	}
	*fds = append(*fds, pp[0])
	pw := os.NewFile(uintptr(pp[1]), "stdin")
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pp[0], func() { pw.Close() }, nil
}

// without returns fds less the given ones.
func without(fds []int, drop ...int) []int {
	out := fds[:0]
	for _, fd := range fds {
		keep := true
		for _, d := range drop {
			keep = keep && fd != d
		}
		if keep {
			out = append(out, fd)
		}
	}
	return out
}

// finish turns an outcome into the Result every driver reports: 124 for a
// timeout; OOMKilled when the kernel killed a process of the run for the
// memory limit (the command itself then exits 137, SIGKILL; when only a
// child was killed, the command's own code is kept).
func finish(driver string, out Outcome, cg *cgroup, st Streams) Result {
	r := Result{Driver: driver, ExitCode: out.ExitCode, TimedOut: out.TimedOut, Duration: out.Duration}
	r.OOMKilled = cg.oomKilled()
	if out.TimedOut {
		r.ExitCode = 124
	}
	st.Fill(&r)
	return r
}

// superviseOpts are a driver's additions to supervise.
type superviseOpts struct {
	confine confinement // what the command's process applies to itself before exec
	// afterExit, when set, runs once the main process has exited by itself,
	// before the check for leftovers: it waits for what the driver knows
	// dies with the main process (bwrap: its pid namespace). What the extra
	// streams hold by then has been read.
	afterExit func()
	// extra are further descriptors to read until EOF (bwrap's status).
	extra []extraStream
}

// extraStream is a descriptor of the driver's own that supervise reads
// into w alongside the command's output.
type extraStream struct {
	fd int
	w  io.Writer
}

// startError is a command that could not be executed.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }
