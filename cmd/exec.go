package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/early"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

func init() { register("exec", newExecCmd) }

// execOptions is `hunk exec` parsed.
type execOptions struct {
	Argv        []string
	Sh          string
	Workdir     string
	Env         []string
	Network     bool
	ReadOnly    bool
	RW, RO      []string // --rw, --ro host paths
	Hide        []string // --hide host paths, beside sandbox.DefaultHidden
	Caches      bool     // the workspace's build caches (sandbox.CacheEnv)
	Timeout     time.Duration
	Memory      int64
	Pids        int
	CPUs        float64
	MaxOutput   int64
	Driver      string
	ListDrivers bool
	Image       string
	Pull        bool
	KeepWarm    bool
	Idle        time.Duration

	dockerAdminOptions // --gc, --make-image (exec_docker.go)
}

// envAllowList are the variables of hunk's environment a command gets.
var envAllowList = []string{"PATH", "HOME", "LANG", "TERM"}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func newExecCmd(app *App) *cobra.Command {
	return newExecCmdWith(app, runExec)
}

// newExecCmdWith builds the command with run as its action (tests pass a
// recorder to check the parsed options).
func newExecCmdWith(app *App, run func(app *App, cmd *cobra.Command, o *execOptions) error) *cobra.Command {
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

Exit status: the command's own; 124 timed out; 125 the sandbox could not
start or cannot enforce a limit; 126 not executable; 127 not found; 137
killed for memory; 128+N interrupted by signal N (130: Ctrl-C).`,
		Example: `  hunk exec -- go test ./...
  hunk exec --sh 'make -j4 && ./run-tests' --timeout 10m --memory 2GiB
  hunk exec --network --workdir web -- npm ci
  hunk exec --timeout 30 --ro ~/.aws -- ./deploy --dry-run
  hunk exec --drivers`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Argv = args
			var err error
			cfg := app.Cfg.Exec
			o.Driver, o.Timeout, o.Pids, o.CPUs, o.Image = cfg.Driver, cfg.Timeout, cfg.Pids, cfg.CPUs, cfg.Image
			o.KeepWarm, o.Idle, o.Caches = cfg.KeepWarm, cfg.Idle, cfg.Caches
			if o.Memory, err = parseSize(cfg.Memory); err != nil {
				return result.Usagef("--memory %q: %v", cfg.Memory, err).WithHint("sizes look like 512MiB, 2G or 1048576")
			}
			if o.MaxOutput, err = parseSize(cfg.MaxOutput); err != nil {
				return result.Usagef("--max-output %q: %v", cfg.MaxOutput, err).WithHint("sizes look like 1MiB, 64K or 65536")
			}
			if o.ListDrivers || o.dockerAdmin() {
				return run(app, cmd, o)
			}
			switch {
			case o.Sh != "" && len(args) > 0:
				return result.Usagef("give the command either after -- or with --sh, not both").WithHint("usage: " + cmd.UseLine())
			case o.Sh == "" && len(args) == 0:
				return result.Usagef("no command to run").WithHint("usage: hunk exec [flags] -- CMD [ARGS...], or hunk exec --sh 'CMD'")
			case o.Timeout < 0:
				return result.Usagef("--timeout must not be negative")
			case o.Pids < 0:
				return result.Usagef("--pids must not be negative")
			case o.CPUs < 0:
				return result.Usagef("--cpus must not be negative")
			}
			for _, kv := range o.Env {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return result.Usagef("--env %q: want K=V", kv)
				}
			}
			if o.Sh != "" {
				o.Argv = []string{"/bin/sh", "-c", o.Sh}
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
	f.BoolVar(&o.Network, "network", false, "allow network access")
	f.BoolVar(&o.ReadOnly, "read-only", false, "mount the workspace read-only too")
	f.StringArrayVar(&o.RW, "rw", nil, "let the command write host `PATH` too (repeatable)")
	f.StringArrayVar(&o.RO, "ro", nil, "show host `PATH` read-only, even a hidden one (repeatable)")
	f.Bool("caches", true, "give the command the workspace's own writable build caches (Go, npm, pip, cargo, Maven, Gradle) that persist across runs")
	f.StringArrayVar(&o.Hide, "hide", nil, "hide host `PATH` from the command, beside ~/.ssh, ~/.aws, ~/.gnupg, /etc/shadow, … (repeatable)")
	f.Var(newDurationFlag(120*time.Second), "timeout", "kill the whole process tree after this long, e.g. 30 (seconds), 10m (exit 124); 0 for none")
	f.String("memory", "", "memory limit, e.g. 512MiB (exit 137 when exceeded)")
	f.Int("pids", 0, "maximum number of processes and threads (default 4096 under docker and cgroup v2)")
	f.Float64("cpus", 0, "CPU quota in cores, e.g. 1.5")
	f.String("max-output", "1MiB", "bytes kept of each of stdout and stderr (head and tail); 0 for all")
	f.String("driver", "auto", "sandbox driver: auto, bwrap, landlock, docker or none")
	f.BoolVar(&o.ListDrivers, "drivers", false, "list the drivers, whether each works here and what it enforces")
	f.String("image", "", "container image (docker driver)")
	f.BoolVar(&o.Pull, "pull", false, "pull the image when the engine lacks it (docker driver; never without this flag)")
	f.Bool("keep-warm", false, "keep the container for the next run (docker driver)")
	f.Var(newDurationFlag(10*time.Minute), "idle", "stop a warm container after this long unused (docker driver; --gc removes it)")
	for flag, key := range map[string]string{
		"timeout": "exec.timeout", "memory": "exec.memory", "pids": "exec.pids", "cpus": "exec.cpus",
		"max-output": "exec.max-output", "driver": "exec.driver", "image": "exec.image",
		"keep-warm": "exec.keep-warm", "idle": "exec.idle", "caches": "exec.caches",
	} {
		configKey(f, flag, key)
	}
	addDockerAdminFlags(f, o)
	_ = c.RegisterFlagCompletionFunc("driver", cobra.FixedCompletions([]string{"auto", "bwrap", "landlock", "docker", "none"}, cobra.ShellCompDirectiveNoFileComp))
	return c
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

// execEnv is the command's environment: the allow-list from hunk's, then --env.
func execEnv(extra []string) []string {
	var env []string
	for _, k := range envAllowList {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		} else if k == "PATH" {
			env = append(env, "PATH="+defaultPath)
		}
	}
	return append(env, extra...)
}

func runExec(app *App, cmd *cobra.Command, o *execOptions) error {
	ctx, handling := early.Interrupt()
	if o.ListDrivers {
		return listDrivers(ctx, app)
	}
	if o.dockerAdmin() {
		return runDockerAdmin(ctx, app, o)
	}
	ws, err := app.Workspace()
	if err != nil {
		return err
	}
	workdir := ws.Dir()
	if o.Workdir != "" {
		name, err := ws.Resolve(o.Workdir)
		if err != nil {
			return err
		}
		fi, err := ws.Stat(name)
		if err != nil {
			return ws.Error(name, err)
		}
		if !fi.IsDir() {
			return result.Errorf(result.InvalidArgument, "--workdir %s: not a directory", o.Workdir)
		}
		real, err := filepath.EvalSymlinks(ws.Abs(name))
		if err != nil {
			return ws.Error(name, err)
		}
		workdir = real
	}
	home := os.Getenv("HOME")
	// hostPaths resolves the host paths given to --rw, --ro or --hide.
	hostPaths := func(flag string, list []string, mustExist bool) ([]string, error) {
		var out []string
		for _, p := range list {
			real, err := sandbox.HostPath(p, home, mustExist)
			if err != nil {
				return nil, result.Errorf(result.InvalidArgument, "--%s %s: %v", flag, p, err).
					WithHint("give an existing path, absolute or ~/…")
			}
			out = append(out, real)
		}
		return out, nil
	}
	rw, err := hostPaths("rw", o.RW, true)
	if err != nil {
		return err
	}
	ro, err := hostPaths("ro", o.RO, true)
	if err != nil {
		return err
	}
	hide, err := hostPaths("hide", o.Hide, false)
	if err != nil {
		return err
	}
	hide = append(sandbox.DefaultHidden(home), hide...)
	env := execEnv(o.Env)
	if o.Caches && o.Driver != "none" {
		if dir := sandbox.CacheDir(ws.Dir(), home, os.Getenv("XDG_CACHE_HOME")); dir != "" {
			// Best effort: a HOME hunk cannot write (a service user's)
			// runs the command without caches, as before they existed.
			if vars, err := sandbox.CacheEnv(dir, o.Env, o.Network, os.Getenv); err != nil {
				app.Warn("no build caches for this run (--caches=false to silence): %v", err)
			} else {
				env = append(vars, env...)
				rw = append(rw, dir)
			}
		}
	}
	spec := sandbox.Spec{
		RW:        rw,
		RO:        ro,
		Hide:      hide,
		Argv:      o.Argv,
		Workspace: ws.Dir(),
		Workdir:   workdir,
		Env:       env,
		Network:   o.Network,
		ReadOnly:  o.ReadOnly,
		Timeout:   o.Timeout,
		Memory:    o.Memory,
		Pids:      o.Pids,
		CPUs:      o.CPUs,
		MaxOutput: o.MaxOutput,
		Stdin:     app.Stdin,
		Ready:     handling, // from then on, an interrupt stops the command, not just hunk
		Image:     o.Image,
		Pull:      o.Pull,
		KeepWarm:  o.KeepWarm,
		Idle:      o.Idle,
	}
	if !app.Cfg.JSON {
		spec.Stdout, spec.Stderr = app.Stdout, app.Stderr
	}
	if o.Driver == "none" {
		app.Warn("driver none: the command runs without any isolation (filesystem, network and sockets are open)")
	}
	r, err := sandbox.Run(ctx, o.Driver, spec)
	if err != nil {
		return sandboxError(err)
	}
	var in *early.Interrupted
	if r.Interrupted && errors.As(context.Cause(ctx), &in) {
		r.ExitCode = in.ExitCode()
	}
	return reportExec(app, o, r, in)
}

// sandboxError maps the sandbox's errors to the contract's codes.
func sandboxError(err error) error {
	var ue *sandbox.UnavailableError
	var le *sandbox.LimitError
	var de *sandbox.UnknownDriverError
	var re *result.Error
	switch {
	case errors.As(err, &re):
		return re // already typed by the driver (docker)
	case errors.As(err, &ue):
		e := result.Errorf(result.SandboxUnavailable, "%s", ue.Error())
		if ue.Hint != "" {
			e.WithHint(ue.Hint)
		}
		return e
	case errors.As(err, &le):
		return result.Errorf(result.LimitUnenforceable, "%s", le.Error()).
			WithHint("drop " + le.Limit + ", run hunk as root (cgroups), or pick a driver that enforces it (hunk exec --drivers)")
	case errors.As(err, &de):
		return result.Usagef("%s", de.Error()).WithHint("hunk exec --drivers lists them")
	}
	return result.Wrap(result.SandboxUnavailable, err, "sandbox")
}

// silentExit ends hunk with code and prints nothing more: the command's
// output (or the JSON result) already said everything.
func silentExit(code int) error {
	if code == 0 {
		return nil
	}
	return &result.Error{Exit: code}
}

// seconds formats d as the contract's "N seconds" ("1 second").
func seconds(d time.Duration) string {
	n := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if n == "1" {
		return n + " second"
	}
	return n + " seconds"
}

func reportExec(app *App, o *execOptions, r sandbox.Result, in *early.Interrupted) error {
	var note string
	switch {
	case r.TimedOut:
		note = fmt.Sprintf("Command timed out after %s", seconds(o.Timeout))
	case r.Interrupted && in != nil:
		note = fmt.Sprintf("Interrupted (%s): the command and every process it started were stopped", in.Name())
	case r.OOMKilled && r.ExitCode == 137:
		note = fmt.Sprintf("Command killed: it exceeded the memory limit (--memory %d bytes)", o.Memory)
	case r.OOMKilled:
		note = fmt.Sprintf("A process of the command was killed: it exceeded the memory limit (--memory %d bytes)", o.Memory)
	}
	details := map[string]any{
		"exitCode":   r.ExitCode,
		"stdout":     string(r.Stdout),
		"stderr":     string(r.Stderr),
		"timedOut":   r.TimedOut,
		"truncated":  r.Truncated,
		"durationMs": r.Duration.Milliseconds(),
		"driver":     r.Driver,
	}
	if r.OOMKilled {
		details["oomKilled"] = true
	}
	if !app.Cfg.JSON {
		if note != "" {
			fmt.Fprintf(app.Stderr, "%s: error: %s\n", prog, note)
		}
		return silentExit(r.ExitCode)
	}
	var b strings.Builder
	b.Write(r.Stdout)
	if len(r.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.Write(r.Stderr)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	fmt.Fprintf(&b, "Exit code: %d", r.ExitCode)
	doc := result.Success(b.String(), details)
	switch {
	case r.TimedOut:
		doc.IsError, doc.Error, doc.Code = true, note, result.Timeout
	case r.Interrupted:
		doc.IsError, doc.Error, doc.Code = true, note, result.Interrupted
	case r.OOMKilled && r.ExitCode == 137:
		doc.IsError, doc.Error, doc.Code = true, note, result.OutOfMemory
	}
	if err := doc.Encode(app.Stdout); err != nil {
		return err
	}
	return silentExit(r.ExitCode)
}

// listDrivers prints every driver, whether it works here and what it enforces.
func listDrivers(ctx context.Context, app *App) error {
	type row struct {
		Name       string `json:"name"`
		Available  bool   `json:"available"`
		Note       string `json:"note"`
		Filesystem bool   `json:"filesystem"`
		Network    bool   `json:"network"`
		Timeout    bool   `json:"timeout"`
		Memory     bool   `json:"memory"`
		Pids       bool   `json:"pids"`
		CPUs       bool   `json:"cpus"`
		// Against a hostile command (sandbox.Guard* names).
		Guards      []string `json:"guards"`
		NotEnforced []string `json:"notEnforced"`
	}
	var rows []row
	auto := ""
	for _, n := range sandbox.Names() {
		d := sandbox.Lookup(n)
		c := d.Probe(ctx)
		if t, ok := d.(sandbox.Tester); ok && c.Available {
			if err := t.Test(ctx); err != nil {
				c.Available, c.Reason = false, err.Error()
			}
		}
		if auto == "" && c.Available {
			for _, a := range sandbox.AutoOrder {
				if a == n {
					auto = n
				}
			}
		}
		rows = append(rows, row{n, c.Available, c.Reason, c.Filesystem, c.Network, c.Timeout, c.Memory, c.Pids, c.CPUs, c.Guards, c.Gaps})
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVER\tWORKS HERE\tENFORCES\tNOTE")
	for _, r := range rows {
		var enf []string
		for _, e := range []struct {
			on   bool
			name string
		}{{r.Filesystem, "filesystem"}, {r.Network, "network"}, {r.Timeout, "timeout"}, {r.Memory, "memory"}, {r.Pids, "pids"}, {r.CPUs, "cpus"}} {
			if e.on {
				enf = append(enf, e.name)
			}
		}
		works := "no"
		if r.Available {
			works = "yes"
		}
		if len(enf) == 0 {
			enf = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, works, strings.Join(enf, ","), r.Note)
	}
	tw.Flush()
	b.WriteString("\nAgainst a hostile command:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if r.Available {
			fmt.Fprintf(tw, "  %s\tguards: %s\tnot enforced: %s\n", r.Name, orDash(r.Guards), orDash(r.NotEnforced))
		}
	}
	tw.Flush()
	b.WriteString("\nWhat each guard means:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, g := range guardLegend {
		fmt.Fprintf(tw, "  %s\t%s\n", g[0], g[1])
	}
	tw.Flush()
	b.WriteString("\n")
	if auto != "" {
		fmt.Fprintf(&b, "auto: %s\n", auto)
	} else {
		fmt.Fprintf(&b, "auto: none works here (install bubblewrap, or use a kernel with Landlock)\n")
	}
	return app.Emit(b.String(), b.String(), map[string]any{"drivers": rows, "auto": auto})
}

// guardLegend says what each of sandbox's Guard names stands for.
var guardLegend = [][2]string{
	{sandbox.GuardProcesses, "cannot trace, signal or read hunk or any process outside its own tree"},
	{sandbox.GuardSockets, "cannot connect to the host's unix sockets (the Docker socket, ssh and gpg agents)"},
	{sandbox.GuardPrivileges, "no device nodes, mounts, clock, hostname or other host-wide capability"},
	{sandbox.GuardKeyring, "cannot read the kernel keyrings"},
	{sandbox.GuardTerminal, "cannot type into the caller's terminal (TIOCSTI)"},
	{sandbox.GuardDescriptors, "inherits no descriptor of hunk's caller but stdin, stdout and stderr"},
	{sandbox.GuardCleanup, "nothing it started survives hunk, even hunk killed with SIGKILL"},
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
