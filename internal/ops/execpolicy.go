package ops

import (
	"errors"
	"os"
	"path/filepath"

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
	l, err := ws.Policy.Layout(ws.Dir(), readOnly)
	var ue *policy.UnholdableError
	switch {
	case errors.As(err, &ue):
		e := result.Errorf(result.LimitUnenforceable, "exec: %v; the command was not run", err).At(ue.Name)
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
	var out []sandbox.Mount
	for _, m := range l.Mounts {
		out = append(out, sandbox.Mount{Path: filepath.Join(dir, filepath.FromSlash(m.Name)), Mode: sandbox.MountMode(m.Mode), Dir: m.Dir})
	}
	return out, l.Outside
}

// placeholders are the empty directories made for one run (removed after).
type placeholders []string

// place makes the layout's placeholders: an empty directory where a
// write-denied path does not exist yet, for the sandbox to mount read-only
// so that the command cannot make it.
func (l execLayout) place(dir string) (placeholders, error) {
	var made placeholders
	for _, m := range l.Mounts {
		if !m.Placeholder {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(m.Name))
		if err := os.Mkdir(p, 0o755); err != nil {
			return made, result.Errorf(result.IOError, "exec: cannot make the placeholder %s for policy rule %s: %v; the command was not run", m.Name, m.Rule, err).At(m.Name)
		}
		made = append(made, p)
	}
	return made, nil
}

// any reports whether a placeholder was made.
func (p placeholders) any() bool { return len(p) > 0 }

// remove removes the placeholders, each if still an empty directory.
func (p placeholders) remove() {
	for i := len(p) - 1; i >= 0; i-- {
		_ = os.Remove(p[i])
	}
}
