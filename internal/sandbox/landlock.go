package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
)

func init() {
	Register("landlock", func() Driver { return landlockDriver{} })
	Register("none", func() Driver { return noneDriver{} })
}

// landlockDriver confines the command with Landlock and seccomp, applied by
// hunk's own init to itself just before it execs the command: no external
// program, no namespaces, so it works inside unprivileged containers.
type landlockDriver struct{}

func (landlockDriver) Name() string { return "landlock" }

func (landlockDriver) Probe(ctx context.Context) Caps {
	abi := landlockABI()
	c := Caps{Timeout: true}
	c.Memory, c.Pids, c.CPUs = cgroupCaps()
	switch {
	case abi < 1:
		c.Reason = "the kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list)"
		return c
	case !seccompAvailable():
		c.Reason = "seccomp filters are not available here"
		return c
	}
	c.Available, c.Filesystem, c.Network = true, true, true
	c.Reason = fmt.Sprintf("Landlock ABI %d", abi)
	if !landlockConfinesUnix(abi) {
		c.Reason += "; unix sockets refused (Landlock confines them from ABI 9)"
	}
	return c
}

// devFiles may be written inside the sandbox; ttys also take ioctls.
var (
	devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
	ttyFiles = []string{"/dev/tty", "/dev/pts", "/dev/ptmx"}
)

func (d landlockDriver) Run(ctx context.Context, spec Spec) (Result, error) {
	caps := d.Probe(ctx)
	if !caps.Available {
		return Result{}, &UnavailableError{Driver: "landlock", Reason: caps.Reason, Hint: "install bubblewrap for the bwrap driver, or --driver none to run without isolation"}
	}
	if err := checkLimits("landlock", spec, caps); err != nil {
		return Result{}, err
	}
	tmp, err := os.MkdirTemp("", "hunk-exec-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	abi := landlockABI()
	pol := landlockPolicy{
		RO:      []string{"/"},
		RW:      []string{tmp},
		RWFiles: devFiles,
		Ioctl:   ttyFiles,
		Network: spec.Network,
	}
	if spec.ReadOnly {
		pol.RO = append(pol.RO, spec.Workspace)
	} else {
		pol.RW = append(pol.RW, spec.Workspace)
	}
	var env []string
	for _, kv := range spec.Env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp) // the one writable temporary directory
	cfg := initConfig{
		Argv:     spec.Argv,
		Env:      env,
		Dir:      spec.Workdir,
		Setsid:   true,
		Landlock: &pol,
		Seccomp:  &seccompPolicy{Network: spec.Network, Unix: landlockConfinesUnix(abi)},
	}
	return runInit(ctx, "landlock", spec, cfg)
}

// noneDriver runs the command without isolation (only when asked for by
// name); limits and the timeout still apply to its whole process tree.
type noneDriver struct{}

func (noneDriver) Name() string { return "none" }

func (noneDriver) Probe(ctx context.Context) Caps {
	c := Caps{Available: true, Timeout: true, Reason: "no isolation: the command can read and write anything hunk can, and reach the network"}
	c.Memory, c.Pids, c.CPUs = cgroupCaps()
	return c
}

func (d noneDriver) Run(ctx context.Context, spec Spec) (Result, error) {
	if err := checkLimits("none", spec, d.Probe(ctx)); err != nil {
		return Result{}, err
	}
	cfg := initConfig{Argv: spec.Argv, Env: spec.Env, Dir: spec.Workdir, Setsid: true}
	return runInit(ctx, "none", spec, cfg)
}

// runInit runs cfg through the sandbox init under the supervisor, in the
// cgroups spec's limits need.
func runInit(ctx context.Context, driver string, spec Spec, cfg initConfig) (Result, error) {
	cg, err := newCgroup(spec)
	if err != nil {
		return Result{}, err
	}
	defer cg.destroy()
	cfg.Cgroups = cg.procsFiles()
	dir := spec.Workdir
	if dir == "" {
		dir = spec.Workspace
	}
	cfg.Dir = dir
	cmd, err := initCmd(ctx, cfg, dir)
	if err != nil {
		return Result{}, err
	}
	st := NewStreams(spec)
	out, err := supervise(ctx, spec, cmd, cg, st)
	if err != nil {
		return Result{}, &UnavailableError{Driver: driver, Reason: err.Error()}
	}
	return finish(driver, out, cg, st), nil
}
