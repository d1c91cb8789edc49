package workspace

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// The path policy (package policy) is applied here, where every operation's
// paths pass: a read of a read-denied path and a change of a write-denied
// one fail with DENIED, naming the rule, before anything is read or
// written. A path is checked as named and as its symbolic links lead (a
// link to .env is .env), in every directory of it.

// Decide is the policy's decision on reading (write false) or writing
// name, and the name it was decided by: name itself, or where a symbolic
// link on its way leads.
func (w *Workspace) Decide(name string, write bool) (d policy.Decision, by string) {
	return w.decideIn(nil, name, write)
}

// decideIn is Decide looking at the files through b (nil: directly), whose
// lstats one operation shares: the directories on the way of its names are
// looked at once.
func (w *Workspace) decideIn(b *Batch, name string, write bool) (d policy.Decision, by string) {
	if w.policy.Empty() {
		return policy.Decision{Allowed: true}, name
	}
	for _, n := range w.policyNames(b, name) {
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

// CheckRead refuses to read name when the policy denies it.
func (w *Workspace) CheckRead(name string) error { return w.checkIn(nil, name, false) }

// checkIn refuses to read (write false) or write name, looking through b
// (decideIn).
func (w *Workspace) checkIn(b *Batch, name string, write bool) error {
	if d, by := w.decideIn(b, name, write); !d.Allowed {
		what := "reading"
		if write {
			what = "writing"
		}
		return w.denied(name, by, what, d)
	}
	return nil
}

// CheckWrite refuses to create, change, remove or rename name when the
// policy denies writing it.
func (w *Workspace) CheckWrite(name string) error { return w.checkIn(nil, name, true) }

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
	return !w.policy.Empty() && w.CheckRead(path.Join(dir, entry)) != nil
}

func (w *Workspace) denied(name, by, what string, d policy.Decision) error {
	return result.Errorf(result.Denied, "%s: %s is %s%s", Quote(name), what, d.Reason(), Via(name, by)).
		WithHint("the policy is the person running hunk's: --deny-read, --deny-write and --allow-write, HUNK_DENY_READ, HUNK_DENY_WRITE and HUNK_ALLOW_WRITE, policy: in the config file; hunk policy check PATH shows the deciding rule").
		At(name)
}

// policyNames are the names a policy decides name by: the name itself and,
// when a symbolic link on its way leads elsewhere in the workspace, where
// it leads.
func (w *Workspace) policyNames(b *Batch, name string) []string {
	names := []string{name}
	if real := w.realName(b, name); real != name && real != "" {
		names = append(names, real)
	}
	return names
}

// realName resolves every symbolic link on name's way, within the
// workspace ("" when a link leads outside it or loops: the access itself is
// refused then), looking through b's shared lstats when b is not nil.
func (w *Workspace) realName(b *Batch, name string) string {
	if !w.confined && filepath.IsAbs(name) {
		return w.hostName(name)
	}
	lstat := w.Lstat
	if b != nil {
		lstat = b.Lstat
	} else if w.noLinks(name) {
		return path.Clean(name)
	}
	segs := strings.Split(path.Clean(name), "/")
	cur := "."
	for links := 0; len(segs) > 0; {
		next := path.Join(cur, segs[0])
		segs = segs[1:]
		fi, err := lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			if err != nil { // the rest does not exist yet: as named
				return path.Join(append([]string{cur}, segs...)...)
			}
			continue
		}
		if links++; links > maxLinks {
			return ""
		}
		target, err := w.Readlink(next)
		if err != nil {
			return ""
		}
		var to string
		if filepath.IsAbs(target) {
			if to, err = w.Resolve(target); err != nil {
				return ""
			}
		} else {
			to = path.Join(path.Dir(next), filepath.ToSlash(target))
			if to == ".." || strings.HasPrefix(to, "../") {
				return ""
			}
		}
		// Start again from the root along where the link leads.
		segs = append(strings.Split(to, "/"), segs...)
		cur = "."
	}
	return cur
}

// hostName is, in host mode, the workspace's name for the absolute path
// abs when, its links resolved (/dev/fd/N, /proc/self/root/…, a link of the
// host), it leads into the workspace; abs itself otherwise.
func (w *Workspace) hostName(abs string) string {
	dir, rest := filepath.Clean(abs), ""
	for {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			real = filepath.Join(real, rest)
			if rel, err := filepath.Rel(w.dir, real); err == nil && filepath.IsLocal(rel) {
				return w.realName(nil, filepath.ToSlash(rel))
			} else if err == nil && rel == "." {
				return "."
			}
			return abs
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
