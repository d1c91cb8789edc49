package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Layout is how a sandbox holds the policy for a command it runs over the
// workspace: mounts over the workspace's paths as they are when the command
// starts. A read-denied path is covered (an empty file or directory in its
// place); a write-denied one is read-only; with write.allow rules the
// workspace is read-only but for what they match. Directories on the way to
// a mount, where the command could rename them, are mounts of themselves
// (a mount point cannot be renamed or removed), so that nothing moves a
// protected path out from under its rule. A write-denied path that does not
// exist yet is held by an empty read-only directory made for the run in
// the place of its first missing directory (Placeholder).
//
// A command may create new files that a read.deny rule matches: what it
// writes itself is no secret. It may not create one a write.deny rule
// matches; where the mounts cannot prevent that (a pattern, such as a bare
// name or a wildcard, that a new file anywhere writable could match), the
// layout is refused with an UnholdableError rather than hold less.
type Layout struct {
	Mounts []Mount // shallow before deep
	// AllowOnly: the workspace is read-only to the command but for the
	// Writable mounts (write.allow rules).
	AllowOnly bool
	// Outside are host paths outside the workspace that a read-denied
	// symbolic link of the workspace leads to: hidden too.
	Outside []string
}

// MountMode is what a mount makes of a path.
type MountMode int

// The mount modes.
const (
	Hidden   MountMode = iota // covered: an empty file or directory
	ReadOnly                  // visible, not to be changed
	Writable                  // writable (write.allow; a pinned directory)
)

func (m MountMode) String() string {
	return [...]string{"hidden", "read-only", "writable"}[m]
}

// Mount is one path of the workspace the sandbox mounts over.
type Mount struct {
	Name string // slash path relative to the workspace root
	Mode MountMode
	Dir  bool
	// Rule is the rule the mount holds; nil for a pinned directory.
	Rule *Rule
	// Placeholder: Name does not exist; the sandbox makes it (an empty
	// directory) for the run and removes it after.
	Placeholder bool
}

// Writable reports whether the command may change name under the layout,
// given whether the whole workspace is read-only to it.
func (l *Layout) Writable(name string, readOnly bool) bool {
	w, depth := !readOnly && !l.AllowOnly, -1
	for _, m := range l.Mounts {
		if d := len(m.Name); d > depth && (m.Name == name || strings.HasPrefix(name, m.Name+"/")) {
			w, depth = m.Mode == Writable && !readOnly, d
		}
	}
	return w
}

// UnholdableError is a rule a sandbox's mounts cannot hold exactly.
type UnholdableError struct {
	Rule   *Rule
	Name   string // the path of the workspace where it fails
	Reason string
	// TooLong: Name lies deeper than a path can name (PATH_MAX): no mount
	// can hide or protect what lies there.
	TooLong bool
}

func (e *UnholdableError) Error() string {
	return fmt.Sprintf("policy rule %s cannot be held by a sandbox's mounts: %s", e.Rule, e.Reason)
}

// asksHeld is p with its write.ask rules as write.deny ones: a command's
// writes cannot wait for a person's yes one by one, so exec holds what asks
// read-only (docs/exec.md).
func (p *Policy) asksHeld() *Policy {
	if !p.HasAsks() {
		return p
	}
	q := *p
	q.rules = make([]*Rule, len(p.rules))
	for i, r := range p.rules {
		if r.Kind == WriteAsk {
			c := *r
			c.Kind, c.Source = WriteDeny, r.Source+", write.ask: held read-only in exec"
			r = &c
		}
		q.rules[i] = r
	}
	return &q
}

// maxSegments bounds a rule's segments (its states are bits of a uint64).
const maxSegments = 63

// Layout plans the mounts for a command over the workspace at dir (its
// real host path), which the command may not write at all when readOnly.
// An empty policy needs none.
func (p *Policy) Layout(dir string, readOnly bool) (*Layout, error) {
	l := &Layout{}
	if p.Empty() {
		return l, nil
	}
	p = p.asksHeld()
	w := &layoutWalk{p: p, dir: dir, readOnly: readOnly, out: l}
	start := make([]uint64, len(p.rules))
	for i, r := range p.rules {
		if r.Kind == WriteAllow && !readOnly {
			l.AllowOnly = true
		}
		s := p.rootState(r)
		start[i] = s
		if r.Kind == WriteDeny && s&r.done() != 0 && !readOnly {
			// The rule matches the workspace itself (**, or a directory
			// the workspace lies in): all of it is read-only, what a
			// write.allow rule matches too (deny over allow), and a new
			// file anywhere is held by the same read-only mount.
			l.AllowOnly, w.denied = true, r
		}
	}
	if err := w.walk("", start, !readOnly && !l.AllowOnly); err != nil {
		return nil, err
	}
	w.pin()
	sort.SliceStable(l.Mounts, func(i, j int) bool {
		di, dj := strings.Count(l.Mounts[i].Name, "/"), strings.Count(l.Mounts[j].Name, "/")
		if di != dj {
			return di < dj
		}
		return l.Mounts[i].Name < l.Mounts[j].Name
	})
	return l, nil
}

// rootState is r's states at the workspace's root (past the directories
// the workspace lies in below the rules' root).
func (p *Policy) rootState(r *Rule) uint64 {
	s := r.closure(1)
	if p.prefix != "" {
		for _, seg := range strings.Split(p.prefix, "/") {
			s = r.step(s, p.norm(seg))
		}
	}
	return s
}

// Whole is the first rule of kind that matches the workspace itself (**,
// /**, a directory the workspace lies in): it decides every path of it.
// nil when none does.
func (p *Policy) Whole(kind Kind) *Rule {
	if p == nil {
		return nil
	}
	for _, r := range p.rules {
		if r.Kind == kind && p.rootState(r)&r.done() != 0 {
			return r
		}
	}
	return nil
}

// layoutWalk is one walk of the workspace for Layout.
type layoutWalk struct {
	p        *Policy
	dir      string
	readOnly bool
	out      *Layout
	seen     map[string]bool
	denied   *Rule // a write.deny rule that matches the workspace itself
}

func (w *layoutWalk) add(m Mount) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[m.Name] {
		w.seen[m.Name] = true
		w.out.Mounts = append(w.out.Mounts, m)
	}
}

// walk visits the directory rel ("" for the root) whose rules are in the
// states st (one per rule), writable telling whether the command may
// create and remove entries in it.
func (w *layoutWalk) walk(rel string, st []uint64, writable bool) error {
	host := filepath.Join(w.dir, filepath.FromSlash(rel))
	if len(host) >= maxPath {
		// A mount names its place by path: past PATH_MAX none can, so what
		// lies there is neither looked into nor held. (A command can make
		// such a tree; the run is refused, and the hint says what to do.)
		return &UnholdableError{Rule: w.p.rules[0], Name: rel, TooLong: true, Reason: fmt.Sprintf(
			"%s lies %d directories deep, its path longer than a mount can name (%d bytes): the sandbox cannot hold the rule there", shortName(rel), strings.Count(rel, "/")+1, maxPath)}
	}
	entries, err := readDir(host)
	if err != nil {
		return &UnholdableError{Rule: w.p.rules[0], Name: rel, Reason: fmt.Sprintf("cannot look into %s to place the policy: %v", shortName(display(rel)), err)}
	}
	if writable && w.live(st, WriteDeny) {
		names := make(map[string]os.DirEntry, len(entries))
		for _, e := range entries {
			names[w.p.norm(e.Name())] = e
		}
		if err := w.creatable(rel, st, names); err != nil {
			return err
		}
	}
	next := make([]uint64, len(st))
	for _, e := range entries {
		name := path.Join(rel, e.Name())
		seg := w.p.norm(e.Name())
		for i, r := range w.p.rules {
			next[i] = r.step(st[i], seg)
		}
		isLink := e.Type()&os.ModeSymlink != 0
		isDir := e.IsDir()
		if r := w.matched(next, ReadDeny); r != nil {
			if isLink {
				w.hideTarget(r, name)
				continue
			}
			if err := w.single(r, name, e); err != nil {
				return err
			}
			w.add(Mount{Name: name, Mode: Hidden, Dir: isDir, Rule: r})
			continue
		}
		childWritable := writable
		if r := w.matched(next, WriteDeny); r != nil && writable {
			if isLink {
				return &UnholdableError{Rule: r, Name: name, Reason: fmt.Sprintf("%s is a symbolic link, which a command could replace (a mount follows it)", display(name))}
			}
			if err := w.single(r, name, e); err != nil {
				return err
			}
			w.add(Mount{Name: name, Mode: ReadOnly, Dir: isDir, Rule: r})
			childWritable = false
		} else if r := w.matched(next, WriteAllow); r != nil && w.out.AllowOnly && w.denied == nil && !writable && !isLink {
			w.add(Mount{Name: name, Mode: Writable, Dir: isDir, Rule: r})
			childWritable = true
		}
		if isDir && w.descend(next, childWritable) {
			if err := w.walk(name, append([]uint64(nil), next...), childWritable); err != nil {
				return err
			}
		}
	}
	return nil
}

// readDir lists a directory unsorted (the mounts are sorted at the end).
func readDir(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// live reports whether a rule of kind has states in st that have not yet
// matched.
func (w *layoutWalk) live(st []uint64, kind Kind) bool {
	for i, r := range w.p.rules {
		if r.Kind == kind && st[i] != 0 && st[i]&r.done() == 0 {
			return true
		}
	}
	return false
}

// matched is the first rule of kind whose states in st have matched.
func (w *layoutWalk) matched(st []uint64, kind Kind) *Rule {
	for i, r := range w.p.rules {
		if r.Kind == kind && st[i]&r.done() != 0 {
			return r
		}
	}
	return nil
}

// descend reports whether a directory with states st holds anything to
// place: a read.deny rule still to match, a write.deny rule where the
// command may write, a write.allow rule where it may not.
func (w *layoutWalk) descend(st []uint64, writable bool) bool {
	for i, r := range w.p.rules {
		if st[i] == 0 || st[i]&r.done() != 0 {
			continue
		}
		switch {
		case r.Kind == ReadDeny:
			return true
		case r.Kind == WriteDeny && writable:
			return true
		case r.Kind == WriteAllow && !writable && w.out.AllowOnly && w.denied == nil:
			return true
		}
	}
	return false
}

// creatable refuses a write.deny rule that a new entry of the writable
// directory rel could match, and holds one whose next name is a literal
// that does not exist with a placeholder. (A new file a read.deny rule
// matches is the command's own: no secret.)
func (w *layoutWalk) creatable(rel string, st []uint64, names map[string]os.DirEntry) error {
	for i, r := range w.p.rules {
		if r.Kind != WriteDeny || st[i] == 0 || st[i]&r.done() != 0 {
			continue
		}
		for j, seg := range r.segs {
			if st[i]&(1<<j) == 0 {
				continue
			}
			if !isLiteral(seg) {
				return &UnholdableError{Rule: r, Name: rel, Reason: fmt.Sprintf("a command could create a new path it matches in %s (the mounts hold existing paths and literal names only)", display(rel))}
			}
			e, ok := names[seg]
			switch {
			case !ok:
				w.add(Mount{Name: path.Join(rel, seg), Mode: ReadOnly, Dir: true, Rule: r, Placeholder: true})
			case e.Type()&os.ModeSymlink != 0:
				return &UnholdableError{Rule: r, Name: path.Join(rel, e.Name()), Reason: fmt.Sprintf("%s is a symbolic link, which a command could replace (a mount follows it)", display(path.Join(rel, e.Name())))}
			case !e.IsDir() && j+1 < len(r.segs):
				return &UnholdableError{Rule: r, Name: path.Join(rel, e.Name()), Reason: fmt.Sprintf("%s is not a directory, and a command could replace it with one holding a path the rule matches", display(path.Join(rel, e.Name())))}
			}
		}
	}
	return nil
}

// single refuses a file the rule covers that has other names (hard links):
// a mount covers a name, not the file.
func (w *layoutWalk) single(r *Rule, name string, e os.DirEntry) error {
	if e.IsDir() {
		return nil
	}
	fi, err := e.Info()
	if err != nil {
		return nil // gone: nothing to cover
	}
	if n := links(fi); n > 1 {
		return &UnholdableError{Rule: r, Name: name, Reason: fmt.Sprintf("%s has %d names (hard links); a mount covers one name, not the file", display(name), n)}
	}
	return nil
}

// hideTarget hides where a read-denied symbolic link leads: the path in the
// workspace, or on the host.
func (w *layoutWalk) hideTarget(r *Rule, name string) {
	real, err := filepath.EvalSymlinks(filepath.Join(w.dir, filepath.FromSlash(name)))
	if err != nil {
		return // leads nowhere: nothing to read
	}
	fi, err := os.Stat(real)
	if err != nil {
		return
	}
	rel, err := filepath.Rel(w.dir, real)
	switch {
	case err == nil && rel == ".":
	case err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		w.add(Mount{Name: filepath.ToSlash(rel), Mode: Hidden, Dir: fi.IsDir(), Rule: r})
	default:
		w.out.Outside = append(w.out.Outside, real)
	}
}

// pin adds, for every mount, the directories on its way that the command
// could otherwise rename or remove (their parent is writable to it).
func (w *layoutWalk) pin() {
	base := w.out.Mounts
	for _, m := range base {
		for a := path.Dir(m.Name); a != "."; a = path.Dir(a) {
			if w.seen[a] {
				break // a mount itself, and so is what is above it
			}
			if w.out.Writable(path.Dir(a), w.readOnly) {
				w.add(Mount{Name: a, Mode: Writable, Dir: true})
			}
		}
	}
}

// display is rel as a message names it.
// maxPath is Linux's PATH_MAX: the longest path a mount (bwrap's, the
// engine's) is given.
const maxPath = 4096

// shortName is a name for a message: a name deeper than a few directories
// by its first three and its last, with how many are left out.
func shortName(rel string) string {
	parts := strings.Split(rel, "/")
	if len(rel) <= 200 || len(parts) <= 5 {
		if len(rel) > 200 {
			return rel[:200] + "…"
		}
		return rel
	}
	short := func(s string) string {
		if len(s) > 40 {
			return s[:40] + "…"
		}
		return s
	}
	return fmt.Sprintf("%s/%s/%s/…(%d more)…/%s", short(parts[0]), short(parts[1]), short(parts[2]), len(parts)-4, short(parts[len(parts)-1]))
}

func display(rel string) string {
	if rel == "" {
		return "the workspace root"
	}
	return rel
}

// isLiteral reports whether a pattern segment matches one name only.
func isLiteral(seg string) bool { return seg != "**" && !strings.ContainsAny(seg, `*?[\`) }

// closure adds to the states s those a "**" lets the pattern skip to.
func (r *Rule) closure(s uint64) uint64 {
	for i, seg := range r.segs {
		if seg == "**" && s&(1<<i) != 0 {
			s |= 1 << (i + 1)
		}
	}
	return s
}

// done is the state of a whole match.
func (r *Rule) done() uint64 { return 1 << len(r.segs) }

// step moves the states s over one more segment of a path (as Policy.norm
// gives it); a whole match stays one (a rule that matches a directory
// covers what is in it).
func (r *Rule) step(s uint64, name string) uint64 {
	if s&r.done() != 0 {
		return r.done()
	}
	var n uint64
	for i, seg := range r.segs {
		if s&(1<<i) == 0 {
			continue
		}
		if seg == "**" {
			n |= 1 << i
		} else if r.segMatch(i, name) {
			n |= 1 << (i + 1)
		}
	}
	return r.closure(n)
}
