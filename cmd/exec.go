package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// watchdogCommand starts hunk's watchdog: this binary again, in that role
// (set by Main: only a process running hunk's main starts one — a test
// binary of a package has no main that knows the role).
func watchdogCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	c := exec.Command(exe)
	c.Args[0] = watchdogName
	return c
}

// watchdogName is argv[0] of hunk's watchdog.
const watchdogName = "hunk-watchdog"

// execOptions is `hunk exec` parsed.
type execOptions struct {
	Argv        []string
	Sh          string
	Workdir     string
	Env         []string
	ListDrivers bool

	// The policy: the configuration's (App.execLimits), then the flags
	// that only hunk exec has (--network, --read-only, --rw, --ro, --hide,
	// --pull).
	ops.ExecLimits

	dockerAdminOptions // --gc, --make-image (exec_docker.go)
}

// newExecCmd builds the command; run is its action (nil: runExec; tests
// pass one that records the parsed options).
func newExecCmd(app *App, run func(app *App, cmd *cobra.Command, o *execOptions) error) *cobra.Command {
	if run == nil {
		run = runExec
	}
	o := &execOptions{}
	c := &cobra.Command{
		Use:   "exec [flags] -- CMD [ARGS...]",
		Short: "Run a command in a sandbox over the workspace",
		Long: `Run a command in a sandbox whose working directory is the workspace (or
--workdir inside it), mounted read-write (--read-only: read-only); the rest
of the filesystem is read-only or absent, there is no network unless
--network, and the environment is cleared but for PATH, HOME, LANG, TERM and
--env. Credentials (~/.ssh, ~/.aws, ~/.gnupg, /etc/shadow, …) are hidden
(--ro shows one again, --hide hides more, --rw makes a host path writable);
the workspace gets build caches of its own (Go, npm, pip, cargo, Maven,
Gradle) that stay warm across runs. A limit the driver cannot enforce is
refused (exit 125), never ignored.

Drivers: bwrap (bubblewrap namespaces), landlock (built in: Landlock and
seccomp, no namespaces needed), docker (--image), none (no isolation, only
by name). auto picks bwrap, then landlock. --drivers shows what works here.

Command rules (--deny-cmd, --ask-cmd, --allow-cmd, exec.rules and
exec.default in the config) decide every command of the line before it
runs: deny refuses it, ask needs --yes.

Exit status: the command's own; 3 an ask rule needs --yes; 124 timed out;
125 the sandbox could not start or cannot enforce a limit; 126 not
executable; 127 not found; 137 killed for memory; 128+N interrupted by
signal N (130: Ctrl-C).`,
		Example: `  hunk exec -- go test ./...
  hunk exec --sh 'make -j4 && ./run-tests' --timeout 10m --memory 2GiB
  hunk exec --network --workdir web -- npm ci
  hunk exec --timeout 30 --ro ~/.aws -- ./deploy --dry-run
  hunk exec --drivers`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Argv = args
			limits, err := app.execLimits()
			if err != nil {
				return err
			}
			// The flags only hunk exec has, parsed into o already.
			limits.Network.Host, limits.ReadOnly, limits.RW, limits.RO, limits.Hide, limits.Pull = o.Network.Host, o.ReadOnly, o.RW, o.RO, o.Hide, o.Pull
			limits.Yes = o.Yes
			if !o.Yes {
				limits.Confirm, limits.ConfirmBy = ttyConfirm(app.Stderr), "terminal" // the person at the terminal, if there is one
			}
			o.ExecLimits = limits
			if o.ListDrivers || o.dockerAdmin() {
				return run(app, cmd, o)
			}
			if o.Sh == "" && len(args) == 0 {
				return result.Usagef("no command to run").WithHint("usage: hunk exec [flags] -- CMD [ARGS...], or hunk exec --sh 'CMD'")
			}
			if o.Sh != "" && len(args) > 0 {
				return result.Usagef("give the command either after -- or with --sh, not both").WithHint("usage: " + cmd.UseLine())
			}
			return run(app, cmd, o)
		},
	}
	f := c.Flags()
	// Everything after the command's name is the command's: hunk exec ls -la.
	f.SetInterspersed(false)
	f.StringVar(&o.Sh, "sh", "", "run `CMD` with /bin/sh -c")
	f.StringVar(&o.Workdir, "workdir", "", "working `DIR` inside the workspace (default: the workspace root)")
	f.StringArrayVar(&o.Env, "env", nil, "set `K=V` in the command's environment (repeatable)")
	f.BoolVar(&o.Network.Host, "network", false, "allow network access")
	f.BoolVar(&o.ReadOnly, "read-only", false, "mount the workspace read-only too")
	f.StringArrayVar(&o.RW, "rw", nil, "let the command write host `PATH` too (repeatable)")
	f.StringArrayVar(&o.RO, "ro", nil, "show host `PATH` read-only, even a hidden one (repeatable)")
	f.StringArrayVar(&o.Hide, "hide", nil, "hide host `PATH` from the command, beside ~/.ssh, ~/.aws, ~/.gnupg, /etc/shadow, … (repeatable)")
	f.BoolVar(&o.ListDrivers, "drivers", false, "list the drivers, whether each works here and what it enforces")
	f.BoolVar(&o.Pull, "pull", false, "pull the image when the engine lacks it (docker driver; never without this flag)")
	f.BoolVar(&o.Yes, "yes", false, "say yes to a command an ask rule names (--ask-cmd, exec.rules): you, not a model, run it")
	addExecFlags(f, false)
	addDockerAdminFlags(f, o)
	_ = c.RegisterFlagCompletionFunc("driver", cobra.FixedCompletions([]string{"auto", "bwrap", "landlock", "docker", "none"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// execLimits is exec's policy from the configuration — flags, HUNK_*
// variables and the config file, merged by viper in one place — with the
// sizes parsed: the one policy `hunk exec`, `hunk mcp` and `hunk call` start
// from.
func (a *App) execLimits() (ops.ExecLimits, error) {
	cfg := a.Cfg.Exec
	p := ops.ExecLimits{
		Driver: cfg.Driver, Timeout: cfg.Timeout, Pids: cfg.Pids, CPUs: cfg.CPUs, Image: cfg.Image,
		KeepWarm: cfg.KeepWarm, Idle: cfg.Idle, Caches: cfg.Caches, GitWrite: cfg.GitWrite, Record: cfg.Record,
		Network: sandbox.Network{Allow: cfg.Allow, Deny: cfg.Deny, DNS: cfg.DNS},
	}
	var err error
	if p.Rules, err = a.execRules(); err != nil {
		return p, err
	}
	if p.Memory, err = parseSize(cfg.Memory); err != nil {
		return p, result.Usagef("--memory %q: %v", cfg.Memory, err).WithHint("sizes look like 512MiB, 2G or 1048576 (flag --memory, config exec.memory)")
	}
	if p.MaxOutput, err = parseSize(cfg.MaxOutput); err != nil {
		return p, result.Usagef("--max-output %q: %v", cfg.MaxOutput, err).WithHint("sizes look like 1MiB, 64K or 65536 (flag --max-output, config exec.max-output)")
	}
	if p.Shown, err = parseSize(cfg.ShowOutput); err != nil {
		return p, result.Usagef("exec.show-output %q: %v", cfg.ShowOutput, err).WithHint("sizes look like 8KiB, 16K or 8192 (exec --show-output, mcp and call --max-output, config exec.show-output)")
	}
	if p.Shown == 0 {
		p.Shown = -1 // 0: all of it
	}
	return p, nil
}

// parseSize reads a byte size: a number with an optional binary suffix (K,
// M, G, T; KB/KiB alike). "" and "0" mean no limit.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	u := strings.ToUpper(s)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "IB"), "B")
	mult := int64(1)
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			mult, u = 1<<10, u[:n-1]
		case 'M':
			mult, u = 1<<20, u[:n-1]
		case 'G':
			mult, u = 1<<30, u[:n-1]
		case 'T':
			mult, u = 1<<40, u[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || v < 0 {
		return 0, errors.New("not a size")
	}
	return int64(v * float64(mult)), nil
}

func runExec(app *App, cmd *cobra.Command, o *execOptions) error {
	ctx, handling := interrupt.Context()
	if o.ListDrivers {
		return app.Render(ops.Drivers(ctx))
	}
	if o.dockerAdmin() {
		return runDockerAdmin(ctx, app, o)
	}
	env, err := app.Env()
	if err != nil {
		return err
	}
	if !app.Cfg.JSON {
		env.Stdout, env.Stderr = app.Stdout, app.Stderr
	}
	out, err := ops.Exec(ctx, env, ops.ExecRequest{
		Argv: o.Argv, Sh: o.Sh, Workdir: o.Workdir, Env: o.Env, ExecLimits: o.ExecLimits,
		Ready: handling, // from then on, an interrupt stops the command, not just hunk
	})
	if err != nil {
		return err
	}
	if app.Cfg.JSON {
		if err := out.ToolResult().Encode(app.Stdout); err != nil {
			return err
		}
	} else {
		fmt.Fprint(app.Stderr, out.Stderr)
		if out.Message != "" {
			fmt.Fprintf(app.Stderr, "%s: error: %s\n", prog, out.Message)
		}
		if out.Hint != "" {
			fmt.Fprintf(app.Stderr, "%s: hint: %s\n", prog, out.Hint)
		}
		if out.Notice != "" {
			fmt.Fprintf(app.Stderr, "%s: note: %s\n", prog, out.Notice)
		}
	}
	return silentExit(out.ExitCode)
}

// silentExit ends hunk with code and prints nothing more: the command's
// output (or the JSON result) already said everything.
func silentExit(code int) error {
	if code == 0 {
		return nil
	}
	return &result.SilentExit{Code: code}
}
