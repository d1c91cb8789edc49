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
	// Root is exempt from RLIMIT_NPROC, not from a pids cgroup hunk shares
	// with the command (a login session's, a container's): reserve always.
	reserveThreads(spareThreads)
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

// spareThreads is how many idle OS threads hunk keeps for itself while a
// command runs: the supervisor's helpers, a blocked write of the live
// output, the clean-up, the garbage collector — each may want a thread of
// its own at a moment the command leaves none to make.
const spareThreads = 8

// reserveThreads makes the Go runtime hold at least n idle OS threads
// before the command starts — before every run: a run's locked supervisor
// thread leaves with it. A command that exhausts a process limit hunk
// shares with it (a fork bomb under RLIMIT_NPROC, or in the pids cgroup of
// a login session or a container, root's included) would otherwise make
// the runtime's next thread creation fail, and hunk die of it mid-run;
// with threads in reserve, hunk goes on supervising, kills the tree and
// reports. Each goroutine holds a thread of its own until all have one,
// then lets it go back to the runtime's idle list (where the threads are
// there already, this costs no thread creation).
func reserveThreads(n int) {
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
}

// stream is one descriptor the supervisor reads until EOF.
type stream struct {
	fd   int
	w    io.Writer
	live *liveWriter // the live copy of w, read from only while it keeps up
	eof  bool
}

// supervisor is one run of supervise on the calling, locked thread: open
// sets up the pipes, stdin and the wake-up descriptor and starts the
// command; loop watches it (output, the timeout, ctx, the main process's
// exit) until the tree is gone and its pipes are drained; close releases
// every descriptor.
type supervisor struct {
	ctx  context.Context
	spec Spec
	p    *proc
	cg   *cgroup
	st   Streams
	opts superviseOpts

	fds        []int // every descriptor still open here, closed by close
	closeStdin func()
	stopWake   func() bool
	wake       int // an eventfd: ctx's cancellation and the live writers wake the poll
	wakeMu     sync.Mutex
	wakeClosed bool

	mediator   *mediator // the landlock driver's metadata mediator, if any
	t          *tree
	start      time.Time
	pid, pidfd int
	streams    []*stream
	buf        []byte

	out        Outcome
	ws         syscall.WaitStatus
	deadline   time.Time   // the timeout; zero for none
	mainDone   bool        // the main process has been reaped
	stopping   bool        // timed out or canceled: terminate started
	terminated atomic.Bool // the background terminate has finished
	drainBy    time.Time   // the tree is gone: drain the pipes until then
}

// superviseHere is supervise on the calling, locked thread.
func superviseHere(ctx context.Context, spec Spec, p *proc, cg *cgroup, st Streams, opts superviseOpts) (Outcome, error) {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	release, err := takeTurn(ctx, opts.attributed)
	if err != nil {
		// Interrupted while waiting for its turn: nothing of it ran.
		return Outcome{Canceled: true, ExitCode: 130}, nil
	}
	defer release()
	s := &supervisor{ctx: ctx, spec: spec, p: p, cg: cg, st: st, opts: opts, closeStdin: func() {}, pidfd: -1}
	defer s.close()
	if err := s.open(); err != nil {
		return Outcome{}, err
	}
	if err := s.loop(); err != nil {
		return s.out, err
	}
	switch {
	case s.ws.Signaled():
		s.out.Signaled = true
		s.out.ExitCode = 128 + int(s.ws.Signal())
	default:
		s.out.ExitCode = s.ws.ExitStatus()
	}
	return s.out, nil
}

// pipe makes a pipe whose read end does not block, with a bigger buffer
// (fewer wake-ups for a command that prints a lot).
func (s *supervisor) pipe() (r, w int, err error) {
	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, err
	}
	s.fds = append(s.fds, pp[0], pp[1])
	_, _ = unix.FcntlInt(uintptr(pp[0]), unix.F_SETPIPE_SZ, 1<<20)
	return pp[0], pp[1], unix.SetNonblock(pp[0], true)
}

// signalWake wakes the poll (unless the run is over).
func (s *supervisor) signalWake() {
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	if !s.wakeClosed {
		_, _ = unix.Write(s.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}
}

// open prepares the run and starts the command.
func (s *supervisor) open() error {
	s.fds = append(s.fds, s.p.extra...)
	rOut, wOut, err := s.pipe()
	if err != nil {
		return err
	}
	rErr, wErr, err := s.pipe()
	if err != nil {
		return err
	}
	stdin, closeStdin, err := stdinFD(s.spec.Stdin, &s.fds)
	if err != nil {
		return err
	}
	s.closeStdin = closeStdin
	// ctx's cancellation (hunk interrupted) wakes the poll through an eventfd.
	if s.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return err
	}
	s.fds = append(s.fds, s.wake)
	s.stopWake = context.AfterFunc(s.ctx, s.signalWake)

	if s.spec.Ready != nil {
		<-s.spec.Ready
	}
	if !s.opts.attributed {
		waitWatchdog() // a child of hunk's it must not count as the run's
	}
	s.t = newTree(s.cg, s.opts.attributed, s.opts.roots)
	s.start = time.Now()
	cgroupFD, err := s.cg.enter()
	if err != nil {
		s.cg.leaveThread()
		return &setupError{err}
	}
	pid, pidfd, err := s.p.start(stdin, wOut, wErr, s.opts.confine, cgroupFD)
	s.cg.leaveThread()
	for _, fd := range s.p.extra {
		unix.Close(fd)
	}
	s.fds = without(s.fds, s.p.extra...)
	var se *setupError
	switch {
	case errors.As(err, &se):
		return err
	case err != nil:
		return &startError{err}
	}
	if pidfd >= 0 {
		s.fds = append(s.fds, pidfd)
	}
	s.pid, s.pidfd = pid, pidfd
	watchMain(pid)
	if s.p.listener >= 0 {
		if s.mediator, err = startMediator(s.p.listener, *s.opts.confine.mediate); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return &setupError{err}
		}
	}
	s.t.mainPid = pid
	// The write ends belong to the command now.
	unix.Close(wOut)
	unix.Close(wErr)
	s.fds = without(s.fds, wOut, wErr)

	// Live output goes out from goroutines of its own: a destination that
	// blocks must not stop the loop (and with it the timeout).
	s.streams = []*stream{
		{fd: rOut, w: s.st.Stdout, live: s.st.Stdout.liveAsync(s.signalWake)},
		{fd: rErr, w: s.st.Stderr, live: s.st.Stderr.liveAsync(s.signalWake)},
	}
	for _, x := range s.opts.extra {
		s.streams = append(s.streams, &stream{fd: x.fd, w: x.w})
	}
	s.buf = make([]byte, 32<<10)
	if s.spec.Timeout > 0 {
		s.deadline = s.start.Add(s.spec.Timeout)
	}
	return nil
}

// close releases what open acquired.
func (s *supervisor) close() {
	if s.mediator != nil {
		s.mediator.close()
	}
	s.closeStdin()
	if s.stopWake != nil {
		s.stopWake()
		s.wakeMu.Lock() // a wake-up under way finishes before wake is closed
		s.wakeClosed = true
		s.wakeMu.Unlock()
	}
	for _, fd := range s.fds {
		unix.Close(fd)
	}
}

// readAll reads what x holds, but at most 1 MiB a turn: a command that
// writes as fast as hunk reads must not keep the loop from its deadline
// (and from noticing that the live copy lags).
func (s *supervisor) readAll(x *stream) {
	for turn := 0; !x.eof && turn < 32; turn++ {
		n, err := unix.Read(x.fd, s.buf)
		if n > 0 {
			_, _ = x.w.Write(s.buf[:n])
			continue
		}
		if err == unix.EINTR {
			continue
		}
		if err != unix.EAGAIN {
			x.eof = true // EOF, or an error that will not go away
		}
		return
	}
}

// reapMain reports whether the main process has exited (and reaps it).
func (s *supervisor) reapMain() bool {
	for {
		wpid, err := syscall.Wait4(s.pid, &s.ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		return wpid == s.pid || err == syscall.ECHILD
	}
}

// stop sends SIGTERM, waits the grace period, then SIGKILL: on another
// goroutine, so that the loop keeps draining the pipes the tree may still
// write to.
func (s *supervisor) stop() {
	s.stopping = true
	go func() {
		s.t.terminate(KillGrace)
		s.terminated.Store(true)
		s.signalWake()
	}()
}

// held reports whether x is left unread for now: while the tree runs, a
// stream whose live copy lags; once it is gone, what is left in the pipes is
// bounded, and drained.
func (s *supervisor) held(x *stream) bool {
	return s.drainBy.IsZero() && x.live != nil && x.live.backlogged()
}

// settle, once the main process is gone, makes sure what it left behind
// goes too — in the common case nothing is left (no child of hunk: every
// orphan of the tree comes back to hunk, the subreaper; an empty cgroup) and
// one system call or two say so; otherwise the tree is searched and killed
// — and starts the bounded drain of the pipes.
func (s *supervisor) settle() {
	if !s.stopping && s.opts.afterExit != nil {
		for _, x := range s.streams[2:] {
			s.readAll(x) // what the driver reported, before it is asked
		}
		s.opts.afterExit()
	}
	if s.stopping || !s.t.settled() {
		s.t.kill(5 * time.Second)
	}
	// Every writer of the pipes is dead now; drain them (bounded, in case
	// something outside the tree inherited a pipe).
	s.drainBy = time.Now().Add(2 * time.Second)
}

// loop watches the command until its tree is gone and its pipes drained.
func (s *supervisor) loop() error {
	pfds := make([]unix.PollFd, 0, len(s.streams)+2)
	for {
		if !s.mainDone && !s.stopping {
			switch {
			case s.ctx.Err() != nil:
				s.out.Canceled = true
				s.stop()
			case !s.deadline.IsZero() && !time.Now().Before(s.deadline):
				s.out.TimedOut = true
				s.stop()
			}
		}
		if s.mainDone && s.drainBy.IsZero() && (!s.stopping || s.terminated.Load()) {
			s.settle()
		}
		open := false
		for _, x := range s.streams[:2] {
			open = open || !x.eof
		}
		if !s.drainBy.IsZero() && (!open || !time.Now().Before(s.drainBy)) {
			return nil
		}

		pfds = pfds[:0]
		for _, x := range s.streams {
			if !x.eof && !s.held(x) {
				pfds = append(pfds, unix.PollFd{Fd: int32(x.fd), Events: unix.POLLIN})
			}
		}
		if !s.mainDone && s.pidfd >= 0 {
			pfds = append(pfds, unix.PollFd{Fd: int32(s.pidfd), Events: unix.POLLIN})
		}
		pfds = append(pfds, unix.PollFd{Fd: int32(s.wake), Events: unix.POLLIN})
		if _, err := unix.Poll(pfds, s.pollTimeout()); err != nil && err != unix.EINTR {
			return fmt.Errorf("poll: %w", err)
		}
		for _, x := range s.streams {
			if !s.held(x) {
				s.readAll(x)
			}
		}
		var drop [8]byte
		_, _ = unix.Read(s.wake, drop[:])
		if !s.mainDone && s.reapMain() {
			unwatchMain(s.pid)
			s.mainDone = true
			s.t.mainDone.Store(true)
			s.out.Duration = time.Since(s.start)
		}
	}
}

// pollTimeout is how long the next poll may wait, in milliseconds (-1: until
// something happens): until the deadline, the end of the drain, or 10 ms
// when there is no pidfd to tell that the main process exited.
func (s *supervisor) pollTimeout() int {
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
	if !s.mainDone && !s.stopping {
		until(s.deadline)
	}
	until(s.drainBy)
	if !s.mainDone && s.pidfd < 0 {
		until(time.Now().Add(10 * time.Millisecond))
	}
	return timeout
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
	// attributed: the run's processes are known without looking at hunk's
	// other children — a pid namespace (bwrap), or a cgroup — so it may
	// run beside others (tree); roots are the driver's further roots.
	attributed bool
	roots      func() []int
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
