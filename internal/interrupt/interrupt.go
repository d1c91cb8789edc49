// Package interrupt catches SIGINT, SIGTERM and SIGHUP for the commands
// that run others (exec, and hunk mcp's and hunk call's exec tool), so that
// an interrupted hunk kills the command's whole process tree before it
// exits; and, for exec, it starts catching them before the command line is
// parsed (it finds the subcommand itself).
//
// Catching SIGINT, SIGTERM and SIGHUP (so that an interrupted hunk exec
// kills the command's whole process tree before it exits) costs a round trip
// per signal to the Go runtime's signal thread, which it first has to start:
// on a small virtual machine, where waking another thread is slow, a
// millisecond or more. Started from this package's init — which runs before
// most of hunk's dependencies are initialised — that work overlaps with
// start-up instead of delaying the command.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// RootValueFlags are hunk's root flags that take a separate value argument.
var RootValueFlags = map[string]bool{
	"-C": true, "--root": true, "--color": true, "--config": true,
	"--deny-read": true, "--deny-write": true, "--allow-write": true, "--ask-write": true,
	"--session": true,
}

// Subcommand is the first argument of args that is not a root flag (or a
// root flag's value): the subcommand's name, or "" when there is none.
func Subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case RootValueFlags[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// catcher is a context canceled on SIGINT, SIGTERM or SIGHUP (its cause an
// *Interrupted); ready is
// closed once the handlers are in place. They stay until hunk exits.
type catcher struct {
	ctx   context.Context
	ready chan struct{}
}

var started *catcher

func init() {
	if len(os.Args) > 1 && filepath.Base(os.Args[0]) == "hunk" && Subcommand(os.Args[1:]) == "exec" {
		started = start()
	}
}

func start() *catcher {
	ctx, cancel := context.WithCancelCause(context.Background())
	in := &catcher{ctx: ctx, ready: make(chan struct{})}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		close(in.ready)
		cancel(&Interrupted{Signal: (<-sig).(syscall.Signal)})
	}()
	return in
}

// Interrupted is the cause of the interrupt context's cancellation: the
// signal hunk received — or, for a call a server stopped (Because), what
// stopped it.
type Interrupted struct {
	Signal syscall.Signal
	// Reason says what stopped the call when no signal reached hunk:
	// a server's bound or its shutdown.
	Reason string
}

// Because is the cause of a call a server stops for reason; its command
// ends as if by SIGTERM.
func Because(reason string) *Interrupted {
	return &Interrupted{Signal: syscall.SIGTERM, Reason: reason}
}

func (e *Interrupted) Error() string { return "interrupted by " + e.Name() }

// Name is what stopped the call: the signal's name (SIGINT), or the reason.
func (e *Interrupted) Name() string {
	if e.Reason != "" {
		return e.Reason
	}
	return signalName(e.Signal)
}

// ExitCode is the shell's code for a command ended by the signal: 128+N.
func (e *Interrupted) ExitCode() int { return 128 + int(e.Signal) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// Context returns the context an interrupt cancels and a channel closed
// once interrupts are caught (until then, one kills hunk outright). The
// first call outside hunk exec starts catching them.
func Context() (context.Context, <-chan struct{}) {
	if started == nil {
		started = start()
	}
	return started.ctx, started.ready
}
