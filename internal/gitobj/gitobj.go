// Package gitobj reads blobs from the workspace's git repository — the
// object store of a .git directory at the workspace's root — through the
// workspace's door: loose objects and packs (index version 2, deltas
// against an offset or an id), an id given in full or abbreviated, SHA-1
// or SHA-256. It reads and never writes, runs no git and reads no
// configuration but the object format; objects elsewhere (a worktree's or a
// submodule's .git file, alternates) are not followed out of the
// workspace.
package gitobj

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
)

// FS is what the store reads through: the workspace's door.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
	Open(name string) (*os.File, error)
}

// ErrNoRepository: the workspace's root has no .git directory.
var ErrNoRepository = errors.New("the workspace has no git repository (.git) at its root")

// ErrNotFound: no object of the store has the id.
var ErrNotFound = errors.New("the repository has no such object")

// Store is one repository's objects.
type Store struct {
	fsys    FS
	objects string // ".git/objects"
	sha256  bool
	max     int64
	packs   []*pack
}

// Open opens the object store of the repository at the workspace's root.
// Objects over max bytes are refused before they are inflated.
func Open(fsys FS, max int64) (*Store, error) {
	fi, err := fsys.Lstat(".git")
	switch {
	case err != nil:
		return nil, ErrNoRepository
	case !fi.IsDir():
		return nil, fmt.Errorf(".git is a file (a worktree's or a submodule's, naming its repository elsewhere): hunk reads objects only from a .git directory inside the workspace")
	}
	s := &Store{fsys: fsys, objects: ".git/objects", max: max}
	if cfg, err := fsys.ReadFile(".git/config"); err == nil {
		s.sha256 = objectFormatSHA256(cfg)
	}
	entries, _ := fsys.ReadDir(s.objects + "/pack")
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".idx"); ok && strings.HasPrefix(name, "pack-") {
			s.packs = append(s.packs, &pack{store: s, name: s.objects + "/pack/" + name})
		}
	}
	return s, nil
}

// objectFormatSHA256 reads "objectformat = sha256" from a repository's
// config ([extensions]); nothing else of it is read.
func objectFormatSHA256(cfg []byte) bool {
	section := ""
	for _, l := range strings.Split(string(cfg), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			section = strings.ToLower(strings.Trim(l, "[] \t"))
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && section == "extensions" && strings.EqualFold(strings.TrimSpace(k), "objectformat") {
			return strings.EqualFold(strings.TrimSpace(v), "sha256")
		}
	}
	return false
}

// SHA256 reports whether the repository's objects are named by SHA-256.
func (s *Store) SHA256() bool { return s.sha256 }

func (s *Store) hashLen() int {
	if s.sha256 {
		return 32
	}
	return 20
}

// Blob is the content of the blob whose id is id or starts with it (at
// least four hex digits). An id no object has is ErrNotFound; one that
// several objects start with is an error that says so.
func (s *Store) Blob(id string) ([]byte, error) {
	id = strings.ToLower(id)
	if len(id) < 4 || len(id) > 2*s.hashLen() || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%q is not an object id", id)
	}
	full, err := s.resolve(id)
	if err != nil {
		return nil, err
	}
	typ, data, err := s.read(full, 0)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", hex.EncodeToString(full), err)
	}
	if typ != objBlob {
		return nil, fmt.Errorf("object %s is a %s, not a blob", hex.EncodeToString(full), typeName(typ))
	}
	if BlobID(data, s.sha256) != hex.EncodeToString(full) {
		return nil, fmt.Errorf("object %s is damaged: its content has another id", hex.EncodeToString(full))
	}
	return data, nil
}

// Has reports whether the store holds exactly one object whose id is id
// or starts with it, without reading it.
func (s *Store) Has(id string) bool {
	id = strings.ToLower(id)
	if len(id) < 4 || len(id) > 2*s.hashLen() || strings.Trim(id, "0123456789abcdef") != "" {
		return false
	}
	_, err := s.resolve(id)
	return err == nil
}

// BlobID is the id git gives a blob of data (SHA-256 in a repository of
// that format), in hex.
func BlobID(data []byte, sha256Repo bool) string {
	return BlobIDParts([][]byte{data}, sha256Repo)
}

// BlobIDParts is BlobID of the content parts make, one after the other.
func BlobIDParts(parts [][]byte, sha256Repo bool) string {
	var h hash.Hash = sha1.New()
	if sha256Repo {
		h = sha256.New()
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	fmt.Fprintf(h, "blob %d\x00", n)
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// resolve finds the one full id that starts with the hex prefix id.
func (s *Store) resolve(id string) ([]byte, error) {
	found := map[string]bool{}
	if len(id) >= 2 {
		entries, _ := s.fsys.ReadDir(s.objects + "/" + id[:2])
		for _, e := range entries {
			if name := id[:2] + e.Name(); len(name) == 2*s.hashLen() && strings.HasPrefix(name, id) {
				found[name] = true
			}
		}
	}
	for _, p := range s.packs {
		ids, err := p.find(id)
		if err != nil {
			continue // a pack hunk cannot read is one it has not
		}
		for _, f := range ids {
			found[f] = true
		}
	}
	switch len(found) {
	case 0:
		return nil, ErrNotFound
	case 1:
		for f := range found {
			return hex.DecodeString(f)
		}
	}
	return nil, fmt.Errorf("the id %s is ambiguous: %d objects start with it", id, len(found))
}

const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
	maxDepth    = 4096 // deltas on deltas: git's pack.depth is at most 4095 (50 by default)
)

func typeName(t int) string {
	switch t {
	case objCommit:
		return "commit"
	case objTree:
		return "tree"
	case objTag:
		return "tag"
	}
	return "blob"
}

// read is the object with the full id: loose, or from a pack.
func (s *Store) read(id []byte, depth int) (int, []byte, error) {
	if depth > maxDepth {
		return 0, nil, fmt.Errorf("a delta chain deeper than %d", maxDepth)
	}
	hx := hex.EncodeToString(id)
	if f, err := s.fsys.Open(s.objects + "/" + hx[:2] + "/" + hx[2:]); err == nil {
		defer f.Close()
		return s.readLoose(f)
	}
	for _, p := range s.packs {
		if off, ok, err := p.offset(id); err == nil && ok {
			return p.readAt(off, depth)
		}
	}
	return 0, nil, ErrNotFound
}

// readLoose inflates a loose object: "type size\0" then its content.
func (s *Store) readLoose(f io.Reader) (int, []byte, error) {
	z, err := zlib.NewReader(f)
	if err != nil {
		return 0, nil, fmt.Errorf("a damaged loose object: %v", err)
	}
	defer z.Close()
	head := make([]byte, 0, 32)
	one := make([]byte, 1)
	for {
		if _, err := io.ReadFull(z, one); err != nil || len(head) > 30 {
			return 0, nil, fmt.Errorf("a damaged loose object header")
		}
		if one[0] == 0 {
			break
		}
		head = append(head, one[0])
	}
	kind, size, _ := strings.Cut(string(head), " ")
	var n int64
	if _, err := fmt.Sscan(size, &n); err != nil || n < 0 {
		return 0, nil, fmt.Errorf("a damaged loose object header %q", head)
	}
	typ := map[string]int{"commit": objCommit, "tree": objTree, "blob": objBlob, "tag": objTag}[kind]
	if typ == 0 {
		return 0, nil, fmt.Errorf("a loose object of unknown type %q", kind)
	}
	data, err := s.inflateN(z, n)
	return typ, data, err
}

// inflateN reads exactly n bytes of r, n no more than the store's limit;
// memory grows with what r gives, not with what a header states.
func (s *Store) inflateN(r io.Reader, n int64) ([]byte, error) {
	if s.max > 0 && n > s.max {
		return nil, fmt.Errorf("an object of %d bytes, over the limit of %d", n, s.max)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(n, 1<<20)))
	if got, err := io.Copy(&buf, io.LimitReader(r, n)); err != nil || got != n {
		return nil, fmt.Errorf("an object shorter than its stated %d bytes", n)
	}
	return buf.Bytes(), nil
}

// Close closes the pack files the store opened.
func (s *Store) Close() {
	for _, p := range s.packs {
		for _, f := range []*os.File{p.idx, p.pck} {
			if f != nil {
				f.Close()
			}
		}
	}
}
