package execrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Command is one run: what a call asks for, under the person's Limits.
type Command struct {
	Argv []string
	// Workdir is the working directory, a path inside the workspace ("":
	// its root).
	Workdir string
	// Env are the K=V the call and --env set, in that order, added to the
	// allow-listed ones of hunk's environment (CommandEnv).
	Env []string
	Limits
	// Ready, when set, is closed once an interrupt would reach the command.
	Ready          <-chan struct{}
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Surface says a refusal's advice in the caller's words; Session
	// tags the audit trail's decisions.
	Surface Surface
	Session string
}

// Run is a prepared run: the sandbox's spec and what the report needs.
// Release ends it (the path policy's placeholders).
type Run struct {
	Spec sandbox.Spec
	// Cache is the build caches' state (New: made for this run).
	Cache sandbox.CacheState
	// GitProtected: the workspace's .git is read-only to the command.
	GitProtected bool
	// Path is the command's PATH.
	Path   string
	placed *placeholders
	gitDir string
	noRepo bool // the workspace had no .git before the run
	// started is the kernel's file clock as the command starts (FileClock);
	// readOnly: the command could write nothing (no repository to look for).
	started  time.Time
	readOnly bool
}

// Prepare assembles the sandbox's spec for c over the workspace: the
// working directory, the host paths (real, each once), the hidden ones, the
// environment (allow-list, build caches, offline settings), the path
// policy's mounts (with their placeholders made) and hunk's own state
// hidden; the command rules decide c first (CheckRules). What it gives up on the way (no caches; a cold container for a
// placeholder) is said through warn. A rule nothing can hold refuses the
// run.
func Prepare(ws *workspace.Workspace, c Command, warn func(string)) (*Run, error) {
	d, err := CheckRules(c, approvals(ws), ws.Dir())
	if d.Decision != "" && c.Decided != nil {
		c.Decided(d)
	}
	if d.Decision != "" {
		if st, herr := ws.History(); herr == nil {
			if herr := st.Decided(d); herr != nil {
				warn("the audit trail: " + herr.Error())
			}
		}
	}
	if err != nil {
		return nil, err // before anything of the run is made
	}
	workdir, err := workdirOf(ws, c.Workdir)
	if err != nil {
		return nil, err
	}
	home := os.Getenv("HOME")
	paths, err := hostPathsOf(c.Limits, home)
	if err != nil {
		return nil, err
	}
	cmdEnv, cache, cacheDir := environment(ws, c, home, warn)
	run := &Run{Cache: cache, Path: pathOf(cmdEnv), gitDir: filepath.Join(ws.Dir(), ".git")}
	_, statErr := os.Lstat(run.gitDir)
	run.noRepo = statErr != nil
	layout, err := policyLayout(ws, c.ReadOnly)
	if err != nil {
		return nil, err
	}
	var protect []string
	if !c.GitWrite && layout.Writable(".git", false) {
		protect = sandbox.ProtectedPaths(ws.Dir())
	}
	run.GitProtected = len(protect) > 0
	mounts, hideOutside := layout.sandboxMounts(ws.Dir())
	hide := append(paths.hide, hideOutside...)
	if run.placed, err = layout.place(ws.Dir()); err != nil {
		run.Release()
		return nil, err
	}
	keepWarm := c.KeepWarm
	if run.placed.any() && keepWarm {
		// A placeholder lives for one run; a warm container would keep a
		// mount of it after it is gone.
		keepWarm = false
		warn("the path policy needs a placeholder for a path that does not exist yet: this run uses a new container, not a warm one")
	}
	var own []string
	if c.Driver != "none" {
		var outside []string
		if own, outside, err = placeOwnState(ws.Dir(), paths.rw, paths.ro, c.ReadOnly); err != nil {
			run.Release()
			return nil, err
		}
		hide = append(hide, outside...)
	}
	run.Spec = sandbox.Spec{
		RW: paths.rw, RO: paths.ro, ROAt: paths.roAt, Hide: hide, Protect: protect, Own: own, Cache: cacheDir,
		Policy: mounts, AllowOnly: layout.AllowOnly,
		Argv: c.Argv, Workspace: ws.Dir(), Workdir: workdir, Env: cmdEnv,
		Network: c.Network, ReadOnly: c.ReadOnly,
		Timeout: c.Timeout, Memory: c.Memory, Pids: c.Pids, CPUs: c.CPUs, MaxOutput: c.MaxOutput,
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr,
		Ready: c.Ready,
		Image: c.Image, Pull: c.Pull, KeepWarm: keepWarm, Idle: c.Idle,
	}
	if c.Driver == "none" {
		warn("driver none: the command runs without any isolation (filesystem, network and sockets are open)")
	}
	run.started, run.readOnly = FileClock(), c.ReadOnly
	return run, nil
}

// Release ends the run's hold on the path policy's placeholders (the last
// run over the workspace removes them).
func (r *Run) Release() { r.placed.remove() }

// NewRepoRisks are what git would run outside the sandbox in a repository
// the command created at the workspace root (none when one was there
// before, or the driver is none).
func (r *Run) NewRepoRisks(driver string) []string {
	if !r.noRepo || driver == "none" {
		return nil
	}
	return sandbox.NewRepoRisks(r.gitDir)
}

// workdirOf is the real path of the working directory name names (the
// workspace's root for "").
func workdirOf(ws *workspace.Workspace, dir string) (string, error) {
	if dir == "" {
		return ws.Dir(), nil
	}
	name, err := ws.Resolve(dir)
	if err != nil {
		return "", err
	}
	fi, err := ws.Stat(name)
	if err != nil {
		return "", ws.Error(name, err)
	}
	if !fi.IsDir() {
		return "", result.Errorf(result.InvalidArgument, "workdir %s: not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(ws.Abs(name))
	if err != nil {
		return "", ws.Error(name, err)
	}
	return real, nil
}

// hostPaths are the host paths a run shows or hides, real.
type hostPaths struct {
	rw, ro, roAt, hide []string
}

// hostPathsOf resolves --rw, --ro and --hide: each --ro also where it was
// named (a link's own path), each path once (docker refuses a mount point
// twice), the default hidden ones first.
func hostPathsOf(l Limits, home string) (hostPaths, error) {
	var p hostPaths
	var err error
	if p.rw, err = realPaths("rw", l.RW, home, true); err != nil {
		return p, err
	}
	if p.ro, err = realPaths("ro", l.RO, home, true); err != nil {
		return p, err
	}
	p.ro, p.roAt = namedAt(l.RO, p.ro, home)
	p.rw = dedupe(p.rw)
	hide, err := realPaths("hide", l.Hide, home, false)
	if err != nil {
		return p, err
	}
	p.hide = append(sandbox.DefaultHidden(home), hide...)
	return p, nil
}

func realPaths(flag string, list []string, home string, mustExist bool) ([]string, error) {
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

// environment is the command's environment: the allow-list and c.Env, the
// build caches' variables (best effort: a HOME hunk cannot write, a
// service user's, runs the command without caches, as before they
// existed) and, without a network, the settings that keep tools offline.
func environment(ws *workspace.Workspace, c Command, home string, warn func(string)) (env []string, cache sandbox.CacheState, cacheDir string) {
	env = CommandEnv(c.Env)
	if c.Caches && c.Driver != "none" {
		if dir := sandbox.CacheDir(ws.Dir(), home, os.Getenv("XDG_CACHE_HOME")); dir != "" {
			if vars, st, err := sandbox.CacheEnv(dir, c.Env, c.Network.Any(), os.Getenv); err != nil {
				warn(fmt.Sprintf("no build caches for this run (--caches=false to silence): %v", err))
			} else {
				cache, cacheDir = st, dir
				env = append(vars, env...)
			}
		}
	}
	if !c.Network.Any() && c.Driver != "none" {
		env = append(sandbox.OfflineEnv(env), env...)
	}
	return env, cache, cacheDir
}

// pathOf is the PATH in env (K=V), as the command gets it.
func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}
