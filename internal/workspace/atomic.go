package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hunk-dev/hunk/internal/result"
)

// WriteOptions tune WriteFile.
type WriteOptions struct {
	// Perm is the mode of a file that does not exist yet; 0 means 0666 less
	// the umask. An existing file always keeps its own mode and owner.
	Perm fs.FileMode
	// NoParents refuses to create missing parent directories.
	NoParents bool
	// CreateOnly refuses a name that already exists (ALREADY_EXISTS); the
	// check is atomic (link(2), not check-then-rename).
	CreateOnly bool
	// ForcePerm gives an existing file Perm too (a patch's mode change).
	ForcePerm bool
	// ExactPerm gives a new file Perm exactly, the umask aside (an undo
	// bringing a file back with its mode).
	ExactPerm bool
	// ReplaceLink replaces a symbolic link at name itself (a patch that
	// deletes the link and adds a file there) instead of writing through it.
	ReplaceLink bool
	// Whole says the content replaces the file's whole, derived from none
	// of it (a patch's Delete and Add of one path): read tracking checks it
	// as a whole write.
	Whole bool
	// ReplaceDir lets the content replace a directory at name that, once
	// the transaction's removals are done, holds nothing but empty
	// directories (a diff deleting d/f and adding a file d): it is put
	// aside at commit, and back on a rollback.
	ReplaceDir bool
}

// TempPrefix and TempSuffix frame the names of hunk's temporary files, so that
// tests and users can see that none was left behind.
const (
	TempPrefix = ".hunk-"
	TempSuffix = ".tmp"
)

// writebackChunk is the size of the chunks a big file is written in (Batch.create).
const writebackChunk = 8 << 20

// TempName returns a fresh temporary name in the directory of name.
func TempName(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir, base := splitName(name)
	t := TempPrefix + base + "." + hex.EncodeToString(b[:]) + TempSuffix
	if len(t) > 200 { // keep within NAME_MAX even for long base names
		t = TempPrefix + hex.EncodeToString(b[:]) + TempSuffix
	}
	return joinName(dir, t)
}

func splitName(name string) (dir, base string) {
	if filepath.IsAbs(name) {
		return filepath.Dir(name), filepath.Base(name)
	}
	return path.Dir(name), path.Base(name)
}

func joinName(dir, base string) string {
	if filepath.IsAbs(dir) {
		return filepath.Join(dir, base)
	}
	return path.Join(dir, base)
}

// WriteFile replaces name with data atomically: the data goes to a temporary
// file in the target's directory, which is given the old file's mode (and
// owner, when we may), flushed when the workspace is Durable, and renamed
// over the target. A symlink inside the root is followed and its target
// replaced. On any error the temporary file is removed and the target is as
// it was. It is a transaction of one operation (Txn, FS.WriteFile).
func (w *Workspace) WriteFile(name string, data []byte, opt WriteOptions) error {
	return w.writeOne(nil, nil, name, [][]byte{data}, opt) // which holds the path policy
}

// unwrapPath strips a PathError (whose path would be the temporary file's)
// so that messages name the user's path.
func unwrapPath(err error) error {
	var re *result.Error
	if errors.As(err, &re) && re.Err != nil {
		err = re.Err
		if re.Code == result.OutsideWorkspace {
			return errors.New("path escapes from parent")
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Lock takes an exclusive lock that serializes hunk's writers of the given
// names (and their read-modify-write cycles) across processes: flock(2) on
// each name's nearest existing parent directory, taken in a fixed order so two
// writers never deadlock. Locks are advisory and released by the returned
// function (or when the process dies).
func (w *Workspace) Lock(names ...string) (unlock func(), err error) {
	b := w.Batch()
	release, err := b.Lock(names...)
	if err != nil {
		b.Close()
		return nil, err
	}
	return func() { release(); b.Close() }, nil
}

// nearestDir is d, or the nearest directory above it that isDir says
// exists (the root at the end).
func nearestDir(d string, isDir func(string) bool) string {
	for d != "." && d != "/" && d != "" && !isDir(d) {
		d, _ = splitName(d)
	}
	return d
}

// lockDirs takes flock(2) LOCK_EX on each of dirs once, in sorted order (so
// that two writers never deadlock), each opened by open (a descriptor the
// caller keeps and closes). It returns the release function.
func (w *Workspace) lockDirs(dirs []string, open func(d string) (int, error)) (func(), error) {
	sort.Strings(dirs)
	var held []int
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			_ = syscall.Flock(held[i], syscall.LOCK_UN)
		}
	}
	for i, d := range dirs {
		if i > 0 && d == dirs[i-1] {
			continue
		}
		fd, err := open(d)
		if err != nil {
			release()
			return nil, w.Error(d, err)
		}
		if err := ignoringEINTR(func() error { return syscall.Flock(fd, syscall.LOCK_EX) }); err != nil {
			release()
			return nil, w.Error(d, err)
		}
		held = append(held, fd)
	}
	return release, nil
}

// replaceable checks what Lstat (fi, err) said of a write's target: a
// directory cannot be replaced, an existing file not with CreateOnly; a
// missing one is fine (old is nil). Other errors pass through.
func replaceable(name string, fi fs.FileInfo, err error, opt WriteOptions) (old fs.FileInfo, _ error) {
	if err != nil {
		if result.As(err).Code == result.NotFound {
			return nil, nil
		}
		return nil, err
	}
	if fi.IsDir() {
		return nil, result.Errorf(result.IsDirectory, "%s: is a directory", name)
	}
	if opt.CreateOnly {
		return nil, result.Errorf(result.AlreadyExists, "%s: file already exists", name)
	}
	return fi, nil
}

// IsTemp reports whether a base name is one of hunk's temporary files.
func IsTemp(base string) bool {
	return strings.HasPrefix(base, TempPrefix) && strings.HasSuffix(base, TempSuffix)
}
