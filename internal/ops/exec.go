package ops

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/early"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	_ "github.com/hunk-dev/hunk/internal/sandbox/docker" // registers the docker driver
	"github.com/hunk-dev/hunk/internal/workspace"
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

	// ExecPolicy is what the command may reach and its limits.
	ExecPolicy `json:"-"`

	// Ready, when set, is closed once an interrupt would reach the command
	// (hunk's signal handlers are in place).
	Ready <-chan struct{} `json:"-"`
}

// ExecPolicy is exec's policy: the driver, what the command may reach and
// its limits. The person running hunk sets it — flags, environment and the
// configuration file, gathered in one place by the command line — and every
// front-end carries it whole: `hunk exec`, and the session `hunk mcp` and
// `hunk call` run every call in, where a call sets only its command, working
// directory, environment and (within Timeout) its timeout. A new rule or
// driver option is a field here, mapped onto the sandbox's Spec in Exec.
type ExecPolicy struct {
	Driver string
	// Timeout kills the whole process tree (0: none); for a tool call, the
	// longest it may ask for.
	Timeout  time.Duration
	Network  bool
	ReadOnly bool
	RW, RO   []string // host paths (--rw, --ro)
	Hide     []string // host paths, beside sandbox.DefaultHidden
	Caches   bool     // the workspace's build caches (sandbox.CacheEnv)
	GitWrite bool     // let the command change the workspace's .git (sandbox.ProtectedPaths)
	// Record makes what the command changes in the workspace one operation
	// of the history (execrecord.go), so that hunk undo takes it back.
	Record bool
	Memory int64
	Pids   int
	CPUs   float64
	// MaxOutput bounds each captured stream (0: all).
	MaxOutput int64
	// Docker only.
	Image    string
	Pull     bool
	KeepWarm bool
	Idle     time.Duration
}

// EnvAllowList are the variables of hunk's environment a command gets.
var EnvAllowList = []string{"PATH", "HOME", "LANG", "TERM"}

// DefaultPath is the command's PATH when hunk has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// commandEnv is the command's environment: the allow-list from hunk's, then extra.
func commandEnv(extra []string) []string {
	var env []string
	for _, k := range EnvAllowList {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		} else if k == "PATH" {
			env = append(env, "PATH="+DefaultPath)
		}
	}
	return append(env, extra...)
}

// check validates the request's shape.
func (r *ExecRequest) check() error {
	switch {
	case r.Sh != "" && len(r.Argv) > 0:
		return result.Usagef("give the command either as argv or as a shell command, not both")
	case r.Sh == "" && len(r.Argv) == 0:
		return result.Usagef("no command to run")
	case r.Timeout < 0 || r.TimeoutSeconds < 0:
		return result.Usagef("the timeout must not be negative")
	case r.Pids < 0:
		return result.Usagef("--pids must not be negative")
	case r.CPUs < 0:
		return result.Usagef("--cpus must not be negative")
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
// with. ctx's cancellation with an *early.Interrupted cause is reported as
// an interrupt.
func Exec(ctx context.Context, env *Env, req ExecRequest) (*Output, error) {
	out, _, err := ExecDetailed(ctx, env, req)
	return out, err
}

// ExecDetailed is Exec with the Output's details as their type, for the
// front-ends that map them onto a provider's shape (hunk call).
func ExecDetailed(ctx context.Context, env *Env, req ExecRequest) (*Output, *ExecDetails, error) {
	if err := req.check(); err != nil {
		return nil, nil, err
	}
	if req.TimeoutSeconds > 0 {
		req.Timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
	}
	argv := req.Argv
	if req.Sh != "" {
		argv = []string{"/bin/sh", "-c", req.Sh}
	}
	ws := env.Workspace
	workdir := ws.Dir()
	if req.Workdir != "" {
		name, err := ws.Resolve(req.Workdir)
		if err != nil {
			return nil, nil, err
		}
		fi, err := ws.Stat(name)
		if err != nil {
			return nil, nil, ws.Error(name, err)
		}
		if !fi.IsDir() {
			return nil, nil, result.Errorf(result.InvalidArgument, "workdir %s: not a directory", req.Workdir)
		}
		real, err := filepath.EvalSymlinks(ws.Abs(name))
		if err != nil {
			return nil, nil, ws.Error(name, err)
		}
		workdir = real
	}
	home := os.Getenv("HOME")
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
	rw, err := hostPaths("rw", req.RW, true)
	if err != nil {
		return nil, nil, err
	}
	ro, err := hostPaths("ro", req.RO, true)
	if err != nil {
		return nil, nil, err
	}
	// Each --ro where it was named too (a link's own path), and each path
	// once (docker refuses a mount point twice).
	var roAt []string
	ro, roAt = namedAt(req.RO, ro, home)
	rw = dedupe(rw)
	hide, err := hostPaths("hide", req.Hide, false)
	if err != nil {
		return nil, nil, err
	}
	hide = append(sandbox.DefaultHidden(home), hide...)
	extra := make([]string, 0, len(req.EnvVars)+len(req.Env))
	for k, v := range req.EnvVars {
		extra = append(extra, k+"="+v)
	}
	extra = append(extra, req.Env...)
	cmdEnv := commandEnv(extra)
	var cache sandbox.CacheState
	var cacheDir string
	if req.Caches && req.Driver != "none" {
		if dir := sandbox.CacheDir(ws.Dir(), home, os.Getenv("XDG_CACHE_HOME")); dir != "" {
			// Best effort: a HOME hunk cannot write (a service user's)
			// runs the command without caches, as before they existed.
			if vars, st, err := sandbox.CacheEnv(dir, extra, req.Network, os.Getenv); err != nil {
				env.warn(fmt.Sprintf("no build caches for this run (--caches=false to silence): %v", err))
			} else {
				cache = st
				cmdEnv = append(vars, cmdEnv...)
				cacheDir = dir
			}
		}
	}
	if !req.Network && req.Driver != "none" {
		cmdEnv = append(sandbox.OfflineEnv(cmdEnv), cmdEnv...)
	}
	layout, err := policyLayout(ws, req.ReadOnly)
	if err != nil {
		return nil, nil, err
	}
	var protect []string
	if !req.GitWrite && layout.Writable(".git", false) {
		protect = sandbox.ProtectedPaths(ws.Dir())
	}
	mounts, hideOutside := layout.sandboxMounts(ws.Dir())
	hide = append(hide, hideOutside...)
	placed, err := layout.place(ws.Dir())
	defer placed.remove()
	if err != nil {
		return nil, nil, err
	}
	if placed.any() && req.KeepWarm {
		// A placeholder lives for one run; a warm container would keep a
		// mount of it after it is gone.
		req.KeepWarm = false
		env.warn("the path policy needs a placeholder for a path that does not exist yet: this run uses a new container, not a warm one")
	}
	var own []string
	if req.Driver != "none" {
		var outside []string
		if own, outside, err = placeOwnState(ws.Dir(), rw, ro, req.ReadOnly); err != nil {
			return nil, nil, err
		}
		hide = append(hide, outside...)
	}
	spec := sandbox.Spec{
		RW: rw, RO: ro, ROAt: roAt, Hide: hide, Protect: protect, Own: own, Cache: cacheDir, Policy: mounts, AllowOnly: layout.AllowOnly,
		Argv: argv, Workspace: ws.Dir(), Workdir: workdir, Env: cmdEnv,
		Network: req.Network, ReadOnly: req.ReadOnly,
		Timeout: req.Timeout, Memory: req.Memory, Pids: req.Pids, CPUs: req.CPUs, MaxOutput: req.MaxOutput,
		Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr,
		Ready: req.Ready,
		Image: req.Image, Pull: req.Pull, KeepWarm: req.KeepWarm, Idle: req.Idle,
	}
	if req.Driver == "none" {
		env.warn("driver none: the command runs without any isolation (filesystem, network and sockets are open)")
	}
	gitDir := filepath.Join(ws.Dir(), ".git")
	_, noRepo := os.Lstat(gitDir)
	var scan *execScan
	if req.Record && !req.ReadOnly {
		if scan, err = recordBefore(env); err != nil {
			return nil, nil, err
		}
	}
	r, err := sandbox.Run(ctx, req.Driver, spec)
	if err != nil {
		if scan != nil {
			scan.op.DropPrivate()
		}
		return nil, nil, SandboxError(err)
	}
	var opID string
	if scan != nil {
		// What the command changed, whatever its exit: recorded, or said.
		if opID, err = recordAfter(env, scan, argv); err != nil {
			env.warn("exec --record: what the command changed is not recorded: " + err.Error())
		}
	}
	var newRepo []string
	if noRepo != nil && req.Driver != "none" {
		newRepo = sandbox.NewRepoRisks(gitDir)
	}
	var in *early.Interrupted
	if r.Interrupted && errors.As(context.Cause(ctx), &in) {
		r.ExitCode = in.ExitCode()
	}
	hint := policyReadOnly(ws, workdir, r.Stderr)
	if hint == "" {
		hint = execHint(req, r, len(protect) > 0, pathOf(cmdEnv))
	}
	out, details := execOutput(req, r, in, hint)
	details.OpID = opID
	if r.Fallback != "" {
		// auto never changes drivers in silence: what it gave up is said,
		// to the person and the model.
		w := fmt.Sprintf("ran under %s: the driver auto tried first could not start the sandbox here (%s)", r.Driver, r.Fallback)
		env.warn(w)
		out.Text = "warning: " + w + "\n" + out.Text
	}
	if len(newRepo) > 0 {
		// Reported, not removed: it is the command's work, but git would
		// run it outside the sandbox.
		w := fmt.Sprintf("the command created a git repository at the workspace root with what git would run outside the sandbox: %s; look at it before running git there", strings.Join(newRepo, ", "))
		env.warn(w)
		out.Text = "warning: " + w + "\n" + out.Text
		details.NewRepository = newRepo
	}
	if cache.New && r.Duration >= slowFirstRun {
		// Said once: the first slow run over a new cache explains itself.
		out.Notice = fmt.Sprintf("this workspace's build caches were new (%s): the first build fills them, later runs reuse them", cache.Dir)
		out.Text = "note: " + out.Notice + "\n" + out.Text
		cache.Warmed()
	}
	return out, details, nil
}

// slowFirstRun is how long a first run over new caches takes before hunk
// says why.
const slowFirstRun = 3 * time.Second

// pathOf is the PATH in env (K=V), as the command gets it.
func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// SandboxError maps the sandbox's errors to the contract's codes.
func SandboxError(err error) error {
	var ue *sandbox.UnavailableError
	var le *sandbox.LimitError
	var ge *sandbox.GuardError
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
	case errors.As(err, &ge):
		return result.Errorf(result.LimitUnenforceable, "%s", ge.Error()).WithHint(ge.Hint)
	case errors.As(err, &de):
		return result.Usagef("%s", de.Error()).WithHint("hunk exec --drivers lists them")
	}
	return result.Wrap(result.SandboxUnavailable, err, "sandbox")
}

// seconds formats d as the contract's "N seconds" ("1 second").
func seconds(d time.Duration) string {
	n := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if n == "1" {
		return n + " second"
	}
	return n + " seconds"
}

// hostBoundHint explains why a program bound from the host with --ro
// (name, as the command named it) cannot start in an image: what it needs
// to start — a dynamic ELF's loader and libraries, a script's interpreter —
// is the host's, not the image's. "" when name is not such a program.
func hostBoundHint(name string, ro []string) string {
	if !filepath.IsAbs(name) {
		return ""
	}
	bound := false
	for _, p := range ro {
		if a, err := filepath.Abs(p); err == nil && (name == a || strings.HasPrefix(name, strings.TrimSuffix(a, "/")+"/")) {
			bound = true
		}
	}
	if !bound {
		return ""
	}
	if f, err := elf.Open(name); err == nil {
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type != elf.PT_INTERP {
				continue
			}
			b, _ := io.ReadAll(prog.Open())
			interp := strings.TrimRight(string(b), "\x00")
			return fmt.Sprintf("%s is bound from the host, but it is dynamically linked: its loader %s and the libraries it links are the host's, not the image's; bind them too (--ro /lib --ro /lib64 --ro /usr/lib), run in an image that has them, or use a statically linked build", name, interp)
		}
		return ""
	}
	if b, err := os.ReadFile(name); err == nil && strings.HasPrefix(string(b), "#!") {
		line, _, _ := strings.Cut(string(b[2:]), "\n")
		if fields := strings.Fields(line); len(fields) > 0 {
			return fmt.Sprintf("%s is bound from the host, but it is a script for %s, which the image does not have where it says; bind it too (--ro %s) or run in an image that has it", name, fields[0], fields[0])
		}
	}
	return ""
}

// namedAt pairs each real --ro path with where it was named (absolute, its
// last link not followed), dropping repeats.
func namedAt(given, real []string, home string) (ro, at []string) {
	seen := map[string]bool{}
	for i, p := range real {
		named := p
		if i < len(given) {
			if rest, ok := strings.CutPrefix(given[i], "~/"); ok && home != "" {
				named = filepath.Join(home, rest)
			} else if a, err := filepath.Abs(given[i]); err == nil {
				named = a
			}
			if d, err := filepath.EvalSymlinks(filepath.Dir(named)); err == nil {
				named = filepath.Join(d, filepath.Base(named))
			}
		}
		if seen[p+"\x00"+named] {
			continue
		}
		seen[p+"\x00"+named] = true
		ro, at = append(ro, p), append(at, named)
	}
	return ro, at
}

// dedupe drops repeated paths.
func dedupe(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// readOnlyGit reports whether stderr says that a write into .git failed
// because it is read-only (git's "Unable to create '.../.git/index.lock':
// Read-only file system", a shell's "cannot create .git/...").
func readOnlyGit(stderr []byte) bool {
	for _, p := range readOnlyPaths(stderr) {
		if gitComponent.MatchString(p) {
			return true
		}
	}
	return false
}

// gitComponent matches a path with a .git component (not .github).
var gitComponent = regexp.MustCompile(`(^|/)\.git(/|$)`)

// readOnlyPath finds the path in a tool's "Read-only file system" error:
// quoted ('X', "X", ‘X’) or after "create", "remove" and the like.
var readOnlyPath = regexp.MustCompile(`['"‘]([^'"’]+)['"’][^'"]*Read-only file system|(?:create|remove|touch|open|write|rename|mkdir)\s+([^\s:'"]+): Read-only file system`)

// readOnlyPaths are the paths a command's stderr says it could not change
// for a read-only file system.
func readOnlyPaths(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if m := readOnlyPath.FindStringSubmatch(l); m != nil {
			out = append(out, m[1]+m[2])
		}
	}
	return out
}

// policyReadOnly is the hint for a command refused a change by the path
// policy's read-only mounts: the rule it met and where it comes from.
func policyReadOnly(ws *workspace.Workspace, workdir string, stderr []byte) string {
	if ws.Policy().Empty() {
		return ""
	}
	for _, p := range readOnlyPaths(stderr) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workdir, p)
		}
		name, err := ws.Resolve(p)
		if err != nil {
			continue
		}
		if d, by := ws.Decide(name, true); !d.Allowed {
			return fmt.Sprintf("%s: writing is %s%s, so the sandbox keeps it read-only (the person running hunk sets the policy; hunk policy check %s shows the rule)",
				workspace.Quote(name), d.Reason(), workspace.Via(name, by), name)
		}
	}
	return ""
}

// execHint is what to tell the user of a run that failed for a reason the
// sandbox made: a program that is not there, a .git kept read-only, no
// network. "" when the run succeeded or none applies.
func execHint(req ExecRequest, r sandbox.Result, gitProtected bool, path string) string {
	switch {
	case r.ExitCode == 0 && !r.TimedOut, r.Interrupted:
		return ""
	case r.ExitCode == 127 && strings.Contains(r.NotStarted, "in the sandbox"):
		return "" // the message says why and what to do
	case r.ExitCode == 127 && r.NotStarted != "":
		name, _, _ := strings.Cut(r.NotStarted, ": ")
		if h := hostBoundHint(name, req.RO); r.Driver == "docker" && h != "" {
			return h
		}
		if r.Driver == "docker" {
			return fmt.Sprintf("the image %s has no %s: run in an image that has it (--image), or show the host's toolchain read-only (for Go: --ro /usr/local/go --env PATH=/usr/local/go/bin:/bin --env CGO_ENABLED=0); docs/exec.md has a recipe", req.Image, name)
		}
		if strings.Contains(name, "/") {
			return fmt.Sprintf("%s does not exist in the workspace", name)
		}
		return fmt.Sprintf("%s is not on the command's PATH (%s); install it, give its full path, or set --env PATH=…", name, path)
	case gitProtected && readOnlyGit(r.Stderr):
		return "the workspace's .git is read-only in the sandbox (git runs its hooks and config outside it); --git-write (exec.git-write) lets the command change it"
	case !req.Network && req.Driver != "none" && r.Driver != "none" && sandbox.TriedNetwork(r.Stdout, r.Stderr):
		return "the sandbox has no network; add --network"
	}
	return ""
}

// execOutput is the result of a command that ran: its output and exit code
// for a model, and a failure for timeouts, interrupts and the memory limit.
func execOutput(req ExecRequest, r sandbox.Result, in *early.Interrupted, hint string) (*Output, *ExecDetails) {
	var note string
	var code result.Code
	switch {
	case r.TimedOut:
		note, code = fmt.Sprintf("Command timed out after %s", seconds(req.Timeout)), result.Timeout
	case r.Interrupted && in != nil:
		note, code = fmt.Sprintf("Interrupted (%s): the command and every process it started were stopped", in.Name()), result.Interrupted
	case r.Interrupted:
		note, code = "Interrupted: the command and every process it started were stopped", result.Interrupted
	case r.OOMKilled && r.ExitCode == 137:
		note, code = fmt.Sprintf("Command killed: it exceeded the memory limit (--memory %d bytes)", req.Memory), result.OutOfMemory
	case r.OOMKilled:
		note = fmt.Sprintf("A process of the command was killed: it exceeded the memory limit (--memory %d bytes)", req.Memory)
	}
	var startNote string
	if r.NotStarted != "" {
		// Said as a shell says it, after what the command printed.
		startNote = "hunk: " + r.NotStarted + "\n"
		r.Stderr = append(r.Stderr, startNote...)
	}
	details := &ExecDetails{
		ExitCode:   r.ExitCode,
		Stdout:     string(r.Stdout),
		Stderr:     string(r.Stderr),
		TimedOut:   r.TimedOut,
		Truncated:  r.Truncated,
		DurationMs: r.Duration.Milliseconds(),
		Driver:     r.Driver,
		Fallback:   r.Fallback,
		OOMKilled:  r.OOMKilled,
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
	if hint != "" {
		b.WriteString("hint: " + hint + "\n")
	}
	fmt.Fprintf(&b, "Exit code: %d", r.ExitCode)
	out := &Output{Text: b.String(), Details: details, ExitCode: r.ExitCode, Message: note, Hint: hint, Stderr: startNote}
	if code != "" {
		out.Failure = result.Errorf(code, "%s", note)
	}
	return out, details
}
