package workspace

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// The path policy (package policy) is applied here, where every operation's
// paths pass: a read of a read-denied path and a change of a write-denied
// one fail with DENIED, naming the rule, before anything is read or
// written. A path is decided as named and as where it really leads — the
// name the door's walk found (door.go), every symbolic link on its way
// followed: a link to .env is .env. The operation itself decides on the
// walk it acts on; a check made before it (CheckRead, CheckWrite) is an
// early refusal, never the only one.

// Decide is the policy's decision on reading (write false) or writing
// name, and the name it was decided by: name itself, or where it leads.
func (w *Workspace) Decide(name string, write bool) (d policy.Decision, by string) {
	return w.decideIn(nil, name, write)
}

// decideIn is Decide walking through c's directories.
func (w *Workspace) decideIn(c *dirCache, name string, write bool) (d policy.Decision, by string) {
	if w.policy.Empty() {
		return policy.Decision{Allowed: true}, name
	}
	return w.decision(name, w.realFor(c, name), write)
}

// Restricted reports whether some paths of the workspace may not be read
// or written: a path policy, or hunk's own state inside it.
func (w *Workspace) Restricted() bool { return !w.policy.Empty() || len(w.own) > 0 }

// ownOf is the own path (ownstate) that real lies in, "" none: hunk's own
// configuration, caches or state, which the workspace holds.
func (w *Workspace) ownOf(real string) string {
	for _, o := range w.own {
		if o == "." || real == o || strings.HasPrefix(real, o+"/") {
			return o
		}
	}
	return ""
}

// ownErr refuses a path that is hunk's own state (ownOf: o).
func (w *Workspace) ownErr(name, o string, write bool) error {
	what := "reading"
	if write {
		what = "writing"
	}
	return result.Errorf(result.Denied, "%s: %s is denied: it is hunk's own state (%s: its configuration, caches or history), which hunk never reads or writes through a workspace", Quote(name), what, Quote(o)).
		WithHint("hunk log and hunk undo read the history; the configuration is yours to edit outside hunk").At(name)
}

// decision decides name and real (where it leads; "" unknown).
func (w *Workspace) decision(name, real string, write bool) (d policy.Decision, by string) {
	d = policy.Decision{Allowed: true}
	for i, n := range []string{name, real} {
		if n == "" || i == 1 && n == name {
			continue
		}
		if write {
			d = w.policy.Write(n)
		} else {
			d = w.policy.Read(n)
		}
		if !d.Allowed {
			return d, n
		}
	}
	return d, name
}

// decide refuses reading (write false) or writing name, whose real name
// the door found to be real.
func (w *Workspace) decide(name, real string, write bool) error {
	if len(w.own) > 0 {
		if o := w.ownOf(real); o != "" {
			return w.ownErr(name, o, write)
		}
	}
	if w.policy.Empty() {
		return nil
	}
	if d, by := w.decision(name, real, write); !d.Allowed {
		return w.denied(name, by, write, d)
	}
	return nil
}

// realFor is where name leads now: its real name when it exists; for a
// name that does not exist yet, where its deepest existing directory leads
// and the rest as named; "" when it leads outside the workspace.
func (w *Workspace) realFor(c *dirCache, name string) string {
	rest := ""
	for n := name; ; {
		if p, err := w.resolve(c, n, true); err == nil {
			c.release(p.dir)
			if rest == "" {
				return p.real
			}
			return joinReal(p.real, rest)
		} else if isEscape(err) {
			return ""
		}
		d, b := splitName(n)
		if d == n || b == "" {
			return ""
		}
		rest = path.Join(b, rest)
		n = d
	}
}

// CheckRead refuses to read name when the policy denies it.
func (w *Workspace) CheckRead(name string) error { return w.checkIn(nil, name, false) }

// CheckWrite refuses to create, change, remove or rename name when the
// policy denies writing it.
func (w *Workspace) CheckWrite(name string) error { return w.checkIn(nil, name, true) }

// checkIn refuses to read (write false) or write name, walking through c.
func (w *Workspace) checkIn(c *dirCache, name string, write bool) error {
	if !w.Restricted() {
		return nil
	}
	real := w.realFor(c, name)
	if o := w.ownOf(real); o != "" && len(w.own) > 0 {
		return w.ownErr(name, o, write)
	}
	if w.policy.Empty() {
		return nil
	}
	if d, by := w.decision(name, real, write); !d.Allowed {
		return w.denied(name, by, write, d)
	}
	return nil
}

// Via says by which name a path was decided, when not its own.
func Via(name, by string) string {
	if by == name {
		return ""
	}
	return " (it leads to " + Quote(by) + ")"
}

// Hidden reports whether a listing of dir leaves its entry out: reading it
// is denied.
func (w *Workspace) Hidden(dir, entry string) bool {
	return w.Restricted() && w.CheckRead(path.Join(dir, entry)) != nil
}

func (w *Workspace) denied(name, by string, write bool, d policy.Decision) error {
	what := "reading"
	if write {
		what = "writing"
	}
	return result.Errorf(result.Denied, "%s: %s is %s%s", Quote(name), what, d.Reason(), Via(name, by)).
		WithHint("the policy is the person running hunk's: --deny-read, --deny-write and --allow-write, HUNK_DENY_READ, HUNK_DENY_WRITE and HUNK_ALLOW_WRITE, policy: in the config file; hunk policy check PATH shows the deciding rule").
		At(name)
}

// CheckOpened refuses to read f, a file opened outside the door (a patch
// file named on the command line, a host path), when it lies in the
// workspace and the workspace would not let it be read: decided on where
// the kernel says the opened file is (its /proc/self/fd link), so no link
// swapped since can change the answer. name is how the user named it.
func (w *Workspace) CheckOpened(f *os.File, name string) error {
	if !w.Restricted() {
		return nil
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(real) {
		if real, err = filepath.EvalSymlinks(name); err != nil {
			return nil // not a file of any workspace (a pipe)
		}
		real, _ = filepath.Abs(real)
	}
	rel, ok := within(w.dir, real)
	if !ok {
		return nil
	}
	if err := w.decide(rel, rel, false); err != nil {
		e := result.As(err)
		e.Msg = "patch file " + Quote(name) + ": " + e.Msg
		return e
	}
	return nil
}
