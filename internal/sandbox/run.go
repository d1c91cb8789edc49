package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
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

// supervise runs cmd (fully configured but for its standard streams) as the
// root of a process tree: output captured without ever blocking the tree,
// the timeout and ctx enforced on every process of it (SIGTERM, KillGrace,
// SIGKILL), and nothing of the tree left running once the main process has
// exited — background and daemonized processes included, which the calling
// process, made a child subreaper, gets back as orphans.
//
// The command is started by startOnThread with opts.setup (and cg) applied
// to the thread that forks it. A failure to start is a *setupError (the
// confinement failed) or a *startError (the exec failed).
func supervise(ctx context.Context, spec Spec, cmd *exec.Cmd, cg *cgroup, st Streams, opts superviseOpts) (Outcome, error) {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })

	rOut, wOut, err := os.Pipe()
	if err != nil {
		return Outcome{}, err
	}
	rErr, wErr, err := os.Pipe()
	if err != nil {
		rOut.Close()
		wOut.Close()
		return Outcome{}, err
	}
	// Bigger pipes, fewer wake-ups for a command that prints a lot.
	for _, f := range []*os.File{rOut, rErr} {
		if rc, err := f.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
		}
	}
	cmd.Stdout, cmd.Stderr = wOut, wErr
	if spec.Stdin != nil {
		cmd.Stdin = spec.Stdin
	}
	cmd.WaitDelay = time.Second
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL

	// os/exec checks once per process that pidfds work by cloning a child
	// that exits at once; have that happen now, not among the run's processes.
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
	t := newTree(cg)
	start := time.Now()
	opts.setup.cg = cg
	done, err := startOnThread(cmd, opts.setup, func() { t.mainDone.Store(true) })
	wOut.Close()
	wErr.Close()
	if err != nil {
		rOut.Close()
		rErr.Close()
		var se *setupError
		if !errors.As(err, &se) {
			err = &startError{err}
		}
		return Outcome{}, err
	}
	var copies sync.WaitGroup
	for _, c := range []struct {
		r *os.File
		w io.Writer
	}{{rOut, st.Stdout}, {rErr, st.Stderr}} {
		copies.Add(1)
		go func() {
			defer copies.Done()
			buf := make([]byte, 64<<10)
			_, _ = io.CopyBuffer(c.w, c.r, buf)
		}()
	}

	t.mainPid = cmd.Process.Pid

	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		timer := time.NewTimer(spec.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	var out Outcome
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timeout:
		out.TimedOut = true
	case <-ctx.Done():
		out.Canceled = true
	}
	if out.TimedOut || out.Canceled {
		t.terminate(KillGrace)
		waitErr = <-done
	}
	out.Duration = time.Since(start)
	// The main process is gone: what it left behind goes too. In the
	// common case nothing is left — no child of hunk (every orphan of the
	// tree comes back to hunk, the subreaper), an empty cgroup — and one
	// system call or two say so; otherwise the tree is searched and killed.
	if !out.TimedOut && !out.Canceled && opts.afterExit != nil {
		opts.afterExit()
	}
	if out.TimedOut || out.Canceled || !t.settled() {
		t.kill(5 * time.Second)
	}

	// Every writer of the pipes is dead now; wait for the copies to drain
	// (bounded, in case something outside the tree inherited a pipe).
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		rOut.Close()
		rErr.Close()
		<-drained
	}
	rOut.Close()
	rErr.Close()

	ps := cmd.ProcessState
	if ps == nil {
		return out, fmt.Errorf("waiting for the command: %v", waitErr)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		out.Signaled = true
		out.ExitCode = 128 + int(ws.Signal())
	default:
		out.ExitCode = ps.ExitCode()
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return out, waitErr
	}
	return out, nil
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
	setup threadSetup // confinement of the start thread (cg is filled in)
	// afterExit, when set, runs once the main process has exited by itself,
	// before the check for leftovers: it waits for what the driver knows
	// dies with the main process (bwrap: its pid namespace).
	afterExit func()
}

// startError is a command that could not be executed.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }
