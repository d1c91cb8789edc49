// Package history keeps what hunk's operations changed in a workspace, so
// that each can be listed (hunk log) and taken back (hunk undo). It lives
// in hunk's state directory, outside the workspace and out of every
// sandbox's reach, as the crash journals do:
//
//	$XDG_STATE_HOME/hunk/history/<sha256 of the workspace path, 16 hex digits>/
//	    entries/<seq, 12 digits>-<id>.json   one operation: its files' pre- and post-images
//	    pending/<pid>.<seq>-<id>.json         an operation being committed (Op)
//	    blobs/<first 2 hex>/<sha256>          contents, by hash, shared between entries
//	    lock                                  flock(2) while an entry is recorded or pruned
//
// An operation is recorded in two steps around the change of the tree
// (Op): its entry is written to pending/ before the first file changes and
// renamed into entries/ once every file has, all under the lock. An entry
// names only blobs already stored, so a reader never sees half of one. A
// pending entry a killed hunk left behind is settled by the next one
// (Settle): kept when the tree holds its post-images (the change was
// committed), dropped otherwise — the entry and the tree agree. Retention
// keeps the newest entries within a count, a size of blobs and an age; a
// blob no entry names any more is removed.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Image is a file as it was before or after an operation.
type Image struct {
	Hash string      `json:"hash,omitempty"` // SHA-256 of the content, hex (a blob); "" for a link
	Mode fs.FileMode `json:"mode,omitempty"` // permission bits
	Link string      `json:"link,omitempty"` // a symbolic link's target
	Dir  bool        `json:"dir,omitempty"`  // an (empty) directory
}

// FileChange is one file of an operation. Pre nil: the operation created
// it; Post nil: it removed it. From: the path it was moved from (the
// removal there is the same change).
type FileChange struct {
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	Pre  *Image `json:"pre,omitempty"`
	Post *Image `json:"post,omitempty"`
}

// Entry is one operation.
type Entry struct {
	ID      string       `json:"id"`
	Seq     int64        `json:"seq"`
	Time    time.Time    `json:"time"`
	Command string       `json:"command"`           // "apply-patch", "edit", the tool's name, …
	Session string       `json:"session,omitempty"` // --session, or the MCP session's
	Undoes  string       `json:"undoes,omitempty"`  // the entry this one undid
	Files   []FileChange `json:"files"`
}

// Limits bound what the history keeps (0: no bound of that kind).
type Limits struct {
	Count int           // entries
	Bytes int64         // bytes of blobs
	Age   time.Duration // age of an entry
}

// DefaultLimits are the configuration's defaults.
var DefaultLimits = Limits{Count: 200, Bytes: 256 << 20, Age: 30 * 24 * time.Hour}

// Store is the history of one workspace.
type Store struct {
	dir    string
	limits Limits
	now    func() time.Time
	// pruneEvery: a full prune every this many operations (tests: 1).
	pruneEvery int
}

// Dir is where the history of the workspace at workspaceDir (its real
// path) lives under the state directory base.
func Dir(base, workspaceDir string) string {
	sum := sha256.Sum256([]byte(workspaceDir))
	return filepath.Join(base, "hunk", "history", fmt.Sprintf("%x", sum[:8]))
}

// Open opens the history at dir (made when missing, mode 0700), keeping
// within limits.
func Open(dir string, limits Limits) (*Store, error) {
	for _, d := range []string{dir, filepath.Join(dir, "entries"), filepath.Join(dir, "blobs"), filepath.Join(dir, "pending")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	return &Store{dir: dir, limits: limits, now: time.Now, pruneEvery: pruneEvery}, nil
}

// Dir is where the history lives.
func (s *Store) Dir() string { return s.dir }

// Hash is the SHA-256 of data, hex: a blob's name.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Store) blobPath(hash string) string {
	return filepath.Join(s.dir, "blobs", hash[:2], hash)
}

// Put stores data as a blob (once: a blob of the same hash is kept) and
// returns its hash.
func (s *Store) Put(data []byte) (string, error) {
	h := Hash(data)
	p := s.blobPath(h)
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
		now := s.now()
		_ = os.Chtimes(p, now, now) // a blob in use again is not pruned as old
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	if err := writeAtomic(p, data); err != nil {
		return "", err
	}
	return h, nil
}

// Blob returns the blob of hash, checked against it.
func (s *Store) Blob(hash string) ([]byte, error) {
	if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%q is not a blob's name", hash)
	}
	b, err := os.ReadFile(s.blobPath(hash))
	if err != nil {
		return nil, err
	}
	if Hash(b) != hash {
		return nil, fmt.Errorf("blob %s is damaged (its content hashes otherwise)", hash[:12])
	}
	return b, nil
}

// Record records e as an operation whose files have changed already (a
// test's, or one that needs no crash safety): Prepare and Commit at once.
func (s *Store) Record(e *Entry) error {
	o, err := s.Begin()
	if err != nil {
		return err
	}
	if err := o.Prepare(e); err != nil {
		o.Abort()
		return err
	}
	return o.Commit()
}

// List returns the entries, newest first, and what it could not read (a
// damaged or foreign file: named, never fatal).
func (s *Store) List() ([]*Entry, []string, error) {
	names, err := s.entryNames()
	if err != nil {
		return nil, nil, err
	}
	var out []*Entry
	var skipped []string
	for i := len(names) - 1; i >= 0; i-- {
		e, err := s.read(names[i])
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", names[i], err))
			continue
		}
		out = append(out, e)
	}
	return out, skipped, nil
}

// Find returns the entry whose id is id or starts with it (at least 4
// characters), an error naming the candidates when several do.
func (s *Store) Find(id string) (*Entry, error) {
	if len(id) < 4 {
		return nil, fmt.Errorf("%q: give at least 4 characters of an operation's id (hunk log lists them)", id)
	}
	list, _, err := s.List()
	if err != nil {
		return nil, err
	}
	var found []*Entry
	for _, e := range list {
		if strings.HasPrefix(e.ID, id) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no operation %q in the history", id)
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, e := range found {
		ids = append(ids, e.ID)
	}
	return nil, fmt.Errorf("%q names %d operations (%s): give more of the id", id, len(found), strings.Join(ids, ", "))
}

// read reads one entry file.
func (s *Store) read(name string) (*Entry, error) {
	return s.readFile(filepath.Join(s.dir, "entries", name), name)
}

// readFile reads the entry at path, whose entry name is name.
func (s *Store) readFile(path, name string) (*Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("not an entry: %v", err)
	}
	if seq, _ := seqOf(name); seq != e.Seq || e.ID == "" {
		return nil, errors.New("its name and content disagree")
	}
	return &e, nil
}

// entryNames lists the entry files, oldest first.
func (s *Store) entryNames() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "entries"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if _, ok := seqOf(e.Name()); ok && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names) // zero-padded sequence numbers
	return names, nil
}

// seqOf reads the sequence number of an entry file's name.
func seqOf(name string) (int64, bool) {
	if len(name) < 13 || name[12] != '-' {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:12], 10, 64)
	return n, err == nil
}

// prune removes the oldest entries beyond the limits (names: every entry
// file, oldest first; the newest entry is always kept), then the blobs no
// entry names — but for blobs stored in the last ten minutes, which an
// operation being recorded beside this one may be about to name. A file
// that is not a readable entry is left alone (List reports it).
func (s *Store) prune(names []string) error {
	var entries []*Entry // readable, oldest first
	file := map[*Entry]string{}
	for _, n := range names {
		if e, err := s.read(n); err == nil {
			entries = append(entries, e)
			file[e] = n
		}
	}
	keep := entries
	if c := s.limits.Count; c > 0 && len(keep) > c {
		keep = keep[len(keep)-c:]
	}
	if a := s.limits.Age; a > 0 {
		cut := s.now().Add(-a)
		for len(keep) > 1 && keep[0].Time.Before(cut) {
			keep = keep[1:]
		}
	}
	if max := s.limits.Bytes; max > 0 {
		seen := map[string]bool{}
		var total int64
		for i := len(keep) - 1; i >= 0; i-- {
			before := total
			for _, h := range blobHashes(keep[i]) {
				if seen[h] {
					continue
				}
				seen[h] = true
				if fi, err := os.Stat(s.blobPath(h)); err == nil {
					total += fi.Size()
				}
			}
			// An entry whose blobs newer ones keep anyway costs nothing.
			if total > max && total > before && i < len(keep)-1 {
				keep = keep[i+1:]
				break
			}
		}
	}
	kept := map[*Entry]bool{}
	used := map[string]bool{}
	for _, e := range keep {
		kept[e] = true
		for _, h := range blobHashes(e) {
			used[h] = true
		}
	}
	for h := range s.readHashes() {
		used[h] = true
	}
	// A pending entry (a killed hunk's, not settled yet) keeps its blobs.
	pend, _ := os.ReadDir(filepath.Join(s.dir, "pending"))
	for _, p := range pend {
		if _, name, ok := strings.Cut(p.Name(), "."); ok {
			if e, err := s.readFile(filepath.Join(s.dir, "pending", p.Name()), name); err == nil {
				for _, h := range blobHashes(e) {
					used[h] = true
				}
			}
		}
	}
	for _, e := range entries {
		if !kept[e] {
			_ = os.Remove(filepath.Join(s.dir, "entries", file[e]))
		}
	}
	recent := s.now().Add(-10 * time.Minute)
	return filepath.WalkDir(filepath.Join(s.dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || used[d.Name()] {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(recent) {
			return nil
		}
		_ = os.Remove(p)
		return nil
	})
}

// blobHashes are the blobs an entry names.
func blobHashes(e *Entry) []string {
	var out []string
	for _, f := range e.Files {
		for _, im := range []*Image{f.Pre, f.Post} {
			if im != nil && im.Hash != "" {
				out = append(out, im.Hash)
			}
		}
	}
	return out
}

// lock takes the history's lock (flock on its lock file).
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// writeAtomic writes data to p through a temporary file renamed over it.
func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
