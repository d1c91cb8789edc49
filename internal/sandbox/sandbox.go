// Package sandbox runs a command over the workspace under one of several
// isolation drivers (landlock, bwrap, docker, none), enforcing the limits a
// Spec asks for or refusing to run — never silently dropping one.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// Spec is one command to run and the isolation and limits it must get.
type Spec struct {
	Argv      []string // the command; --sh 'CMD' arrives as ["/bin/sh", "-c", "CMD"]
	Workspace string   // absolute host path of the workspace root (mounted/allowed read-write)
	Workdir   string   // absolute host path of the working directory, inside Workspace
	Env       []string // the complete environment, K=V (already cleared to the allow-list)
	Network   Network  // what the command may reach (network.go)
	RW        []string // further host paths the command may write (--rw)
	RO        []string // further host paths made visible read-only (--ro: docker; the others see the host read-only already), real paths
	ROAt      []string // where each RO path is seen, as named (a link's own path; docker binds there)
	Hide      []string // host paths the command may not read (--hide and DefaultHidden)
	ReadOnly  bool     // the workspace is read-only too
	// Protect are paths inside the workspace the command may read but not
	// change (ProtectedPaths: the repository's .git), where the driver can
	// (GuardGit).
	Protect []string
	// Own are hunk's own configuration, caches and state where a place
	// the sandbox shows (the workspace, an RW or RO path) holds them, each
	// at its path there (ops finds them by device and inode): hidden from
	// the command by a mount over each, or the run is refused
	// (GuardOwnState). Hunk's state elsewhere is in Hide.
	Own []string
	// Cache is the workspace's build cache directory (CacheDir), the one
	// part of hunk's own cache the command may write: bound writable after
	// everything is hidden ("" none).
	Cache string
	// Policy are the mounts that hold hunk's path policy over the
	// workspace (absolute host paths, from policy.Layout, shallow first):
	// a driver that cannot place them refuses the run (GuardPolicy).
	Policy []Mount
	// AllowOnly: the workspace is read-only to the command but for the
	// Writable Policy mounts (write.allow rules).
	AllowOnly bool
	Timeout   time.Duration
	Memory    int64   // bytes; 0 = no limit
	Pids      int     // max processes; 0 = DefaultPids where enforceable; -1 = no limit
	CPUs      float64 // CPU quota in cores; 0 = no limit
	MaxOutput int64   // bytes kept of each stream (head and tail); 0 = unlimited

	// Ready, when set, is waited for right before the command starts:
	// hunk's interrupt handlers, installed while the run is prepared, so
	// that an interrupt always reaches a run that has started.
	Ready <-chan struct{}

	Stdin  io.Reader // may be nil (empty stdin)
	Stdout io.Writer // live copy of the command's stdout (human mode); may be nil
	Stderr io.Writer // live copy of stderr; may be nil

	// Egress is the run's proxy (Network.Proxied), set by StartEgress:
	// the driver binds its socket and door and runs the command through
	// the door.
	Egress *Egress

	// Docker only.
	Image    string
	Pull     bool
	KeepWarm bool
	Idle     time.Duration
}

// Mount is a path of the workspace a driver mounts over for the policy.
type Mount struct {
	Path string // absolute host path
	Mode MountMode
	Dir  bool
}

// MountMode is what a Mount makes of its path.
type MountMode int

// The mount modes.
const (
	MountHidden   MountMode = iota // covered: an empty directory, or /dev/null for a file
	MountReadOnly                  // bound read-only over itself
	MountWritable                  // bound writable over itself
)

// Mounts are the mounts a driver places over the workspace once it is
// bound: Protect read-only, then the policy's, shallow before deep (a
// deeper mount is placed after, and so over, a shallower one); one hidden
// takes whatever would be under it. Own is placed after these (OwnMounts).
func (s Spec) Mounts() []Mount {
	var all []Mount
	for _, p := range s.Protect {
		all = append(all, Mount{Path: p, Mode: MountReadOnly, Dir: true})
	}
	all = append(all, s.Policy...)
	sort.SliceStable(all, func(i, j int) bool {
		return strings.Count(all[i].Path, "/") < strings.Count(all[j].Path, "/")
	})
	var out []Mount
	var hidden []string
	for _, m := range all {
		if Under(m.Path, hidden) {
			continue
		}
		if m.Mode == MountHidden {
			hidden = append(hidden, m.Path)
		}
		out = append(out, m)
	}
	return out
}

// OwnMounts hide hunk's own state from the command (Own): an empty
// directory over each directory, /dev/null over a file; placed after every
// other mount, the build cache (Cache) alone bound again over them.
func (s Spec) OwnMounts() []Mount {
	var out []Mount
	for _, p := range s.Own {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		out = append(out, Mount{Path: p, Mode: MountHidden, Dir: fi.IsDir()})
	}
	return out
}

// policyGrantsOnly reports whether the policy's mounts need no more
// than a read-only workspace with writable places in it (write.allow) —
// what a driver that only grants access (landlock) can hold.
func (s Spec) policyGrantsOnly() bool {
	for _, m := range s.Policy {
		if m.Mode != MountWritable {
			return false
		}
	}
	return true
}

// policyPaths names the first policy mounts for a refusal, relative to
// the workspace.
func policyPaths(ms []Mount, workspace string) string {
	var names []string
	for _, m := range ms {
		if rel, err := filepath.Rel(workspace, m.Path); err == nil && m.Mode != MountWritable {
			names = append(names, rel)
		}
	}
	switch {
	case len(names) == 0:
		return "nothing but what write.allow rules leave writable"
	case len(names) > 3:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

// Result is what a run produced.
type Result struct {
	Driver    string
	ExitCode  int
	TimedOut  bool
	OOMKilled bool // killed by the memory limit
	// Interrupted: ctx was canceled (hunk interrupted) and the command's
	// whole tree was stopped before it finished.
	Interrupted bool
	Truncated   bool // captured output was cut (head and tail kept)
	// NotStarted says why the command could not be started (ExitCode 127:
	// not found, 126: not executable); "" when it ran. It is not in Stderr:
	// the front-end shows it as hunk's own message.
	NotStarted string
	Duration   time.Duration
	Stdout     []byte // captured, capped
	Stderr     []byte
	// Fallback, under auto: the drivers tried first that could not start
	// the sandbox here, and why ("bwrap: …"); "" when the first one ran.
	Fallback string
	// Network is what went through the run's egress proxy (nil: none).
	Network *egress.Report
}

// Caps is what a driver can do on this machine.
type Caps struct {
	Available bool   `json:"available"`
	Reason    string `json:"note"` // why not available, or a note
	// What it enforces.
	Filesystem bool `json:"filesystem"` // writes confined to the workspace (and a private /tmp)
	Network    bool `json:"network"`    // network cut off unless asked for
	Egress     bool `json:"egress"`     // only the allowed hosts, through hunk's proxy (--allow-host)
	Timeout    bool `json:"timeout"`
	Memory     bool `json:"memory"`
	Pids       bool `json:"pids"`
	CPUs       bool `json:"cpus"`

	// Against a hostile command: what the driver guarantees here (Guards)
	// and what it does not (Gaps), each from the Guard list; --drivers
	// prints both.
	Guards []string `json:"guards"`
	Gaps   []string `json:"notEnforced"`
}

// What a driver may guard against a hostile command, as --drivers names it.
const (
	GuardProcesses   = "processes"    // cannot trace, signal or read the memory, environment or descriptors of hunk or any process outside its tree
	GuardProcessList = "process-list" // cannot see other processes or their command lines (a pid namespace)
	GuardSockets     = "unix-sockets" // cannot connect to the host's pathname unix sockets (Docker, agents)
	GuardMetadata    = "metadata"     // cannot chmod, chown, touch or set xattrs outside where it may write
	GuardSetuid      = "setuid"       // cannot leave a set-user-ID or set-group-ID file behind
	GuardGit         = "git"          // cannot change the workspace's .git (hooks and config run code the next time git runs)
	GuardPrivileges  = "privileges"   // no capability beyond owning workspace files; no device nodes, mounts, clock, hostname
	GuardKeyring     = "keyring"      // cannot read the kernel keyrings
	GuardTerminal    = "terminal"     // cannot push input into the caller's terminal
	GuardDescriptors = "descriptors"  // gets no descriptor of hunk's caller but stdin, stdout, stderr
	GuardCleanup     = "cleanup"      // nothing it started survives hunk, even hunk killed with SIGKILL
	GuardOwnState    = "own-state"    // cannot change hunk's config, caches, crash journals or history
	GuardPolicy      = "policy"       // holds hunk's path policy: cannot read a read-denied path of the workspace nor change a write-denied one
)

// guards splits the Guard names into those on and those off.
// SetGuards fills Guards and Gaps from what the driver guarantees here.
func (c *Caps) SetGuards(on map[string]bool) {
	c.Guards, c.Gaps = nil, nil
	for _, g := range []string{GuardProcesses, GuardProcessList, GuardSockets, GuardMetadata, GuardSetuid, GuardGit, GuardOwnState, GuardPolicy, GuardPrivileges, GuardKeyring, GuardTerminal, GuardDescriptors, GuardCleanup} {
		if on[g] {
			c.Guards = append(c.Guards, g)
		} else {
			c.Gaps = append(c.Gaps, g)
		}
	}
}

// Driver is one isolation mechanism.
type Driver interface {
	Name() string
	// Probe says whether the driver works here and what it enforces. It is
	// cheap enough to call for every run.
	Probe(ctx context.Context) Caps
	// Run runs spec to completion (or timeout) and reports. A limit the
	// driver cannot enforce here is an error (LIMIT_UNENFORCEABLE), checked
	// before anything runs.
	Run(ctx context.Context, spec Spec) (Result, error)
}

// DefaultHidden are the host paths no command sees unless asked for with
// --ro or --rw: credentials of the user (home) — cloud and cluster keys,
// package registry tokens, other coding agents' logins, password stores,
// browser profiles (session cookies), shell histories (exported tokens) —
// and the system's password hashes. Missing ones are skipped.
func DefaultHidden(home string) []string {
	out := []string{"/etc/shadow", "/etc/gshadow"}
	if home == "" || home == "/" {
		return out
	}
	for _, p := range homeSecrets {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// ProtectedPaths are the paths of workspace the command may read but not
// change: its .git (a directory, or the file of a linked worktree), whose
// hooks and configuration (core.fsmonitor, core.hooksPath, aliases, a
// pager) git runs outside any sandbox the next time anyone runs git there —
// a shell prompt showing the branch is enough. Codex keeps .git read-only
// for the same reason.
func ProtectedPaths(workspace string) []string {
	p := filepath.Join(workspace, ".git")
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	return []string{p}
}

// homeSecrets are the credentials under the user's home (DefaultHidden).
var homeSecrets = []string{
	".ssh", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".config/hub",
	".aws", ".azure", ".config/gcloud", ".oci", ".kube", ".docker", ".terraform.d", ".vault-token",
	".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".codex", ".claude", ".claude.json", ".config/openai",
	".password-store", ".local/share/keyrings", ".config/op",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history", ".psql_history", ".mysql_history",
}

// HostPath resolves a host path given to --rw, --ro or --hide: "~/" is
// home, a relative path is taken from the current directory, and links are
// followed (a bind or a rule applies to what the path names). With
// mustExist, a missing path is an error.
func HostPath(p, home string, mustExist bool) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		p = filepath.Join(home, rest)
	} else if p == "~" && home != "" {
		p = home
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case err == nil:
		return real, nil
	case mustExist:
		return "", errors.New("no such file or directory")
	}
	return abs, nil
}

// Under reports whether path is one of dirs or inside one of them.
func Under(path string, dirs []string) bool {
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/")
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
