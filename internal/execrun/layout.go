package execrun

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// execLayout is how the sandbox holds the workspace's path policy for one
// command (policy.Layout).
type execLayout struct{ *policy.Layout }

// policyLayout plans the policy's mounts over the workspace for a command;
// a rule no mount can hold refuses the run (LIMIT_UNENFORCEABLE), never
// runs it with less than the policy.
func policyLayout(ws *workspace.Workspace, readOnly bool) (execLayout, error) {
	l, err := ws.Policy().Layout(ws.Dir(), readOnly)
	var ue *policy.UnholdableError
	switch {
	case errors.As(err, &ue):
		e := result.Errorf(result.LimitUnenforceable, "exec: %v; the command was not run", err).At(ue.Name)
		if ue.TooLong {
			top, _, _ := strings.Cut(ue.Name, "/")
			return execLayout{}, e.WithHint(fmt.Sprintf("remove or flatten that tree (a command may have made it: rm -rf %s) and run again; hunk's own commands (read, write, edit) hold the rules at any depth", workspace.Quote(top)))
		}
		if ue.Rule.Kind == policy.ReadDeny {
			return execLayout{}, e.WithHint("a mount hides a name: remove the file's other names (find . -samefile FILE), or read and change files through hunk's own commands, which hold every rule")
		}
		return execLayout{}, e.WithHint("anchor the rule to a path, which a mount holds (`/.gitlab-ci.yml`, `/.github/workflows/`), or run the command with --read-only, under which every write.deny rule holds")
	case err != nil:
		return execLayout{}, err
	}
	return execLayout{l}, nil
}

// sandboxMounts are the layout's mounts as host paths for the sandbox, and
// the host paths outside the workspace it hides.
func (l execLayout) sandboxMounts(dir string) ([]sandbox.Mount, []string) {
	modes := map[policy.MountMode]sandbox.MountMode{
		policy.Hidden: sandbox.MountHidden, policy.ReadOnly: sandbox.MountReadOnly, policy.Writable: sandbox.MountWritable,
	}
	var out []sandbox.Mount
	for _, m := range l.Mounts {
		out = append(out, sandbox.Mount{Path: filepath.Join(dir, filepath.FromSlash(m.Name)), Mode: modes[m.Mode], Dir: m.Dir})
	}
	return out, l.Outside
}

// placeholders are the empty directories made for runs over a workspace.
// Runs share them: a directory removed on the host is unmounted in every
// sandbox that mounts it, so one may be removed only when no run over the
// workspace is going. Each run with policy mounts holds a shared lock (the
// workspace's ".lock" file) while it goes; the placeholders made are listed
// in the ".list" file, whose exclusive lock orders starts and ends; the
// last run to end removes them — only paths inside the workspace, only
// empty directories. Both files are in a private directory of hunk's
// (placeholderDir).
type placeholders struct {
	dir  string   // the workspace
	base string   // the two files' path, without the extension
	use  *os.File // the shared lock held while the run goes
	// used: a mount of this run is a placeholder (made now, or listed).
	used bool
}

// place makes the layout's placeholders — an empty directory where a
// write-denied path does not exist yet, for the sandbox to mount read-only
// so that the command cannot make it — and takes the run's shared lock.
// An empty directory already there (left by a run that did not end, or
// made by one beside this) is used as it is.
func (l execLayout) place(dir string) (*placeholders, error) {
	p := &placeholders{}
	if len(l.Mounts) == 0 {
		return p, nil
	}
	sum := sha256.Sum256([]byte(dir))
	private, err := placeholderDir()
	if err != nil {
		return p, result.Errorf(result.IOError, "exec: no private directory for the path policy's placeholders: %v; the command was not run", err)
	}
	p.dir = dir
	p.base = filepath.Join(private, fmt.Sprintf("%x", sum[:8]))
	list, err := lockedFile(p.base+".list", unix.LOCK_EX)
	if err != nil {
		return p, result.Errorf(result.IOError, "exec: cannot lock the path policy's placeholders: %v; the command was not run", err)
	}
	defer list.Close()
	listed := map[string]bool{}
	if b, err := io.ReadAll(list); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			listed[line] = true
		}
	}
	for _, m := range l.Mounts {
		path := filepath.Join(dir, filepath.FromSlash(m.Name))
		if listed[path] {
			p.used = true
		}
		if !m.Placeholder {
			continue
		}
		err := os.Mkdir(path, 0o755)
		if errors.Is(err, fs.ErrExist) {
			if entries, rerr := os.ReadDir(path); rerr == nil && len(entries) == 0 {
				err = nil
			}
		}
		if err == nil {
			_, err = list.WriteString(path + "\n")
		}
		if err != nil {
			return p, result.Errorf(result.IOError, "exec: cannot make the placeholder %s for policy rule %s: %v; the command was not run", m.Name, m.Rule, err).At(m.Name)
		}
		p.used = true
	}
	if p.use, err = lockedFile(p.base+".lock", unix.LOCK_SH); err != nil {
		return p, result.Errorf(result.IOError, "exec: cannot lock the path policy's placeholders: %v; the command was not run", err)
	}
	return p, nil
}

// any reports whether a mount of the run is a placeholder.
func (p *placeholders) any() bool { return p.used }

// remove ends the run's hold on the placeholders and, when no other run
// over the workspace holds them, removes every one listed (each if still
// an empty directory).
func (p *placeholders) remove() {
	if p == nil || p.use == nil {
		return
	}
	list, err := lockedFile(p.base+".list", unix.LOCK_EX)
	if err != nil {
		p.use.Close()
		return
	}
	defer list.Close()
	fd := int(p.use.Fd())
	_ = unix.Flock(fd, unix.LOCK_UN)
	defer p.use.Close()
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // another run goes on; the last one removes them
	}
	b, err := io.ReadAll(list)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], p.dir+string(filepath.Separator)) {
			_ = unix.Rmdir(lines[i]) // an empty directory only, never what took its place
		}
	}
	_ = list.Truncate(0)
}

// placeholderDir is the private directory of the placeholders' lock and
// list files: in hunk's state directory (out of every sandbox's reach,
// sandbox.OwnState), or one of hunk's user in the temporary directory when
// there is none — never a file another user or a command could plant.
func placeholderDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		if home := os.Getenv("HOME"); filepath.IsAbs(home) && home != "/" {
			base = filepath.Join(home, ".local", "state")
		}
	}
	if filepath.IsAbs(base) {
		if d, err := workspace.PrivateDir(base, "hunk", "placeholders"); err == nil {
			return d, nil
		}
	}
	return workspace.PrivateDir(os.TempDir(), fmt.Sprintf("hunk-%d", os.Getuid()), "placeholders")
}

// lockedFile opens (making it) a file in the placeholders' private
// directory and locks it (how: unix.LOCK_SH or LOCK_EX).
func lockedFile(name string, how int) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
