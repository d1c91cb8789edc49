// Package verify makes a change and keeps it only if its check passes:
// the change (apply-patch, edit, write) is made as always, then the check
// runs in exec's sandbox over the workspace it left; a check that exits
// other than 0 — or times out, or cannot start — takes back every
// operation the change and the check recorded, byte for byte (contents,
// modes, links, the directories the change made), through the history.
// A file someone else changed while the check ran is left as it is and
// named. It sits above ops: a change and a check are two of its doors.
package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Request is a change's check.
type Request struct {
	Argv    []string      // the command, run without a shell; or
	Sh      string        // a shell line, run with /bin/sh -c
	Timeout time.Duration // the check's own (0: exec's)
	// Checks are the configured checks (checks: in the config), run for
	// the files the change left; they inform (details.checks, a line in
	// the text) unless Gate makes them decide as the check does (verify:
	// checks).
	Checks []Configured
	Gate   bool
	// Limits are the sandbox, as exec's: the caller's policy.
	Limits ops.ExecLimits
	// Exec runs the check (nil: ops.ExecDetailed): a tool call's runs
	// it as its session runs exec.
	Exec func(context.Context, *ops.Env, ops.ExecRequest) (*ops.Output, *ops.ExecDetails, error)
}

// gates reports whether the request can take the change back.
func (v *Request) gates() bool { return v.Sh != "" || len(v.Argv) > 0 || v.Gate }

// Run makes the change, then runs v's check and the configured checks
// (nil v: the change alone). A check that gates needs the history on: the
// rollback goes through it. The caller settles killed checks first
// (Settle), with or without a check of its own.
func Run(ctx context.Context, env *ops.Env, v *Request, change func(*ops.Env) (*ops.Output, error)) (*ops.Output, error) {
	if v == nil || !v.gates() && len(v.Checks) == 0 {
		return change(env)
	}
	if v.Gate && len(v.Checks) == 0 {
		return nil, result.Usagef("verify: checks makes the configured checks the gate, and none is configured").
			WithHint("configure them (checks: in the config, by glob), or give a command to verify with")
	}
	if v.gates() && !env.Workspace.Records() {
		return nil, result.Usagef("a change's check takes a failed change back through the history, which is off here").
			WithHint("turn the history on (drop --no-history; history: true), or run the check with exec after the change")
	}
	e := *env
	var recs []*workspace.Recording
	e.Recorded = &recs
	if v.gates() {
		e.Check = v.command() // (hunk log: the change, and its rollback, name it)
	}
	out, err := change(&e)
	if err != nil || out.Failure != nil {
		return out, err // (--3way's conflicts: written, and a failure already)
	}
	var ids []string // the change's operations, then the checks' writes
	for _, r := range recs {
		if r.ID != "" {
			ids = append(ids, r.ID)
		}
	}
	if store, err := env.Workspace.History(); err == nil && len(ids) > 0 && v.gates() {
		// Killed while the check runs, the next run takes the change back.
		if end, err := store.BeginCheck(ids, v.command()); err == nil {
			defer end()
		} else {
			env.Warn("verify: the check is not journaled (a hunk killed while it runs leaves the change): " + err.Error())
		}
	}
	lim := v.Limits
	// What a check that gates writes is part of the change (recorded, so
	// taken back with it); checks that only inform are not recorded.
	lim.Record, lim.ReadOnly = v.gates(), false
	if v.Timeout > 0 {
		lim.Timeout = v.Timeout
	}
	run := v.Exec
	if run == nil {
		run = ops.ExecDetailed
	}
	o := outcome{passed: true}
	if v.Sh != "" || len(v.Argv) > 0 {
		o = v.runCheck(ctx, &e, run, lim)
		if o.c.Run != nil && o.c.Run.OpID != "" {
			ids = append(ids, o.c.Run.OpID)
		}
	}
	var rs []*execrun.Check
	if o.passed && len(v.Checks) > 0 {
		rs = runConfigured(ctx, &e, v.Checks, changedFiles(&e, recs), lim, run)
		for _, r := range rs {
			if r.Run != nil && r.Run.OpID != "" {
				ids = append(ids, r.Run.OpID)
			}
		}
		if d, ok := out.Details.(ops.Checked); ok && len(rs) > 0 {
			d.SetChecks(rs)
		}
		if f := failed(rs); v.Gate && f != nil {
			o = outcome{c: f, why: fmt.Sprintf("its check (%s) exited %d", f.Command, f.ExitCode), runText: checksText(rs)}
		} else if len(rs) > 0 {
			out.Text += "\n" + checksText(rs)
			out.Message += "\n" + checksText(rs)
		}
	}
	if o.passed {
		if o.c == nil {
			return out, nil
		}
		o.c.Kept = true
		return withCheck(out, o.c, fmt.Sprintf("The check passed (%s exited 0): the change is kept.", o.c.Command), ""), nil
	}
	return fail(&e, out, o, ids)
}

// fail takes back the operations ids of a change whose check failed (o),
// leaving the files changed since, and says so in out.
func fail(e *ops.Env, out *ops.Output, o outcome, ids []string) (*ops.Output, error) {
	if len(ids) > 0 {
		_, d, err := ops.UndoDetailed(e, ops.UndoRequest{IDs: ids, Keep: true})
		if err != nil {
			return nil, result.Wrap(result.As(err).Code, err, "the check failed, and taking the change back failed").
				WithHint("hunk log lists the change; hunk undo ID takes it back")
		}
		o.c.RolledBack = append(append(append([]string{}, d.Summary.Added...), d.Summary.Modified...), d.Summary.Deleted...)
		o.c.LeftAlone, o.c.UndoID = d.Kept, d.OpID
	}
	o.c.Kept = false
	kept := "nothing of it was kept"
	switch {
	case len(ids) == 0:
		kept = "the change changed nothing, so there was nothing to take back"
	case len(o.c.LeftAlone) > 0:
		kept = "changed meanwhile and left as they are: " + strings.Join(o.c.LeftAlone, "; ")
	}
	say := "the change was taken back: " + o.why + "; " + kept
	if len(ids) == 0 {
		say = "the " + strings.TrimPrefix(o.why, "its ") + "; " + kept
	}
	out = withCheck(out, o.c, strings.ToUpper(say[:1])+say[1:]+".", o.runText)
	out.Failure = result.Errorf(result.CheckFailed, "%s", say).
		WithHint("the check's output says why; fix the change and send it again")
	out.ExitCode, out.Diff = 1, ""
	return out, nil
}

// outcome is how a check went: passed, or why not and its output.
type outcome struct {
	passed       bool
	c            *execrun.Check
	why, runText string
}

// runCheck runs the request's command.
func (v *Request) runCheck(ctx context.Context, env *ops.Env, run execFunc, lim ops.ExecLimits) outcome {
	xo, xd, xerr := run(ctx, env, ops.ExecRequest{Argv: v.Argv, Sh: v.Sh, ExecLimits: lim})
	o := outcome{c: &execrun.Check{Command: v.command(), Run: xd}}
	switch {
	case xerr != nil:
		o.why = "its check could not run: " + result.As(xerr).Msg
	case xo.ExitCode == 0 && xo.Failure == nil:
		o.passed = true
	default:
		o.c.ExitCode, o.runText = xo.ExitCode, xo.Text
		o.why = fmt.Sprintf("its check (%s) exited %d", o.c.Command, xo.ExitCode)
		if xo.Failure != nil {
			o.why = fmt.Sprintf("its check (%s) failed: %s", o.c.Command, xo.Failure.Msg)
		}
	}
	return o
}

// withCheck is out with the check's facts and a sentence for it — and,
// when it failed, its output instead of the change's text.
func withCheck(out *ops.Output, c *execrun.Check, line, runText string) *ops.Output {
	if d, ok := out.Details.(ops.Checked); ok {
		d.SetCheck(c)
	}
	if c.Kept {
		out.Text += "\n" + line
		out.Message += "\n" + line
		return out
	}
	out.Text, out.Message = line, "" // (a person reads the line as the error)
	if runText != "" {
		out.Text += "\nThe check's output:\n" + runText
		out.Message = strings.TrimSuffix(runText, "\n")
	}
	return out
}

// command is the check as a line.
func (v *Request) command() string {
	switch {
	case v.Sh != "":
		return v.Sh
	case len(v.Argv) > 0:
		return cmdrule.Quote(v.Argv)
	}
	return "the configured checks"
}

// Words are a --verify command line's words: one simple command of plain
// words (quotes allowed), run without a shell; anything a shell would do
// more (a pipe, a variable, a glob) is refused, for --verify-sh.
func Words(line string) ([]string, error) {
	argv, ok := cmdrule.Words(line)
	if !ok || len(argv) == 0 {
		return nil, result.Usagef("--verify %q: not one plain command", line).
			WithHint("give a command and its arguments (--verify 'go test ./...'), or a shell line with --verify-sh")
	}
	return argv, nil
}

// Settle takes back the changes whose check a killed hunk left running
// (history.AbandonedChecks): each operation not undone since, the files
// changed since left as they are; what it did is said through env.Warn.
// What the killed check itself wrote is not known, and stays.
func Settle(env *ops.Env) {
	if !env.Workspace.Records() {
		return
	}
	store, err := env.Workspace.History()
	if err != nil {
		return
	}
	for _, c := range store.AbandonedChecks() {
		_, d, err := ops.UndoDetailed(env, ops.UndoRequest{IDs: c.Ops, Keep: true})
		switch {
		case result.As(err) != nil && result.As(err).Code == result.Stale:
			// undone already (the killed run's rollback was done)
		case err != nil:
			env.Warn(fmt.Sprintf("verify: a check hunk was killed in (%s, process %d) left its change (%s) in place: taking it back failed: %v", c.Command, c.PID, strings.Join(c.Ops, ", "), err))
		case len(d.Undone) > 0:
			msg := fmt.Sprintf("verify: took back %s, whose check (%s) hunk was killed in (process %d): undo %s", strings.Join(d.Undone, ", "), c.Command, c.PID, d.OpID)
			if len(d.Kept) > 0 {
				msg += "; changed since and left as they are: " + strings.Join(d.Kept, "; ")
			}
			env.Warn(msg)
		}
		store.Settled(c)
	}
}
