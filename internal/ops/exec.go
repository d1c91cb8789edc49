package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// ExecRequest runs a command in the sandbox. The fields a model may set
// are in JSON; the isolation (driver, network, extra host paths, limits) is
// the caller's policy, set by the front-end from its own flags and
// configuration, never from a tool call.
type ExecRequest struct {
	Argv    []string          `json:"argv,omitempty" jsonschema:"the command and its arguments, run without a shell"`
	Sh      string            `json:"command,omitempty" jsonschema:"a shell command line, run with /bin/sh -c (instead of argv)"`
	Workdir string            `json:"workdir,omitempty" jsonschema:"working directory inside the workspace (default: the workspace root)"`
	EnvVars map[string]string `json:"env,omitempty" jsonschema:"environment variables to set for the command"`
	// TimeoutSeconds, when set, overrides Timeout (a tool call's own).
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"kill the command and everything it started after this many seconds"`

	Env []string `json:"-"` // K=V from --env, after EnvVars

	// ExecLimits are what the command may reach and its limits.
	ExecLimits `json:"-"`

	// Ready, when set, is closed once an interrupt would reach the command
	// (hunk's signal handlers are in place).
	Ready <-chan struct{} `json:"-"`
	// Surface says the result's advice in the caller's words (zero: the CLI's).
	Surface execrun.Surface `json:"-"`
}

// ExecLimits are exec's settings (execrun.Limits): the driver, what the
// command may reach and its limits. The person running hunk sets them; a
// tool call never does.
type ExecLimits = execrun.Limits

// check validates the request's shape.
func (r *ExecRequest) check() error {
	switch {
	case r.Sh != "" && len(r.Argv) > 0:
		return result.Usagef("give the command either as argv or as a shell command, not both")
	case r.Sh == "" && len(r.Argv) == 0:
		return result.Usagef("no command to run")
	case r.TimeoutSeconds < 0:
		return result.Usagef("the timeout must not be negative")
	}
	if err := r.ExecLimits.Check(); err != nil {
		return err
	}
	for _, kv := range r.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return result.Usagef("--env %q: want K=V", kv)
		}
	}
	for k := range r.EnvVars {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return result.Usagef("env: %q is not a variable name", k)
		}
	}
	return nil
}

// Exec runs the command in the sandbox. A command that ran (whatever its
// exit code) is an Output; its ExitCode is the process exit code to end
// with. ctx's cancellation with an *interrupt.Interrupted cause is reported as
// an interrupt.
func Exec(ctx context.Context, env *Env, req ExecRequest) (*Output, error) {
	out, _, err := ExecDetailed(ctx, env, req)
	return out, err
}

// ExecDetailed is Exec with the Output's details as their type, for the
// front-ends that map them onto a provider's shape (hunk call): the run
// prepared (execrun.Prepare), recorded when asked (execrun.RecordBefore,
// RecordAfter), run in the sandbox and reported.
func ExecDetailed(ctx context.Context, env *Env, req ExecRequest) (*Output, *ExecDetails, error) {
	cmd, err := req.command(env)
	if err != nil {
		return nil, nil, err
	}
	run, err := execrun.Prepare(env.Workspace, cmd, env.warn)
	if err != nil {
		return nil, nil, err
	}
	defer run.Release()
	var scan *execrun.Scan
	if req.Record && !req.ReadOnly {
		if scan, err = execrun.RecordBefore(env.Workspace); err != nil {
			return nil, nil, err
		}
	}
	r, err := sandbox.Run(ctx, req.Driver, run.Spec)
	if err != nil {
		scan.Drop()
		return nil, nil, execrun.SandboxError(err)
	}
	var opID string
	if scan != nil {
		// What the command changed, whatever its exit: recorded, or said.
		if opID, err = execrun.RecordAfter(env.Workspace, scan, cmd.Argv, env.recording("exec")); err != nil {
			env.warn("exec --record: what the command changed is not recorded: " + err.Error())
		}
	}
	var in *interrupt.Interrupted
	if r.Interrupted && errors.As(context.Cause(ctx), &in) {
		r.ExitCode = in.ExitCode()
	}
	hint := execrun.PolicyReadOnly(env.Workspace, run.Spec.Workdir, r.Stderr)
	if hint == "" {
		hint = execrun.Hint(req.ExecLimits, r, run.GitProtected, run.Path, req.Surface)
	}
	out, details := execOutput(env, req, r, in, hint)
	details.OpID = opID
	report(env, out, details, run, r, req.Driver)
	return out, details, nil
}

// command is the run req asks for: its timeout, argv and environment.
func (req *ExecRequest) command(env *Env) (execrun.Command, error) {
	if err := req.check(); err != nil {
		return execrun.Command{}, err
	}
	if req.TimeoutSeconds > 0 {
		req.Timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
	}
	argv := req.Argv
	if req.Sh != "" {
		argv = []string{"/bin/sh", "-c", req.Sh}
	}
	extra := make([]string, 0, len(req.EnvVars)+len(req.Env))
	for k, v := range req.EnvVars {
		extra = append(extra, k+"="+v)
	}
	return execrun.Command{Argv: argv, Workdir: req.Workdir, Env: append(extra, req.Env...), Limits: req.ExecLimits,
		Ready: req.Ready, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Surface: req.Surface, Session: env.Session}, nil
}

// report adds what the person and the model must hear of a run besides its
// output: a driver auto gave up, a repository the command made, new build
// caches that made a first run slow.
func report(env *Env, out *Output, details *ExecDetails, run *execrun.Run, r sandbox.Result, driver string) {
	if r.Fallback != "" {
		// auto never changes drivers in silence: what it gave up is said,
		// to the person and the model.
		w := fmt.Sprintf("ran under %s: the driver auto tried first could not start the sandbox here (%s)", r.Driver, r.Fallback)
		env.warn(w)
		out.Text = execrun.Prepend(out.Text, "warning: "+w)
	}
	for _, l := range execrun.Blocked(r.Network) {
		env.warn(l) // the model reads them in the text
	}
	var warns []string
	details.NewRepository, details.SubRepositories, warns = run.RepoWarnings(env.Workspace, r.Driver)
	for _, w := range warns {
		env.warn(w)
		out.Text = execrun.Prepend(out.Text, "warning: "+w)
	}
	if run.Cache.New && (r.Duration >= slowFirstRun || r.TimedOut) && run.Cache.Warmed() {
		// Said once: the first slow run over a new cache explains itself (one its timeout stopped: the time went to them).
		why := map[bool]string{false: "the first build fills them, later runs reuse them",
			true: "this first build was filling them when its time ran out; what it filled is kept, so the same command run again goes further"}[r.TimedOut]
		out.Notice = fmt.Sprintf("this workspace's build caches were new (%s): %s", run.Cache.Dir, why)
		out.Text = execrun.Prepend(out.Text, "note: "+out.Notice)
	}
}

// slowFirstRun is how long a first run over new caches takes before hunk says why.
const slowFirstRun = 3 * time.Second

// execOutput is the result of a command that ran (execrun.Report), a
// failure for timeouts, interrupts and the memory limit.
func execOutput(env *Env, req ExecRequest, r sandbox.Result, in *interrupt.Interrupted, hint string) (*Output, *ExecDetails) {
	rep := execrun.Report(req.ExecLimits, r, in, hint)
	if env.ToolResult || env.Agent { // a model reads the text: sized for it
		rep.Text = execrun.ForModel(env.Workspace, rep, req.Shown, req.Surface)
	}
	out := &Output{Text: rep.Text, Details: rep.Details, ExitCode: r.ExitCode, Message: rep.Note, Hint: hint, Stderr: rep.StartNote}
	if rep.Code != "" {
		out.Failure = result.Errorf(rep.Code, "%s", rep.Note)
	}
	return out, rep.Details
}
