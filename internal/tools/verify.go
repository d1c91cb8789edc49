package tools

import (
	"context"
	"encoding/json"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/verify"
)

// Check is a change's verify argument (package verify): a shell line run
// in the sandbox after the change, as exec runs a command, the change
// kept only if it exits 0.
type Check struct {
	Verify string `json:"verify,omitempty" jsonschema:"a shell command run in the sandbox after the change, as exec runs it (go test ./..., npm test), or checks (the checks this server configures); if it exits other than 0 the whole change is taken back and the result gives the check's output"`
}

// The inputs of the changes a check may follow: the request, and verify.
type (
	applyPatchInput struct {
		ops.ApplyPatchRequest
		Check
	}
	writeInput struct {
		ops.WriteRequest
		Check
	}
	editInput struct {
		ops.EditRequest
		Check
	}
)

// checks is runs for a change whose input may carry a check: without one
// the change alone; with one, the change then the check, under the
// session's exec policy (its command rules, its confirmation, its limits)
// — refused where the session does not serve exec: a check runs a
// command.
func checks[I, R any](tool string, op func(*ops.Env, R) (*ops.Output, error), split func(I) (R, Check), required ...string) func(context.Context, *Session, json.RawMessage) (*ops.Output, error) {
	return func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
		var in I
		if err := decode(tool, args, &in, required...); err != nil {
			return nil, err
		}
		req, c := split(in)
		change := func(env *ops.Env) (*ops.Output, error) { return op(env, req) }
		if !dryRun(req) {
			verify.Settle(s.Env) // a check a killed hunk left: its change goes first
		}
		if c.Verify == "" && (len(s.Checks) == 0 || dryRun(req)) {
			return change(s.Env)
		}
		if c.Verify == "" { // the configured checks, which inform: the person's, not the model's
			return verify.Run(ctx, s.Env, &verify.Request{Checks: s.Checks, Limits: s.Exec, Exec: s.checkExec()}, change)
		}
		if s.Tools != nil && s.Tools.Lookup("exec") == nil { // (nil: every tool)
			return nil, result.Errorf(result.ToolDisabled, "%s: verify runs a command, and this server does not serve exec", tool).
				WithHint("make the change without verify; the person running hunk decides which tools are served")
		}
		if dryRun(req) {
			return nil, result.Usagef("%s: dryRun writes nothing, so there is no change to verify", tool)
		}
		v := &verify.Request{Sh: c.Verify, Limits: s.Exec, Checks: s.Checks, Exec: s.checkExec()}
		if c.Verify == "checks" {
			v.Sh, v.Gate = "", true
		}
		return verify.Run(ctx, s.Env, v, change)
	}
}

// checkExec runs a check as the session runs exec.
func (s *Session) checkExec() func(context.Context, *ops.Env, ops.ExecRequest) (*ops.Output, *ops.ExecDetails, error) {
	return func(ctx context.Context, env *ops.Env, r ops.ExecRequest) (*ops.Output, *ops.ExecDetails, error) {
		return s.runExec(ctx, env, ExecInput{Command: r.Sh, Argv: r.Argv}, r.ExecLimits)
	}
}

// dryRun reports whether a change's request asks for a dry run.
func dryRun(req any) bool {
	switch r := req.(type) {
	case ops.ApplyPatchRequest:
		return r.DryRun
	case ops.WriteRequest:
		return r.DryRun
	case ops.EditRequest:
		return r.DryRun
	}
	return false
}

// Change makes a change of a call the session answers outside the tool
// table (Codex's freeform apply_patch, the Responses apply_patch_call),
// the configured checks after it as after any tool's.
func (s *Session) Change(ctx context.Context, change func(*ops.Env) (*ops.Output, error)) (*ops.Output, error) {
	verify.Settle(s.Env)
	if len(s.Checks) == 0 {
		return change(s.Env)
	}
	return verify.Run(ctx, s.Env, &verify.Request{Checks: s.Checks, Limits: s.Exec, Exec: s.checkExec()}, change)
}
