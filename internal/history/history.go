// Package history keeps what hunk's operations changed in a workspace, so
// that each can be listed (hunk log) and taken back (hunk undo). It lives
// in hunk's state directory, outside the workspace and out of every
// sandbox's reach, as the crash journals do:
//
//	$XDG_STATE_HOME/hunk/history/<sha256 of the workspace path, 16 hex digits>/
//	    log                 the operations, one JSON record a line, appended
//	    log.sum             what the last prune knew of the log, and the sweep's state
//	    pack.<gen>          small contents, appended one after another
//	    blobs/<2 hex>/<sha256>  large contents and transactions' backups, by hash
//	    blobs/new/<seq>/<n>     an operation's backups not hashed yet (linked in)
//	    reads/<id>.json     what a session read (read tracking, hunk call --session)
//	    lock                flock(2) while an operation is recorded or pruned
//
// An operation is recorded in two steps around the change of the tree
// (Op): a record with its entry is appended to the log before the first
// file changes, and a commit record once every file has — or an abort
// record if it changed nothing. Both are appended under the lock, so the
// operations are numbered in the order they commit. An entry names only
// contents already stored. The log is appended to, never rewritten, but by
// the prune every pruneEvery operations; so recording an operation creates
// no file but the contents it keeps (small ones join the pack), which on
// some file systems costs far more than writing.
//
// A prepared operation a killed hunk left without its outcome is settled by
// the next one to take the lock (its owner is gone: flock locks die with
// their process): committed when the tree holds its post-images (the
// workspace's crash recovery makes the tree all old or all new first),
// aborted otherwise — the entry and the tree agree. Retention keeps the
// newest entries within a count, a size of contents and an age.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Image is a file as it was before or after an operation.
type Image struct {
	Hash string `json:"hash,omitempty"` // SHA-256 of the content, hex; "" for a link or a directory
	Size int64  `json:"size,omitempty"` // the content's length, when it is stored
	Pack string `json:"pack,omitempty"` // "GEN:OFFSET": the content is in pack.GEN at OFFSET ("" a blob file)
	// Unhashed names a blob file not hashed yet (blobs/new/SEQ/N, a
	// transaction's backup linked in); the prune hashes it. Hash is "" then.
	Unhashed string      `json:"unhashed,omitempty"`
	Mode     fs.FileMode `json:"mode,omitempty"` // permission bits
	Link     string      `json:"link,omitempty"` // a symbolic link's target
	Dir      bool        `json:"dir,omitempty"`  // an (empty) directory
}

// FileChange is one file of an operation. Pre nil: the operation created
// it; Post nil: it removed it. From: the path it was moved from.
type FileChange struct {
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	Pre  *Image `json:"pre,omitempty"`
	Post *Image `json:"post,omitempty"`
}

// Entry is one operation.
type Entry struct {
	ID      string    `json:"id"`
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Command string    `json:"command"`           // "apply-patch", "edit", the tool's name, …
	Session string    `json:"session,omitempty"` // --session, or the MCP session's
	Tool    bool      `json:"tool,omitempty"`    // made by a tool call (hunk mcp, hunk call): a tool's undo reaches only these
	Undoes  string    `json:"undoes,omitempty"`  // the entries this one undid, comma-separated
	// Check is the check the change was made under (verify): kept, it
	// passed; an undo with one is the rollback of a change whose check
	// failed.
	Check string       `json:"check,omitempty"`
	Files []FileChange `json:"files"`
	// head: read without its files (a prune that drops it: parseLog).
	head bool
}

// record is one line of the log.
type record struct {
	Seq    int64  `json:"seq"`
	Entry  *Entry `json:"entry,omitempty"`
	Commit bool   `json:"commit,omitempty"`
	Abort  bool   `json:"abort,omitempty"`
	// Hashed: backups a prune named by their hash without rewriting the
	// log (LinkNew's name -> the hash); read, every image that names the
	// first names the second.
	Hashed map[string]string `json:"hashed,omitempty"`
}

// Limits bound what the history keeps (0: no bound of that kind).
type Limits struct {
	Count int           // entries
	Bytes int64         // bytes of contents
	Age   time.Duration // age of an entry
	Total int64         // bytes of every workspace's history together (Collect); 0: no bound
}

// DefaultLimits are the configuration's defaults.
var DefaultLimits = Limits{Count: 200, Bytes: 256 << 20, Age: 30 * 24 * time.Hour, Total: 2 << 30}

// pruneEvery is how often (in operations) the history is pruned to its
// limits (the log and the pack rewritten, unused contents removed); List
// shows no more than the count limit meanwhile.
const pruneEvery = 16

// packMax is the largest content kept in the pack; larger ones are blob
// files of their own.
const packMax = 256 << 10

// Store is the history of one workspace.
type Store struct {
	dir    string
	limits Limits
	now    func() time.Time
	// pruneEvery: a full prune every this many operations (tests: 1).
	pruneEvery int
	// committed reports whether the workspace holds a file change's
	// post-image (settling a killed hunk's operation); nil: never.
	committed func(FileChange) bool
	// Notes say what settling did, a sentence each.
	Notes []string
}

// Open opens the history at dir (made when missing, mode 0700), keeping
// within limits; committed settles operations killed hunks left (Store).
func Open(dir string, limits Limits, committed func(FileChange) bool) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Store{dir: dir, limits: limits, now: time.Now, pruneEvery: pruneEvery, committed: committed}, nil
}

// Dir is where the history lives.
func (s *Store) Dir() string { return s.dir }

// Hash is the SHA-256 of data, hex: a blob's name.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// HashParts is Hash of the content parts make, one after the other.
func HashParts(parts [][]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ { // (strings.Trim builds its set each call: the log reader asks per image)
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *Store) blobPath(hash string) string {
	return filepath.Join(s.dir, "blobs", hash[:2], hash)
}

// PutBlob stores data as a blob file of its own (once: one of the same
// hash is kept) and returns its image.
func (s *Store) PutBlob(data []byte) (*Image, error) {
	h := Hash(data)
	p := s.blobPath(h)
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
		now := s.now()
		_ = os.Chtimes(p, now, now) // a blob in use again is not swept as old
		return &Image{Hash: h, Size: int64(len(data))}, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	if err := writeAtomic(p, data); err != nil {
		return nil, err
	}
	return &Image{Hash: h, Size: int64(len(data))}, nil
}

// Blob returns the content im names, checked against its hash. An image
// read from the log before a prune (another session's operation, another
// hunk) may name a pack that prune has replaced: its content is then found
// by its hash where the log now keeps it, read under the lock.
func (s *Store) Blob(im *Image) ([]byte, error) {
	b, err := s.blob(im)
	if err != nil && im != nil && im.Pack != "" && validHash(im.Hash) && errors.Is(err, fs.ErrNotExist) {
		if moved, merr := s.relocated(im); merr == nil {
			return moved, nil
		}
	}
	return b, err
}

// relocated reads, under the lock, the content of hash im.Hash where the
// log keeps it now.
func (s *Store) relocated(im *Image) ([]byte, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	committed, open, _, err := s.readLog()
	if err != nil {
		return nil, err
	}
	for _, e := range append(committed, open...) {
		for _, cand := range images(e) {
			if cand.Hash == im.Hash && cand.Size == im.Size && cand.Pack != im.Pack {
				if b, err := s.blob(cand); err == nil {
					return b, nil
				}
			}
		}
	}
	return nil, fs.ErrNotExist
}

// blob is Blob without the search for a moved pack content.
func (s *Store) blob(im *Image) ([]byte, error) {
	if im != nil && im.Unhashed != "" {
		if !validUnhashed(im.Unhashed) {
			return nil, fmt.Errorf("%q is not a blob's name", im.Unhashed)
		}
		b, err := readFile(filepath.Join(s.dir, "blobs", im.Unhashed))
		if err == nil && int64(len(b)) != im.Size {
			err = fmt.Errorf("its content %s is damaged (%d bytes, not %d)", im.Unhashed, len(b), im.Size)
		}
		return b, err
	}
	if im == nil || !validHash(im.Hash) {
		return nil, errors.New("no content is stored for it")
	}
	if im.Hash == emptyHash {
		return []byte{}, nil
	}
	var b []byte
	if im.Pack != "" {
		gen, off, ok := strings.Cut(im.Pack, ":")
		o, err := strconv.ParseInt(off, 10, 64)
		if !ok || err != nil || !validGen(gen) || o < 0 || im.Size < 0 || im.Size > 1<<40 {
			return nil, fmt.Errorf("%q is not a place in a pack", im.Pack)
		}
		f, err := openFile(filepath.Join(s.dir, "pack."+gen), os.O_RDONLY, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b = make([]byte, im.Size)
		if _, err := f.ReadAt(b, o); err != nil {
			return nil, fmt.Errorf("pack.%s: %v", gen, err)
		}
	} else {
		var err error
		if b, err = readFile(s.blobPath(im.Hash)); err != nil {
			return nil, err
		}
	}
	if Hash(b) != im.Hash {
		return nil, fmt.Errorf("its content %s is damaged (it hashes otherwise)", im.Hash[:12])
	}
	return b, nil
}

// BlobFile returns the blob file of hash, checked against it.
func (s *Store) BlobFile(hash string) ([]byte, error) {
	return s.Blob(&Image{Hash: hash})
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

// List returns the entries, newest first (at most the count limit), and
// what it could not read (a damaged line: named, never fatal).
func (s *Store) List() ([]*Entry, []string, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, nil, err
	}
	s.settleTail()
	unlock()
	entries, _, skipped, err := s.readLog()
	if err != nil {
		return nil, nil, err
	}
	if c := s.limits.Count; c > 0 && len(entries) > c {
		entries = entries[len(entries)-c:]
	}
	out := make([]*Entry, 0, len(entries))
	for i := len(entries) - 1; i >= 0; i-- {
		out = append(out, entries[i])
	}
	return out, skipped, nil
}

// Find returns the entry whose id is id or starts with it (at least 4
// characters), an error naming the candidates when several do.
func (s *Store) Find(id string) (*Entry, error) {
	if len(id) < 4 {
		return nil, fmt.Errorf("%q: give at least 4 characters of an operation's id", id)
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

// emptyHash is the hash of no bytes: an empty file's content, which is
// never stored.
var emptyHash = Hash(nil)

// Stored reports whether the history holds im's content.
func (im *Image) Stored() bool {
	return im != nil && (validHash(im.Hash) && (im.Pack != "" || im.Size > 0) || validUnhashed(im.Unhashed))
}

// validGen reports whether g names a pack: a generation, or a private
// pack ("x<pid>n<n>").
func validGen(g string) bool {
	if snapGen(g) {
		return true // the snapshot's (snapshot.go)
	}
	if p, ok := strings.CutPrefix(g, "x"); ok {
		pid, n, ok := strings.Cut(p, "n")
		return ok && pid != "" && n != "" && strings.Trim(pid+n, "0123456789") == ""
	}
	return g != "" && strings.Trim(g, "0123456789") == ""
}

// unhashed is im's Unhashed name (none for no image).
func (im *Image) unhashed() string {
	if im == nil {
		return ""
	}
	return im.Unhashed
}

// validUnhashed reports whether u is a name LinkNew gives: new/S/N, the
// Nth backup of operation S (new/S-N: an older hunk's).
func validUnhashed(u string) bool {
	rest, ok := strings.CutPrefix(u, "new/")
	a, b, ok2 := strings.Cut(rest, "/")
	if !ok2 {
		a, b, ok2 = strings.Cut(rest, "-")
	}
	return ok && ok2 && digits(a) && digits(b)
}

// digits reports whether s is one decimal digit or more.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// lock takes the history's lock (flock on its lock file).
func (s *Store) lock() (func(), error) {
	f, err := s.lockFile()
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockFile takes the lock and returns its file, which holds the current
// pack's generation (prune writes it).
func (s *Store) lockFile() (*os.File, error) {
	f, err := openFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// currentGen is the generation of the pack contents are appended to: what
// the lock file says (lf: it, held), else the newest pack there is.
func (s *Store) currentGen(lf *os.File) int {
	var b [20]byte
	if n, _ := lf.ReadAt(b[:], 0); n > 0 {
		if g, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && g > 0 {
			return g
		}
	}
	if g := s.packGen(); g > 0 {
		return g
	}
	return 1
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

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
