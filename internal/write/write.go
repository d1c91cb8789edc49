// Package write owns `hunk write`: creating or replacing one file atomically
// with the create-only and stale-hash guards, and saying when nothing changed.
package write

import (
	"bytes"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Options is one write.
type Options struct {
	Path       string // as the user wrote it
	Content    []byte
	CreateOnly bool   // refuse an existing file (ALREADY_EXISTS)
	IfMatch    string // hex sha256 the current file must have (STALE otherwise)
	MaxBytes   int64  // refuse larger content (TOO_LARGE); 0 = no limit
	WantOld    bool   // keep the previous content in Result.Old (for --diff)
}

// Result says what happened.
type Result struct {
	Path     string `json:"path"`
	Bytes    int    `json:"bytes"`
	Created  bool   `json:"created"`
	NoOp     bool   `json:"noop"`
	SHA256   string `json:"sha256"`
	Previous string `json:"previousSha256,omitempty"`
	// Old is the previous content (nil when the file was created); for diffs.
	Old []byte `json:"-"`
}

// Hash is textfile.Hash.
func Hash(b []byte) string { return textfile.Hash(b) }

// Write performs opt against ws (workspace.DryRun(ws) to check everything
// and write nothing).
func Write(ws workspace.FS, opt Options) (*Result, error) {
	name, err := ws.Resolve(opt.Path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(opt.Path, "/") || name == "." {
		if _, err := ws.Stat(name); err != nil && result.As(err).Code != result.NotFound {
			return nil, err // e.g. a symlink that leads outside
		}
		return nil, result.Errorf(result.IsDirectory, "%s: names a directory; write needs a file path", opt.Path)
	}
	if opt.MaxBytes > 0 && int64(len(opt.Content)) > opt.MaxBytes {
		return nil, result.Errorf(result.TooLarge, "%s: content is %d bytes, over the limit of %d", name, len(opt.Content), opt.MaxBytes).
			WithHint("raise the limit with --max-bytes (or write.max-bytes in the config)")
	}
	ifMatch, err := textfile.ParseIfMatch(opt.IfMatch)
	if err != nil {
		return nil, err
	}
	unlock, err := ws.Lock(name)
	if err != nil {
		return nil, err
	}
	defer unlock()

	res := &Result{Path: name, Bytes: len(opt.Content), SHA256: Hash(opt.Content)}
	var old []byte
	haveOld := false
	fi, err := ws.Stat(name)
	switch {
	case err == nil && fi.IsDir():
		return nil, result.Errorf(result.IsDirectory, "%s: is a directory", name)
	case err == nil:
		// Read the old content when something needs it (a hash check, a
		// possible no-op, a diff) or when it is small enough that reporting
		// its hash costs nothing; a huge file is only stat'ed.
		if ifMatch != "" || fi.Size() == int64(len(opt.Content)) || opt.WantOld || fi.Size() <= smallFile {
			if old, err = ws.ReadFile(name); err != nil {
				return nil, err
			}
			res.Old, res.Previous, haveOld = old, Hash(old), true
		}
	case result.As(err).Code == result.NotFound && !isDanglingOutside(ws, name):
		res.Created = true
	default:
		return nil, err
	}
	if err := textfile.CheckHash(name, old, !res.Created, ifMatch); err != nil {
		return nil, err
	}
	if !res.Created && opt.CreateOnly {
		return nil, result.Errorf(result.AlreadyExists, "%s: file already exists", name).
			WithHint("drop --create-only to replace it, or choose another path")
	}
	if !res.Created && haveOld && bytes.Equal(old, opt.Content) {
		res.NoOp = true
		return res, nil
	}
	if err := ws.WriteFile(name, [][]byte{opt.Content}, workspace.WriteOptions{CreateOnly: opt.CreateOnly}); err != nil {
		return nil, err
	}
	return res, nil
}

// isDanglingOutside reports whether name is a symlink whose target leads out
// of the workspace (ReadFile says "not found" for a dangling link; writing
// through it must be refused, not treated as a create).
func isDanglingOutside(ws workspace.FS, name string) bool {
	_, err := ws.FollowLinks(name)
	return err != nil
}

// smallFile is the size up to which the previous content is always read.
const smallFile = 8 << 20
