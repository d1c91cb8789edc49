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

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/ownstate"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// Workspace is an open root directory. Every access goes through the door
// (door.go): in confined mode (the default) a path is walked from the root
// and never leaves it; in host mode (--workspace-only=false) paths may name
// any file, and are walked from the host's /.
type Workspace struct {
	dir      string // absolute, symlinks resolved
	given    string // absolute form of the directory as the user named it
	rootFD   int    // the root, opened once (O_PATH)
	confined bool
	opts     Options
	gate     *Gate // the pre-commit seam (SetGate; nil: none)
	// policy decides which paths may be read and written (nil: all).
	policy *policy.Policy
	// own are the names of hunk's own state the workspace holds (ownstate:
	// its configuration, caches, state), never read or written through it.
	own []string
	// Refused are the crash journals found at Open that failed a check and
	// were left alone (journal.go), each said in a sentence to warn with.
	Refused []string
	// stateBase and stateRel locate this workspace's journals in hunk's
	// state directory (stateJournalDir); stateBase "" when there is none.
	stateBase string
	stateRel  []string

	slashOnce sync.Once // the host's /, for host mode's walks
	slashFD   int
	slashErr  error

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
	fd, err := openat(unix.AT_FDCWD, real, oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOTDIR {
			return nil, result.Errorf(result.InvalidArgument, "workspace root %s is not a directory", dir).WithHint("pass a directory with -C/--root")
		}
		return nil, rootErr(dir, &fs.PathError{Op: "open", Path: real, Err: err})
	}
	return openFD(fd, real, given, opt)
}

// openFD makes the workspace of the directory fd (its real path real).
func openFD(fd int, real, given string, opt Options) (*Workspace, error) {
	w := &Workspace{dir: real, given: given, rootFD: fd, confined: !opt.Host, opts: opt}
	if opt.Rules != nil {
		p, err := opt.Rules(real)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.policy = p
	}
	for _, o := range ownstate.Held(real, ownstate.Paths(os.Getenv)) {
		w.own = append(w.own, filepath.ToSlash(o))
	}
	w.stateBase, w.stateRel = stateJournalDir(real)
	w.RecoverInterrupted() // a transaction a killed hunk left half done goes first
	return w, nil
}

// Narrow is the workspace of its directory name (a resolved name): the
// same options, the policy's rules still decided as the names they are in
// w (policy.Within). The directory is the one the door opens for name — a
// link on its way followed once, never again by name. A client's roots
// narrow an MCP session this way.
func (w *Workspace) Narrow(name string) (*Workspace, error) {
	p, err := w.resolve(nil, name, true)
	if err != nil {
		return nil, w.Error(name, err)
	}
	defer p.dir.close()
	fd, err := openat(p.dir.fd, p.base, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOTDIR {
			return nil, result.Errorf(result.InvalidArgument, "%s: not a directory", Quote(name)).At(name)
		}
		return nil, w.Error(name, err)
	}
	opt := w.opts
	pol, real := w.policy, p.real
	opt.Rules = func(string) (*policy.Policy, error) { return pol.Within(real), nil }
	abs := w.Abs(real)
	return openFD(fd, abs, abs, opt)
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
	if w.slashFD > 0 {
		unix.Close(w.slashFD)
		w.slashFD = 0
	}
	if w.rootFD > 0 {
		err := unix.Close(w.rootFD)
		w.rootFD = -1
		return err
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
	var lw *LinkOnWay
	if errors.As(err, &lw) {
		return result.Errorf(result.Stale, "%s: a symbolic link is on its way now (%s); an undo restores only the paths it recorded", Quote(name), Quote(lw.At)).
			WithHint("the history recorded a directory or file there, not a link: look at it, and remove the link to undo").At(name)
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

// isEscape reports whether err is the door's refusal of a path that leaves
// the root (errEscape, or its text after a wrapping).
func isEscape(err error) bool {
	return errors.Is(err, errEscape) || err != nil && strings.Contains(err.Error(), errEscape.Error())
}

// Replaced says the directory the workspace's path names now is not the
// one it opened — removed and made again (a fleet re-cloning the task),
// or moved away — so every file is looked up in the one it holds, which
// is gone: an error that says so and what to do; nil while it is the same.
func (w *Workspace) Replaced() error {
	if w.rootFD <= 0 {
		return nil
	}
	var held, now unix.Stat_t
	if unix.Fstat(w.rootFD, &held) != nil {
		return nil
	}
	err := unix.Stat(w.dir, &now)
	if err == nil && held.Dev == now.Dev && held.Ino == now.Ino {
		return nil
	}
	what := "is not there any more"
	if err == nil {
		what = "is another directory now (removed and made again, or moved)"
	}
	return result.Errorf(result.NotFound, "the workspace %s %s: hunk holds the directory it opened, not what the path names now", w.dir, what).
		WithHint("restart hunk (hunk serve, hunk mcp) to open the workspace as it is now")
}
