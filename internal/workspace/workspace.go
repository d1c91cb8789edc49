// Package workspace owns the root directory every hunk command is confined to:
// turning user paths into paths relative to the root, opening and replacing
// files through Go's os.Root (so no path, symlink or race can lead outside),
// atomic replacement, per-directory locking, and the text helpers every
// editing command shares (line endings, BOM, UTF-8, binary sniffing).
package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// Workspace is an open root directory. In confined mode (the default) every
// access goes through an os.Root; in host mode (--workspace-only=false) paths
// may name any file and plain os calls are used.
type Workspace struct {
	dir      string   // absolute, symlinks resolved
	given    string   // absolute form of the directory as the user named it
	root     *os.Root // nil in host mode
	confined bool
	opts     Options
	// policy decides which paths may be read and written (nil: all).
	policy *policy.Policy
	// Refused are the crash journals found at Open that failed a check and
	// were left alone (journal.go), each said in a sentence to warn with.
	Refused []string
	// stateBase and stateRel locate this workspace's journals in hunk's
	// state directory (stateJournalDir); stateBase "" when there is none.
	stateBase string
	stateRel  []string
	rfd       rootFD // the policy's descriptor of the root (noLinks)

	histOnce sync.Once
	hist     *history.Store
	histErr  error
}

// Options are everything a workspace is opened with. Open takes them whole
// and Narrow carries them whole to a workspace of a subdirectory: nothing
// is set on a workspace after Open, and nothing copies options field by
// field, so no seam can forget one.
type Options struct {
	// Host is host mode (--workspace-only=false): paths may name any file,
	// and a symbolic link may lead anywhere.
	Host bool
	// Rules builds the path policy, given the root's real path (nil: no
	// policy). It is in place before anything is read or written, crash
	// recovery included.
	Rules func(real string) (*policy.Policy, error)
	// Durable makes every replacement fsync the new file before renaming it
	// over the old one (and the directory after), for power-loss durability.
	// Without it a replacement is still atomic for every process and for a
	// crash of hunk itself: rename(2) swaps old for new in one step.
	Durable bool
	// History is how the workspace's changes are recorded.
	History HistoryOptions
}

// HistoryOptions say whether and how much a workspace's history keeps.
type HistoryOptions struct {
	// Off keeps the history from being opened (--no-history): nothing is
	// recorded, and hunk log and hunk undo have nothing to work with.
	Off bool
	// Limits bound what it keeps (nil: history.DefaultLimits; a zero
	// field: no bound of that kind).
	Limits *history.Limits
}

// Open opens dir as a workspace with opt.
func Open(dir string, opt Options) (*Workspace, error) {
	if dir == "" {
		dir = "."
	}
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "workspace root "+dir)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, rootErr(dir, err)
	}
	return open(real, given, dir, opt)
}

// open opens the directory real (its real path; given is how the user
// named it, dir for messages).
func open(real, given, dir string, opt Options) (*Workspace, error) {
	fi, err := os.Stat(real)
	if err != nil {
		return nil, rootErr(dir, err)
	}
	if !fi.IsDir() {
		return nil, result.Errorf(result.InvalidArgument, "workspace root %s is not a directory", dir).WithHint("pass a directory with -C/--root")
	}
	w := &Workspace{dir: real, given: given, confined: !opt.Host, opts: opt}
	if w.confined {
		r, err := os.OpenRoot(real)
		if err != nil {
			return nil, rootErr(dir, err)
		}
		w.root = r
	}
	if opt.Rules != nil {
		p, err := opt.Rules(real)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.policy = p
	}
	w.stateBase, w.stateRel = stateJournalDir(real)
	w.RecoverInterrupted() // a transaction a killed hunk left half done goes first
	return w, nil
}

// Narrow is the workspace of its directory name (a resolved name): the
// same options, the policy's rules still decided as the names they are in
// w (policy.Within). A client's roots narrow an MCP session this way.
func (w *Workspace) Narrow(name string) (*Workspace, error) {
	real, err := w.FollowLinks(name)
	if err != nil {
		return nil, err
	}
	fi, err := w.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, result.Errorf(result.InvalidArgument, "%s: not a directory", Quote(name)).At(name)
	}
	opt := w.opts
	p := w.policy
	opt.Rules = func(string) (*policy.Policy, error) { return p.Within(real), nil }
	abs := w.Abs(real)
	return open(abs, abs, abs, opt)
}

// Options are the options w was opened with.
func (w *Workspace) Options() Options { return w.opts }

// Policy is the workspace's path policy (nil: none).
func (w *Workspace) Policy() *policy.Policy { return w.policy }

// Durable reports whether replacements are flushed (Options.Durable).
func (w *Workspace) Durable() bool { return w.opts.Durable }

// Records reports whether the workspace records its changes in a history.
func (w *Workspace) Records() bool { return !w.opts.History.Off }

func rootErr(dir string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return result.Errorf(result.NotFound, "workspace root %s does not exist", dir).WithHint("pass an existing directory with -C/--root")
	}
	return result.Wrap(result.IOError, err, "workspace root "+dir)
}

// Dir is the absolute, symlink-free path of the root.
func (w *Workspace) Dir() string { return w.dir }

// Confined reports whether the workspace confines paths to its root.
func (w *Workspace) Confined() bool { return w.confined }

// Close releases the root.
func (w *Workspace) Close() error {
	w.closeRootFD()
	if w.root != nil {
		return w.root.Close()
	}
	return nil
}

// maxPath is the longest path accepted, as Linux's PATH_MAX.
const maxPath = 4096

// Resolve turns a path as the user wrote it (relative to the root, or
// absolute) into the workspace's name for it: slash-separated, clean,
// relative to the root ("." for the root itself). It refuses, without
// touching anything, a path that leaves the root lexically; symlinks are
// checked by every access that follows. In host mode a path outside the
// root is returned absolute.
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		return "", result.Usagef("empty path").WithHint("name a file inside the workspace")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", result.Errorf(result.InvalidArgument, "%q: path contains a NUL byte", p)
	}
	if len(p) > maxPath {
		return "", result.Errorf(result.InvalidArgument, "%.40s...: path is too long (%d bytes, at most %d)", p, len(p), maxPath)
	}
	native := filepath.FromSlash(p)
	if filepath.IsAbs(native) {
		clean := filepath.Clean(native)
		for _, base := range []string{w.dir, w.given} {
			if rel, ok := within(base, clean); ok {
				return rel, nil
			}
		}
		if !w.confined {
			return clean, nil
		}
		return "", w.outside(p)
	}
	clean := path.Clean(filepath.ToSlash(native))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		if !w.confined {
			return filepath.Join(w.dir, clean), nil
		}
		return "", w.outside(p)
	}
	return clean, nil
}

// within reports whether abs lies in base, and its slash path relative to base.
func within(base, abs string) (string, bool) {
	if abs == base {
		return ".", true
	}
	prefix := base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(abs, prefix) {
		return filepath.ToSlash(abs[len(prefix):]), true
	}
	return "", false
}

func (w *Workspace) outside(p string) *result.Error {
	return result.Errorf(result.OutsideWorkspace, "%s: path is outside the workspace %s", Quote(p), w.dir).
		WithHint("name a path inside the workspace; --workspace-only=false lifts the confinement explicitly").
		At(p)
}

// Display is how a resolved name is shown to users: relative to the root.
func (w *Workspace) Display(name string) string { return name }

// Quote is how a path is printed in a message: as it is, unless it holds a
// control character (a newline, a terminal escape sequence) or is not valid
// UTF-8 — then in double quotes with Go escapes, as git and ls quote such
// names, so that a file name can neither forge output lines nor drive the
// terminal. JSON details keep the name as it is.
func Quote(p string) string {
	if !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return strconv.Quote(p)
		}
	}
	return p
}

// Abs is the absolute host path of a resolved name (for messages and for
// handing to external programs; never open it directly in confined mode).
func (w *Workspace) Abs(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(w.dir, filepath.FromSlash(name))
}

// Error converts an error from a filesystem call on name into a typed error
// that names the path: escapes and symlink loops become OUTSIDE_WORKSPACE,
// missing files NOT_FOUND, and so on.
func (w *Workspace) Error(name string, err error) error {
	if err == nil {
		return nil
	}
	var re *result.Error
	if errors.As(err, &re) {
		if re.Path == "" {
			re.At(name)
		}
		return err
	}
	e := w.typed(name, err)
	e.At(name) // every failure on a path names it for programs too
	return e
}

// typed is Error's mapping of a filesystem error on name to a code.
func (w *Workspace) typed(name string, err error) *result.Error {
	q := Quote(name)
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case isEscape(err) || errno == syscall.ELOOP:
		e := w.outside(name)
		e.Err = err
		if errno == syscall.ELOOP {
			e.Msg = q + ": too many levels of symbolic links (a symlink loop); refused"
		} else {
			e.Msg = q + ": path leads outside the workspace (through a symlink); refused"
		}
		return e
	case errors.Is(err, fs.ErrNotExist):
		return &result.Error{Code: result.NotFound, Msg: q + ": no such file or directory", Err: err}
	case errno == syscall.ENOTDIR:
		return &result.Error{Code: result.NotFound, Msg: q + ": a component of the path is not a directory", Err: err}
	case errno == syscall.EISDIR:
		return &result.Error{Code: result.IsDirectory, Msg: q + ": is a directory", Err: err}
	case errno == syscall.ENAMETOOLONG:
		return &result.Error{Code: result.InvalidArgument, Msg: q + ": file name too long", Err: err}
	case errors.Is(err, fs.ErrExist):
		return &result.Error{Code: result.AlreadyExists, Msg: q + ": file already exists", Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &result.Error{Code: result.IOError, Msg: q + ": permission denied", Err: err}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return &result.Error{Code: result.IOError, Msg: q + ": " + msg, Err: err}
}

// isEscape reports whether err is os.Root's refusal of a path that leaves it.
// os does not export that error; its text is stable and pinned by our tests.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

func (w *Workspace) host(name string) string { return w.Abs(name) }

// Open opens name for reading.
func (w *Workspace) Open(name string) (*os.File, error) {
	if err := w.CheckRead(name); err != nil {
		return nil, err
	}
	var f *os.File
	var err error
	if w.root != nil {
		f, err = w.root.Open(name)
	} else {
		f, err = os.Open(w.host(name))
	}
	return f, w.Error(name, err)
}

// ReadFile reads the whole of name.
func (w *Workspace) ReadFile(name string) ([]byte, error) {
	if err := w.CheckRead(name); err != nil {
		return nil, err
	}
	var b []byte
	var err error
	if w.root != nil {
		b, err = w.root.ReadFile(name)
	} else {
		b, err = os.ReadFile(w.host(name))
	}
	return b, w.Error(name, err)
}

// Stat follows symlinks (inside the root only).
func (w *Workspace) Stat(name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	var err error
	if w.root != nil {
		fi, err = w.root.Stat(name)
	} else {
		fi, err = os.Stat(w.host(name))
	}
	return fi, w.Error(name, err)
}

// Lstat does not follow a final symlink.
func (w *Workspace) Lstat(name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	var err error
	if w.root != nil {
		fi, err = w.root.Lstat(name)
	} else {
		fi, err = os.Lstat(w.host(name))
	}
	return fi, w.Error(name, err)
}

// ReadDir lists a directory, sorted by name; entries the policy denies
// reading are left out.
func (w *Workspace) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := w.CheckRead(name); err != nil {
		return nil, err
	}
	var ents []fs.DirEntry
	var err error
	if w.root != nil {
		ents, err = fs.ReadDir(w.root.FS(), name)
	} else {
		ents, err = os.ReadDir(w.host(name))
	}
	if !w.policy.Empty() {
		kept := ents[:0]
		for _, e := range ents {
			if !w.Hidden(name, e.Name()) {
				kept = append(kept, e)
			}
		}
		ents = kept
	}
	return ents, w.Error(name, err)
}

// MkdirAll creates name and its parents.
func (w *Workspace) MkdirAll(name string) error {
	if err := w.CheckWrite(name); err != nil {
		return err
	}
	if w.root != nil {
		return w.Error(name, w.root.MkdirAll(name, 0o777))
	}
	return w.Error(name, os.MkdirAll(w.host(name), 0o777))
}

// Remove removes a file, an empty directory, or a symlink itself (never its target).
func (w *Workspace) Remove(name string) error {
	if err := w.CheckWrite(name); err != nil {
		return err
	}
	if w.root != nil {
		return w.Error(name, w.root.Remove(name))
	}
	return w.Error(name, os.Remove(w.host(name)))
}

// Rename renames oldname to newname, replacing newname atomically.
func (w *Workspace) Rename(oldname, newname string) error {
	for _, n := range []string{oldname, newname} {
		if err := w.CheckWrite(n); err != nil {
			return err
		}
	}
	var err error
	if w.root != nil {
		err = w.root.Rename(oldname, newname)
	} else {
		err = os.Rename(w.host(oldname), w.host(newname))
	}
	return w.Error(newname, err)
}

// Link creates newname as a hard link to oldname.
func (w *Workspace) Link(oldname, newname string) error {
	if err := w.CheckRead(oldname); err != nil {
		return err
	}
	if err := w.CheckWrite(newname); err != nil {
		return err
	}
	var err error
	if w.root != nil {
		err = w.root.Link(oldname, newname)
	} else {
		err = os.Link(w.host(oldname), w.host(newname))
	}
	return w.Error(newname, err)
}

// Readlink returns a symlink's target as stored.
func (w *Workspace) Readlink(name string) (string, error) {
	var s string
	var err error
	if w.root != nil {
		s, err = w.root.Readlink(name)
	} else {
		s, err = os.Readlink(w.host(name))
	}
	return s, w.Error(name, err)
}

// OpenFile opens name with flags and perm through the root.
func (w *Workspace) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	check := w.CheckRead
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		check = w.CheckWrite
	}
	if err := check(name); err != nil {
		return nil, err
	}
	var f *os.File
	var err error
	if w.root != nil {
		f, err = w.root.OpenFile(name, flag, perm)
	} else {
		f, err = os.OpenFile(w.host(name), flag, perm)
	}
	return f, w.Error(name, err)
}

// maxLinks bounds how many symlinks FollowLinks follows, as Linux's ELOOP limit.
const maxLinks = 40

// FollowLinks returns the name that a write to name really replaces: while the
// final component is a symlink, its target (resolved relative to the link's
// directory; an absolute target must lie inside the root). A dangling symlink
// resolves to its (missing) target. Anything that leads outside, or a loop, is
// OUTSIDE_WORKSPACE. A missing name is returned as it is.
func (w *Workspace) FollowLinks(name string) (string, error) {
	cur := name
	for i := 0; i < maxLinks; i++ {
		fi, err := w.Lstat(cur)
		if err != nil {
			var re *result.Error
			if errors.As(err, &re) && re.Code == result.NotFound {
				return cur, nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		target, err := w.Readlink(cur)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			next, err := w.Resolve(target)
			if err != nil {
				return "", w.Error(name, errors.New("path escapes from parent"))
			}
			cur = next
			continue
		}
		var next string
		if filepath.IsAbs(cur) {
			next = filepath.Join(filepath.Dir(cur), target)
		} else {
			next = path.Join(path.Dir(cur), filepath.ToSlash(target))
			if next == ".." || strings.HasPrefix(next, "../") {
				if w.confined {
					return "", w.Error(name, errors.New("path escapes from parent"))
				}
				next = filepath.Join(w.dir, next)
			}
		}
		cur = next
	}
	return "", w.Error(name, syscall.ELOOP)
}
