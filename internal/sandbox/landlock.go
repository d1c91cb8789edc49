//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hunk-dev/hunk/internal/ownstate"
	"github.com/hunk-dev/hunk/internal/workspace"
)

func init() { Register("landlock", func() Driver { return landlockDriver{} }) }

// landlockDriver confines the command with Landlock, seccomp and dropped
// capabilities, which the command's process applies to itself between fork
// and exec (fork.go): no external program, no namespaces, so it works inside
// unprivileged containers.
type landlockDriver struct{}

func (landlockDriver) Name() string { return "landlock" }

func (d landlockDriver) Probe(ctx context.Context) Caps { return d.probe(true) }

// probe is Probe; without limits, the cgroup capabilities are left false
// (finding them costs a dozen system calls a run without limits can skip).
func (landlockDriver) probe(limits bool) Caps {
	abi := landlockABI()
	c := Caps{Timeout: true}
	if limits {
		c.Memory, c.Pids, c.CPUs = cgroupCaps()
	}
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
	// Signals and abstract sockets are scoped to the command's own tree
	// from ABI 6; before, only hunk itself is shielded (by seccomp), and
	// another process of the same user can be signalled. No pid
	// namespace: a setsid'd process survives a SIGKILL of hunk.
	// Nothing outlives hunk where each run has a cgroup of its own (every
	// process found there, hunk's watchdog destroying it should hunk die);
	// without one, a process that leaves the run's session and drops its
	// TMPDIR mark escapes.
	_, grouped := groupParent()
	c.SetGuards(map[string]bool{
		GuardProcesses: abi >= 6, GuardSockets: true, GuardMetadata: true, GuardSetuid: true, GuardOwnState: true, GuardPrivileges: true, GuardKeyring: true,
		GuardTerminal: true, GuardDescriptors: true, GuardCleanup: grouped,
	})
	if abi < 6 {
		c.Reason += "; signals to other processes of the same user not scoped (Landlock scopes them from ABI 6, Linux 6.12)"
	}
	return c
}

// devFiles may be written inside the sandbox; ttys also take ioctls.
var (
	devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
	ttyFiles = []string{"/dev/tty", "/dev/pts", "/dev/ptmx"}
)

func (d landlockDriver) Run(ctx context.Context, spec Spec) (Result, error) {
	caps := d.probe(spec.limited())
	if !caps.Available {
		return Result{}, &UnavailableError{Driver: "landlock", Reason: caps.Reason, Hint: "install bubblewrap for the bwrap driver, or --driver none to run without isolation"}
	}
	if spec.Network.Proxied() {
		return Result{}, egressRefused("landlock", "it has no network namespace: a command it runs either has no network or the host's whole network, never only the allowed hosts")
	}
	if len(spec.Own) > 0 {
		// hunk's own state inside the writable workspace (a workspace that
		// is the home directory): refused, as the .git below.
		return Result{}, &GuardError{Driver: "landlock", Guard: GuardOwnState,
			Reason: fmt.Sprintf("the workspace (or a --rw or --ro path) holds hunk's own configuration, caches or state (%s), and Landlock cannot hide part of a tree it lets the command reach: the command could read hunk's history or change what later hunk runs do outside the sandbox", strings.Join(spec.Own, ", ")),
			Hint:   "run it under bwrap or docker (--driver bwrap; they hide them), or use a workspace that does not hold your home directory's .config, .cache and .local/state"}
	}
	if len(spec.Protect) > 0 {
		// Landlock only grants: a part of the writable workspace cannot be
		// made read-only, so the git guard is refused, not run without.
		return Result{}, &GuardError{Driver: "landlock", Guard: GuardGit,
			Reason: "the workspace is a git repository, and Landlock cannot keep its .git read-only: the command could plant hooks or config that git runs outside the sandbox",
			Hint:   "run it under bwrap or docker (--driver bwrap; they keep .git read-only), or accept the risk with --git-write (exec.git-write: true in the config)"}
	}
	if !spec.policyGrantsOnly() {
		// Landlock grants access to whole trees: a path inside a readable
		// (or writable) one cannot be taken away again.
		return Result{}, &GuardError{Driver: "landlock", Guard: GuardPolicy,
			Reason: fmt.Sprintf("the path policy hides or keeps read-only %s inside the workspace, and Landlock can only grant access to whole trees", policyPaths(spec.Policy, spec.Workspace)),
			Hint:   "run it under bwrap or docker (--driver bwrap), which hold the policy with mounts"}
	}
	if err := applyLimits("landlock", &spec, caps); err != nil {
		return Result{}, err
	}
	tmp, err := privateTmp()
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	defer WatchSoon("tmp", tmp)() // its processes are marked by it, should hunk die
	abi := landlockABI()
	list, ro := readableExcept(spec.Hide)
	pol := landlockPolicy{
		List:    list,
		RO:      append(ro, spec.RO...),
		RW:      append([]string{tmp}, spec.RW...),
		RWFiles: devFiles,
		Ioctl:   ttyFiles,
		Network: spec.Network.Host,
	}
	if spec.ReadOnly || spec.AllowOnly {
		pol.RO = append(pol.RO, spec.Workspace)
		if !spec.ReadOnly {
			for _, m := range spec.Policy { // write.allow: writable places
				pol.RW = append(pol.RW, m.Path)
			}
		}
	} else {
		pol.RW = append(pol.RW, spec.Workspace)
	}
	if spec.Cache != "" {
		pol.RW = append(pol.RW, spec.Cache)
	}
	var env []string
	for _, kv := range spec.Env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp) // the one writable temporary directory
	c := confinement{
		landlock: &pol,
		seccomp:  &seccompPolicy{Sockets: true, Network: spec.Network.Host, Unix: landlockConfinesUnix(abi), Guard: os.Getpid(), Mediate: true},
		dropCaps: true,
		mediate:  &mediatePolicy{RW: realRoots(pol.RW), Hide: hiddenAround(realRoots(spec.Hide), realRoots(pol.RW))},
	}
	return runDirect(ctx, "landlock", spec, env, c)
}

// hiddenAround is hide without the paths that hold a writable root (the
// build cache inside hunk's hidden cache directory): the root is the
// command's, and the rest of such a path is outside every root anyway.
func hiddenAround(hide, rw []string) []string {
	var out []string
	for _, h := range hide {
		holds := false
		for _, r := range rw {
			holds = holds || Under(r, []string{h})
		}
		if !holds {
			out = append(out, h)
		}
	}
	return out
}

// runDirect starts the command itself (in a new session, confined by c in
// the child, placed in the run's cgroups) under the supervisor.
func runDirect(ctx context.Context, driver string, spec Spec, env []string, c confinement) (Result, error) {
	dir := spec.Workdir
	if dir == "" {
		dir = spec.Workspace
	}
	// 126 and 127 decided with the command's PATH, as a shell would.
	path, code, msg := lookPath(spec.Argv[0], envValue(env, "PATH"), dir)
	if code != 0 {
		return notStarted(driver, spec, code, msg), nil
	}
	cg, err := newCgroup(spec, true)
	if err != nil {
		return Result{}, err
	}
	defer cg.destroy()
	if cg != nil {
		for _, d := range cg.dirs {
			defer WatchSoon("cgroup", d)() // destroyed by the watchdog, should hunk die
		}
	}
	p := command(path, spec.Argv, env, dir)
	p.setsid = true
	st := NewStreams(spec)
	out, err := supervise(ctx, spec, p, cg, st, superviseOpts{confine: c, attributed: cg != nil})
	var se *startError
	switch {
	case errors.As(err, &se):
		code, msg := startFailure(spec.Argv[0], se.err)
		return notStarted(driver, spec, code, msg), nil
	case err != nil:
		return Result{}, &UnavailableError{Driver: driver, Reason: err.Error()}
	}
	return finish(driver, out, cg, st), nil
}

// notStarted is the result of a command that could not be started: the
// shell's exit code (126, 127) and why.
func notStarted(driver string, spec Spec, code int, msg string) Result {
	return Result{Driver: driver, ExitCode: code, NotStarted: msg}
}

// privateTmp makes the run's private temporary directory, the command's
// TMPDIR: $TMPDIR/hunk-exec-UID/PID-RANDOM, in a directory only the user
// can enter. The directories of hunk processes that died without removing
// theirs (killed with SIGKILL) go first, and with them the processes their
// runs left behind: the command died with hunk (its parent-death signal),
// but what it started in a new session did not. Every process of a run
// inherits its TMPDIR, which marks them (one that changes its environment
// escapes; with a process limit, the run's cgroup catches it too).
func privateTmp() (string, error) {
	base, err := privateBase()
	if err != nil {
		return "", err
	}
	if ents, err := os.ReadDir(base); err == nil {
		for _, e := range ents {
			if owner, ok := ownerPid(e.Name(), ""); ok && !alive(owner) {
				stale := filepath.Join(base, e.Name())
				killTagged("TMPDIR=" + stale)
				_ = os.RemoveAll(stale)
			}
		}
	}
	return os.MkdirTemp(base, fmt.Sprintf("%d-", os.Getpid()))
}

// privateBase is $TMPDIR/hunk-exec-UID, a directory only this user may
// enter (made when missing): the runs' private temporary directories, the
// empty file bwrap covers a read-denied file with.
func privateBase() (string, error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("hunk-exec-%d", os.Geteuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	// Someone else's, or a link planted to redirect it: not ours to use.
	var st syscall.Stat_t
	if err := syscall.Lstat(base, &st); err != nil {
		return "", err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("%s is not a private directory of this user; remove it", base)
	}
	return base, nil
}

// emptyFile is an empty, read-only regular file of this user's, made once
// in hunk's state directory (out of every workspace's listings and every
// sandbox's sight), else in privateBase: what bwrap binds over a
// read-denied file, so that it reads as empty — /dev/null bound there is a
// device on a nodev mount, which gives EACCES instead.
var emptyFile = sync.OnceValues(func() (string, error) {
	dir := ""
	if base := ownstate.StateBase(os.Getenv); base != "" {
		dir, _ = workspace.PrivateDir(base, "hunk")
	}
	if dir == "" {
		var err error
		if dir, err = privateBase(); err != nil {
			return "", err
		}
	}
	p := filepath.Join(dir, "empty")
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) == nil {
		if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == 0 && int(st.Uid) == os.Geteuid() && st.Mode&0o222 == 0 {
			return p, nil
		}
		_ = os.Remove(p)
	}
	fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o444)
	if err != nil {
		return "", err
	}
	syscall.Close(fd)
	return p, nil
})

// killTagged kills the processes of this user whose environment holds the
// entry tag (K=V), as they are now in /proc.
func killTagged(tag string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := []byte("\x00" + tag + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(append([]byte{0}, b...), want) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
