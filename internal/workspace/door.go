package workspace

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The door. Every path hunk reads, writes, creates, renames, removes or
// lists in a workspace is resolved here, once, component by component:
// each directory is opened relative to the one before it without following
// a symbolic link (O_NOFOLLOW); a link met on the way is read (readlinkat)
// and its target walked in its place, confined to the root (or, in host
// mode, from the host's /). Nothing is ever opened again by its name
// after that walk: the operation acts on the descriptor of the directory
// the walk opened and on the last component within it, with *at(2) calls
// that never follow a link in it (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW), and
// the path policy decides the name the walk found — where the path really
// leads, as it was when it was opened. A command that swaps links or
// directories while hunk works can make an access fail, never lead it
// somewhere the policy did not decide.
//
// The fast path is one openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS
// (Linux 5.6): a name with no link on its way is opened in one system call
// and is its own real name; anything else takes the walk.

// dirRef is a directory the door opened: a descriptor (O_PATH where there
// is one) and the workspace's name of it — where it really is.
type dirRef struct {
	fd     int
	real   string // workspace name ("." the root), or absolute in host mode outside the root
	owned  bool   // fd is closed with the reference (not the root's)
	cached bool   // a dirCache's: closed with the cache, never by release

	// rdOnce, rd: the directory opened for reading (flock, fsync), once.
	rdOnce sync.Once
	rd     int
	rdErr  error
}

func (d *dirRef) close() {
	if d.owned {
		unix.Close(d.fd)
		d.owned = false
	}
	if d.rd > 0 {
		unix.Close(d.rd)
		d.rd = 0
	}
}

// readable is the directory opened O_RDONLY (an O_PATH descriptor takes
// neither flock nor fsync), from its own descriptor: the same directory.
func (d *dirRef) readable() (int, error) {
	d.rdOnce.Do(func() {
		d.rd, d.rdErr = openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	return d.rd, d.rdErr
}

// place is where a name leads, as the door found it: the directory holding
// its last component (never followed again by a system call) and that
// component, and the name the policy decides it by.
type place struct {
	dir  *dirRef
	base string // "." for the directory itself (the workspace root)
	real string // where the name leads: dir's real name and base
}

// maxLinks bounds how many symbolic links one walk follows, as Linux's
// ELOOP limit.
const maxLinks = 40

// errEscape is a walk's refusal of a path that leaves the root (a link, or
// "..", that leads out of it); Error maps it to OUTSIDE_WORKSPACE.
var errEscape = errors.New("path escapes from parent")

// LinkOnWay is an exact walk's refusal (dirCache.exact): a symbolic link
// where the history recorded none — At names it.
type LinkOnWay struct{ At string }

func (e *LinkOnWay) Error() string { return e.At + ": a symbolic link on the way" }

// rootRef is the workspace root as a directory reference (never closed by
// a walk).
func (w *Workspace) rootRef() *dirRef { return &dirRef{fd: w.rootFD, real: "."} }

// slashFD is the host's / (host mode), opened once.
func (w *Workspace) slash() (int, error) {
	w.slashOnce.Do(func() {
		w.slashFD, w.slashErr = openat(unix.AT_FDCWD, "/", oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	return w.slashFD, w.slashErr
}

// start is where a walk of name begins and the components it walks: the
// root and name's components; in host mode the host's / and the
// components of name's absolute path.
func (w *Workspace) start(name string) (fd int, parts []string, abs bool, err error) {
	if w.confined {
		if filepath.IsAbs(name) {
			return 0, nil, false, errEscape
		}
		return w.rootFD, splitParts(name), false, nil
	}
	fd, err = w.slash()
	return fd, splitParts(w.Abs(name)), true, err
}

func splitParts(name string) []string {
	var parts []string
	for _, p := range strings.Split(filepath.ToSlash(name), "/") {
		if p != "" && p != "." {
			parts = append(parts, p)
		}
	}
	return parts
}

// realName is the workspace's name for the real components of a walk:
// relative to the root, or in host mode absolute when outside it.
func (w *Workspace) realName(parts []string, abs bool) string {
	if !abs {
		if len(parts) == 0 {
			return "."
		}
		return strings.Join(parts, "/")
	}
	p := "/" + strings.Join(parts, "/")
	if rel, ok := within(w.dir, p); ok {
		return rel
	}
	return p
}

// walkDir opens the directory name (every link on its way, and name itself
// if it is one, followed — or, exact, none: a link is refused), through the
// fast path when no link is on it.
func (w *Workspace) walkDir(name string, exact bool) (*dirRef, error) {
	sfd, parts, abs, err := w.start(name)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		if !abs {
			return w.rootRef(), nil
		}
		return &dirRef{fd: sfd, real: "/"}, nil
	}
	if fd, err := openBeneath(sfd, strings.Join(parts, "/"), oPath|unix.O_DIRECTORY|unix.O_CLOEXEC); err == nil {
		return &dirRef{fd: fd, real: w.realName(parts, abs), owned: true}, nil
	} else if err == unix.ENOENT {
		return nil, err // with no link before it (that would be ELOOP)
	}
	fd, real, base, err := w.walk(sfd, parts, true, abs, exact)
	if err != nil {
		return nil, err
	}
	defer closeOwned(fd, sfd)
	dfd, err := openat(fd, base, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err // a link put there since the walk read it: refused, not followed
	}
	if base != "." {
		real = append(real, base)
	}
	return &dirRef{fd: dfd, real: w.realName(real, abs), owned: true}, nil
}

func closeOwned(fd, root int) {
	if fd != root {
		unix.Close(fd)
	}
}

// walk resolves the components parts from the directory sfd (the root, or
// / when abs): every directory on the way opened without following a
// link, every link read and its target walked in its place (an absolute
// target only when it lies in the root, in confined mode), ".." taken on
// the real path walked so far, never above the root. It returns the
// directory holding the last component (a descriptor the caller closes
// unless it is sfd), the real components of that directory, and the last
// component — itself followed when follow and it is a link. An empty
// parts is the start directory itself, as ".". exact refuses any link
// (LinkOnWay).
func (w *Workspace) walk(sfd int, parts []string, follow, abs, exact bool) (fd int, real []string, base string, err error) {
	stack := dirStack{sfd}
	defer func() {
		// Every directory but the one returned is closed.
		for i := len(stack) - 1; i > 0; i-- {
			if err != nil || stack[i] != fd {
				unix.Close(stack[i])
			}
		}
	}()
	queue := append([]string(nil), parts...)
	links := 0
	for {
		for len(queue) > 0 && (queue[0] == "" || queue[0] == ".") {
			queue = queue[1:]
		}
		if len(queue) == 0 {
			// The start directory itself (a name of "."), or a link that
			// led to a directory: its parent would be needed.
			if len(real) == 0 {
				return sfd, real, ".", nil
			}
			base = real[len(real)-1]
			real = real[:len(real)-1]
			stack.pop()
			return stack.top(), real, base, nil
		}
		comp := queue[0]
		queue = queue[1:]
		if comp == ".." {
			if len(real) == 0 {
				if abs {
					continue // /.. is /
				}
				return 0, nil, "", errEscape
			}
			stack.pop()
			real = real[:len(real)-1]
			continue
		}
		last := len(queue) == 0
		if last && !follow {
			return stack.top(), real, comp, nil
		}
		var target string
		if last {
			var st unix.Stat_t
			if err := fstatat(stack.top(), comp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				// Missing, or not a link: the place itself (the
				// operation on it says which).
				return stack.top(), real, comp, nil
			}
			if target, err = readlinkat(stack.top(), comp); err != nil {
				return 0, nil, "", err
			}
		} else {
			next, err := openat(stack.top(), comp, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == nil {
				stack = append(stack, next)
				real = append(real, comp)
				continue
			}
			if err != unix.ENOTDIR && err != unix.ELOOP {
				return 0, nil, "", err
			}
			if target, err = readlinkat(stack.top(), comp); err != nil {
				return 0, nil, "", unix.ENOTDIR // a file in the way
			}
		}
		if exact {
			return 0, nil, "", &LinkOnWay{At: w.realName(append(real, comp), abs)}
		}
		if links++; links > maxLinks {
			return 0, nil, "", unix.ELOOP
		}
		tparts := strings.Split(target, "/")
		if strings.HasPrefix(target, "/") {
			if !abs {
				rest, ok := w.underRoot(target)
				if !ok {
					return 0, nil, "", errEscape
				}
				tparts = rest
			}
			stack.reset() // from the root (the host's / when abs)
			real = real[:0]
		}
		queue = append(tparts, queue...)
	}
}

// dirStack is the directories a walk has opened, its start first.
type dirStack []int

func (s dirStack) top() int { return s[len(s)-1] }

// pop closes the top directory and leaves it.
func (s *dirStack) pop() {
	unix.Close(s.top())
	*s = (*s)[:len(*s)-1]
}

// reset closes every directory but the start.
func (s *dirStack) reset() {
	for len(*s) > 1 {
		s.pop()
	}
}

// underRoot is, for an absolute link target in confined mode, its
// components below the root, when it names the root (its real path, or the
// path the user gave) as a prefix; a ".." after the prefix is walked (and
// refused above the root).
func (w *Workspace) underRoot(target string) ([]string, bool) {
	parts := splitParts(target)
	for _, base := range []string{w.dir, w.given} {
		bp := splitParts(base)
		if len(parts) >= len(bp) && slices.Equal(parts[:len(bp)], bp) {
			return parts[len(bp):], true
		}
	}
	return nil, false
}

// resolve finds where name (a resolved name) leads: the directory holding
// its last component, opened by the walk (through c's directories when c
// is not nil) — with follow, a link in the last component followed too.
// The place's directory belongs to c (or, without c, to the caller:
// release).
func (w *Workspace) resolve(c *dirCache, name string, follow bool) (place, error) {
	if name == "" {
		return place{}, unix.ENOENT
	}
	if name == "." && w.confined {
		return place{dir: w.rootRef(), base: ".", real: "."}, nil
	}
	dname, base := splitName(name)
	if base == "/" {
		fd, err := w.slash()
		return place{dir: &dirRef{fd: fd, real: "/"}, base: ".", real: w.realName(nil, true)}, err
	}
	d, err := c.dir(w, dname)
	if err != nil {
		return place{}, err
	}
	p := place{dir: d, base: base, real: joinReal(d.real, base)}
	if !follow {
		return p, nil
	}
	var st unix.Stat_t
	if err := fstatat(d.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return p, nil
	}
	if c.isExact() {
		c.release(d)
		return place{}, &LinkOnWay{At: p.real}
	}
	// A link: walked again from the start along where it leads, the
	// directory's real name first (a ".." in the target is taken on it).
	target, err := readlinkat(d.fd, base)
	if err != nil {
		return place{}, err
	}
	c.release(d)
	sfd, _, abs, err := w.start(name)
	if err != nil {
		return place{}, err
	}
	var parts []string
	if strings.HasPrefix(target, "/") {
		parts = strings.Split(target, "/")
		if !abs {
			rest, ok := w.underRoot(target)
			if !ok {
				return place{}, errEscape
			}
			parts = rest
		}
	} else {
		parts = append(splitParts(d.real), strings.Split(target, "/")...)
		if abs && !filepath.IsAbs(d.real) {
			parts = append(splitParts(w.dir), parts...)
		}
	}
	fd, real, b, err := w.walk(sfd, parts, true, abs, false)
	if err != nil {
		return place{}, err
	}
	r := &dirRef{fd: fd, real: w.realName(real, abs), owned: fd != sfd}
	return place{dir: r, base: b, real: joinReal(r.real, b)}, nil
}

func joinReal(dir, base string) string {
	if base == "." {
		return dir
	}
	if dir == "." {
		return base
	}
	if filepath.IsAbs(dir) {
		return filepath.Join(dir, base)
	}
	return dir + "/" + base
}

// dirCache keeps the directories one operation's walks opened, by the name
// they were asked by: a name's directory is walked once per operation, and
// every access to a file of it (the policy's decision, the write, the
// rename) acts on the one descriptor that walk gave. Safe for concurrent
// use; nil is a cache that keeps nothing (each place owns its directory).
type dirCache struct {
	mu      sync.Mutex
	dirs    map[string]*dirRef
	missing map[string]error
	// exact walks follow no link at all: a link on the way is refused
	// (LinkOnWay). The history's restores and comparisons walk this way: a
	// path it recorded is a real path, and a link there now is not what it
	// recorded.
	exact bool
	// closed: the cache's directories were released (its batch closed); a
	// later lookup walks uncached, as with no cache.
	closed bool
}

func newDirCache() *dirCache {
	return &dirCache{dirs: map[string]*dirRef{}, missing: map[string]error{}}
}

// exactCache is a dirCache whose walks follow no link.
func exactCache() *dirCache {
	c := newDirCache()
	c.exact = true
	return c
}

func (c *dirCache) isExact() bool { return c != nil && c.exact }

// dir is the directory name, walked once.
func (c *dirCache) dir(w *Workspace, name string) (*dirRef, error) {
	if c == nil {
		return w.walkDir(name, false)
	}
	c.mu.Lock()
	d, ok := c.dirs[name]
	merr, gone := c.missing[name]
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return w.walkDir(name, c.exact)
	}
	if ok {
		return d, nil
	}
	if gone {
		return nil, merr
	}
	d, err := c.fromParent(w, name)
	if d == nil {
		d, err = w.walkDir(name, c.exact)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR {
			c.missing[name] = err
		}
		return nil, err
	}
	if prev, ok := c.dirs[name]; ok { // another goroutine walked it too
		d.close()
		return prev, nil
	}
	d.cached = true
	c.dirs[name] = d
	return d, nil
}

// fromParent opens name from its parent's directory, itself walked once
// through c: one openat of the last component, not a walk from the root —
// a walk of a tree thousands of directories deep would otherwise take a
// walk of every ancestor for each of them (longer than PATH_MAX, where one
// openat2 cannot take the whole path). The component must be a directory,
// not a link (O_NOFOLLOW): anything else is nil, and the full walk
// decides (a link followed, or refused in an exact walk).
func (c *dirCache) fromParent(w *Workspace, name string) (*dirRef, error) {
	if filepath.IsAbs(name) || !strings.Contains(name, "/") {
		return nil, nil // a name of the root walks one component anyway
	}
	parent, base := splitName(name)
	if base == "." || base == ".." || base == "" {
		return nil, nil
	}
	pd, err := c.dir(w, parent)
	if err != nil {
		return nil, nil
	}
	fd, err := openat(pd.fd, base, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	return &dirRef{fd: fd, real: joinReal(pd.real, base), owned: true}, nil
}

// release closes d when it is not c's own (a place made without a cache,
// or by following a link).
func (c *dirCache) release(d *dirRef) {
	if d == nil || d.cached {
		return
	}
	d.close()
}

// forget drops what c knows of names about to be made or changed.
func (c *dirCache) forget(names ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	for _, n := range names {
		delete(c.missing, n)
		if d, ok := c.dirs[n]; ok {
			d.close()
			delete(c.dirs, n)
		}
	}
	c.mu.Unlock()
}

// close closes every directory c opened.
func (c *dirCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	for _, d := range c.dirs {
		d.close()
	}
	c.dirs, c.missing = map[string]*dirRef{}, map[string]error{}
	c.closed = true
	c.mu.Unlock()
}

// The system calls, EINTR retried.

func openat(dirfd int, name string, flags int, perm uint32) (fd int, err error) {
	err = ignoringEINTR(func() error {
		fd, err = unix.Openat(dirfd, name, flags, perm)
		return err
	})
	return fd, err
}

func fstatat(dirfd int, name string, st *unix.Stat_t, flags int) error {
	return ignoringEINTR(func() error { return unix.Fstatat(dirfd, name, st, flags) })
}

// readlinkat reads a link's target whole, however long.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Readlinkat(dirfd, name, buf)
			return err
		})
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<16 {
			return "", syscall.ENAMETOOLONG
		}
	}
}
