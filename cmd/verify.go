package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/verify"
)

// verifyFlags are a change's check: --verify, --verify-sh and
// --verify-timeout of apply-patch, edit and write (package verify).
type verifyFlags struct {
	Cmd, Sh  string
	Timeout  time.Duration
	NoChecks bool // --no-checks: not the configured checks, this once
}

func (v *verifyFlags) add(f *pflag.FlagSet) {
	f.StringVar(&v.Cmd, "verify", "", "after the change, run `CMD` (one command, no shell; \"checks\": the configured checks) in exec's sandbox; if it fails, take the whole change back")
	f.StringVar(&v.Sh, "verify-sh", "", "as --verify, a shell line run with /bin/sh -c")
	f.DurationVar(&v.Timeout, "verify-timeout", 0, "stop the check after this long, a failure (default: exec's timeout)")
	f.BoolVar(&v.NoChecks, "no-checks", false, "do not run the configured checks (checks: in the config) after this change")
}

// request is the check the flags ask for, and the configured checks
// (nil: none), under exec's policy. --verify checks makes the configured
// checks the gate.
func (v *verifyFlags) request(app *App, dryRun bool) (*verify.Request, error) {
	var checks []verify.Configured
	if !v.NoChecks && !dryRun {
		var err error
		if checks, err = configChecks(app.Cfg.ConfigFile, app.cfgText); err != nil {
			return nil, err
		}
	}
	switch {
	case v.Cmd == "" && v.Sh == "":
		if v.Timeout != 0 {
			return nil, result.Usagef("--verify-timeout needs --verify or --verify-sh")
		}
		if len(checks) == 0 {
			return nil, nil
		}
	case v.Cmd != "" && v.Sh != "":
		return nil, result.Usagef("give the check with --verify or with --verify-sh, not both")
	case dryRun:
		return nil, result.Usagef("--dry-run writes nothing, so there is no change to check").
			WithHint("drop --dry-run: a change whose check fails is taken back anyway")
	case v.Timeout < 0:
		return nil, result.Usagef("--verify-timeout must not be negative")
	}
	lim, err := app.execLimits()
	if err != nil {
		return nil, err
	}
	r := &verify.Request{Sh: v.Sh, Timeout: v.Timeout, Limits: lim, Checks: checks}
	switch {
	case v.Cmd == "checks":
		if v.NoChecks {
			return nil, result.Usagef("--verify checks makes the configured checks the gate, and --no-checks turns them off: give one")
		}
		r.Gate = true
	case v.Cmd != "":
		if r.Argv, err = verify.Words(v.Cmd); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// change makes the change as the flags ask: checked, or alone.
func (v *verifyFlags) change(app *App, env *ops.Env, dryRun bool, change func(*ops.Env) (*ops.Output, error)) (*ops.Output, error) {
	req, err := v.request(app, dryRun)
	if err != nil {
		return nil, err
	}
	if !dryRun {
		verify.Settle(env) // a check a killed hunk left: its change goes first
	}
	if req == nil {
		return change(env)
	}
	ctx, _ := interrupt.Context()
	return verify.Run(ctx, env, req, change)
}

// renderChange renders a change's result: one that failed after it ran
// (--3way's conflicts, a failed check) is an error too, its exit code
// the Output's.
func (a *App) renderChange(out *ops.Output) error {
	if out.Failure == nil || a.Cfg.JSON || out.Message != "" {
		if err := a.Render(out); err != nil || out.Failure == nil {
			return err
		}
	}
	if !a.Cfg.JSON {
		fmt.Fprintf(a.Stderr, "%s: error: %s\n", prog, out.Failure.Msg)
		for _, h := range out.Failure.Hints {
			fmt.Fprintf(a.Stderr, "%s: hint: %s\n", prog, h)
		}
	}
	return silentExit(out.ExitCode)
}
