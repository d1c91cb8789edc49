// Package readtrack is read tracking: what each file held when a session
// last read or wrote it, and the refusal (STALE) of a write over a change
// the session has not seen (Tracker). Its FS wraps the workspace.FS the
// engines write through, so every engine is guarded alike.
package readtrack

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Tracker remembers, for one session (an MCP connection, or `hunk call
// --session S` across runs), what each file held when the session last
// read or wrote it, so that a change a person or a formatter made since is
// never overwritten unseen:
//
//   - a whole-file write over an existing file the session never read, or
//     that changed since it read it, is refused (STALE, with the current
//     hash);
//   - an edit or a patch is refused (STALE) when the lines it changes, or
//     the three lines around them (a patch's context), changed since the
//     read; an edit elsewhere in a file a formatter touched still lands;
//   - a file the session never read may be edited or patched (the old text
//     anchors the change) and created.
//
// What the session writes is what it knows of the file from then on.
type Tracker struct {
	mu   sync.Mutex
	seen map[string]seenFile
	held int64 // bytes of content held in memory (at most maxHeld)
	// store and session persist the reads between runs (hunk call).
	store   *history.Store
	session string
	dirty   bool
}

type seenFile struct {
	hash string
	data []byte // nil: only the hash is kept (too large, or persisted)
}

// trackContext is how many lines around an edit's changed lines must be as
// the session read them.
const trackContext = 3

// maxTracked bounds the content kept in memory per file, maxHeld for all
// of a session's files; beyond them a file is tracked by its hash alone
// (any change since the read refuses an edit or a patch of it).
const (
	maxTracked = 8 << 20
	maxHeld    = 256 << 20
)

// New tracks an MCP session's reads in memory.
func New() *Tracker { return &Tracker{seen: map[string]seenFile{}} }

// Load tracks session's reads in the history store, where the
// session's earlier runs left them.
func Load(store *history.Store, session string) (*Tracker, error) {
	m, err := store.Reads(session)
	t := &Tracker{seen: map[string]seenFile{}, store: store, session: session}
	for p, h := range m {
		t.seen[p] = seenFile{hash: h}
	}
	return t, err
}

// Save stores what the session saw, when it persists its reads.
func (t *Tracker) Save() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.store == nil || !t.dirty {
		return nil
	}
	m := make(map[string]string, len(t.seen))
	for p, s := range t.seen {
		m[p] = s.hash
	}
	t.dirty = false
	return t.store.SaveReads(t.session, m)
}

// Saw records that the session saw data as name's content (nil data with
// hash: only the hash is known).
func (t *Tracker) Saw(name string, data []byte) {
	if t == nil {
		return
	}
	h := history.Hash(data)
	keep := data
	if len(data) > maxTracked {
		keep = nil
	}
	if t.store != nil {
		if _, err := t.store.PutBlob(data); err != nil {
			keep = nil
		}
	}
	t.mu.Lock()
	t.held -= int64(len(t.seen[name].data))
	if t.held+int64(len(keep)) > maxHeld {
		keep = nil
	}
	t.held += int64(len(keep))
	t.seen[name] = seenFile{hash: h, data: keep}
	t.dirty = true
	t.mu.Unlock()
}

// know records what the session knows of name after its change: known,
// or nil for nothing (the file changed where it cannot tell).
func (t *Tracker) know(name string, known []byte) {
	if known != nil {
		t.Saw(name, known)
		return
	}
	t.SawHash(name, "unknown")
}

// SawHash records that the session saw content of hash (an image).
func (t *Tracker) SawHash(name, hash string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.held -= int64(len(t.seen[name].data))
	t.seen[name] = seenFile{hash: hash}
	t.dirty = true
	t.mu.Unlock()
}

// forget drops name (the session removed it).
func (t *Tracker) forget(name string) {
	t.mu.Lock()
	t.held -= int64(len(t.seen[name].data))
	delete(t.seen, name)
	t.dirty = true
	t.mu.Unlock()
}

// SawFile records what the file name holds now, for a read that returned
// it (hash: the hash the read reported, "" unknown). A file that changed
// between the read and now is known by the read's hash alone.
func (t *Tracker) SawFile(ws *workspace.Workspace, name, hash string) {
	if t == nil {
		return
	}
	data, err := ws.ReadFile(name)
	if err != nil {
		return
	}
	if hash != "" && history.Hash(data) != hash {
		t.SawHash(name, hash)
		return
	}
	t.Saw(name, data)
}

// readContent is what the session saw of name, from memory or the
// history's blobs.
func (t *Tracker) readContent(name string) (seenFile, bool) {
	t.mu.Lock()
	s, ok := t.seen[name]
	t.mu.Unlock()
	if ok && s.data == nil && t.store != nil {
		if b, err := t.store.BlobFile(s.hash); err == nil {
			s.data = b
		}
	}
	return s, ok
}

// check refuses (STALE) to change name from what it holds now (read
// through fsys) to next (or to remove it) where the session has not seen
// what it would change (above). whole marks a whole-file write.
//
// It returns what the session will know of the file once the change is
// made (known): next itself, or — where the file changed since the read in
// lines the change leaves alone — the change made over what the session
// read (diff.Rebase), so that what it never saw stays unseen.
func (t *Tracker) check(fsys workspace.FS, name string, next []byte, remove, whole bool) (known []byte, err error) {
	cur, err := fsys.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || result.As(err).Code == result.NotFound {
			return next, nil // a new file
		}
		return next, nil // not readable here: the path policy and the write decide
	}
	seen, ok := t.readContent(name)
	now := history.Hash(cur)
	if !ok {
		if !whole {
			return next, nil
		}
		return nil, result.Errorf(result.Stale, "%s: this session has not read it; refusing to replace it whole (its sha256 is %s)", name, now).
			WithHint("read it first (a person or another tool may have written it), then write it again — or change it with edit or apply_patch")
	}
	if seen.hash == now {
		return next, nil
	}
	if whole || remove || seen.data == nil {
		return nil, result.Errorf(result.Stale, "%s changed since this session read it (sha256 %s then, %s now); refusing to overwrite the change", name, short(seen.hash), now).
			WithHint("read it again and redo the change over what it holds now")
	}
	changed := diff.Touched(cur, seen.data)
	touched := diff.Touched(cur, next)
	for i := range touched {
		if !touched[i] {
			continue
		}
		for j := max(0, i-trackContext); j <= i+trackContext && j < len(changed); j++ {
			if changed[j] {
				return nil, result.Errorf(result.Stale, "%s: line %d changed since this session read it, beside the lines this change makes (line %d); refusing to overwrite it", name, j+1, i+1).
					WithHint(fmt.Sprintf("read the file again (around line %d) and redo the change over what it holds now (sha256 %s)", j+1, now))
			}
		}
	}
	if known, ok := diff.Rebase(cur, next, seen.data); ok {
		return known, nil
	}
	return nil, nil // nothing known: any change is refused until a read
}

// FS is fsys with its writes guarded by t (check), telling t what the
// session wrote once it is committed: whole marks whole-file writes
// (write), dry a dry run (nothing learnt).
func FS(fsys workspace.FS, t *Tracker, whole, dry bool) workspace.FS {
	return &trackedFS{FS: fsys, t: t, whole: whole, dry: dry}
}

// trackedFS is an FS whose writes the session's reads guard (check), and
// which tells the tracker what the session wrote once it is committed.
type trackedFS struct {
	workspace.FS
	t     *Tracker
	whole bool // a whole-file write (write), not an edit or a patch
	dry   bool
}

func (f *trackedFS) WriteFile(name string, parts [][]byte, opt workspace.WriteOptions) error {
	next := bytes.Join(parts, nil)
	known := next
	if !opt.CreateOnly { // create-only never replaces a file
		var err error
		if known, err = f.t.check(f.FS, name, next, false, f.whole); err != nil {
			return err
		}
	}
	if err := f.FS.WriteFile(name, parts, opt); err != nil {
		return err
	}
	if !f.dry {
		f.t.know(name, known)
	}
	return nil
}

func (f *trackedFS) Begin() workspace.Txn {
	return &trackedTxn{Txn: f.FS.Begin(), f: f, after: map[string][]byte{}, hashes: map[string]string{}, removed: map[string]bool{}}
}

// trackedTxn is safe for concurrent use, as a Txn must be: apply-patch
// stages a patch's files from several workers (planAll). One path is
// staged by one worker at a time, so the maps' reads and writes need the
// lock and the checks between them do not.
type trackedTxn struct {
	workspace.Txn
	f       *trackedFS
	mu      sync.Mutex
	after   map[string][]byte // what the session will know of each file
	hashes  map[string]string // or only its hash (a binary patch's result)
	removed map[string]bool
}

func (t *trackedTxn) Stage(name string, data []byte, opt workspace.WriteOptions) error {
	// A file the transaction removes and writes again (a patch's Delete
	// File and Add File of one path) is replaced whole.
	t.mu.Lock()
	removed := t.removed[name]
	t.mu.Unlock()
	known, err := t.f.t.check(t.f.FS, name, data, false, t.f.whole || opt.Whole || removed)
	if err != nil {
		return err
	}
	if err := t.Txn.Stage(name, data, opt); err != nil {
		return err
	}
	t.mu.Lock()
	t.after[name] = known
	t.mu.Unlock()
	return nil
}

// StageParts stages a binary patch's result (its parts are never joined):
// refused, as a removal is, when the file changed since the session read
// it (binary content is not merged by lines); the session then knows the
// file by its hash only, as after a write it did not see whole.
func (t *trackedTxn) StageParts(name string, parts [][]byte, opt workspace.WriteOptions) error {
	t.mu.Lock()
	removed := t.removed[name]
	t.mu.Unlock()
	if _, err := t.f.t.check(t.f.FS, name, nil, true, t.f.whole || opt.Whole || removed); err != nil {
		return err
	}
	if err := t.Txn.StageParts(name, parts, opt); err != nil {
		return err
	}
	h := history.HashParts(parts)
	t.mu.Lock()
	t.after[name] = nil
	t.hashes[name] = h
	t.mu.Unlock()
	return nil
}

func (t *trackedTxn) Remove(name string) error {
	t.mu.Lock()
	_, staged := t.after[name] // written by this transaction too: replaced whole
	t.mu.Unlock()
	if _, err := t.f.t.check(t.f.FS, name, nil, true, staged); err != nil {
		return err
	}
	if err := t.Txn.Remove(name); err != nil {
		return err
	}
	t.mu.Lock()
	t.removed[name] = true
	t.mu.Unlock()
	return nil
}

func (t *trackedTxn) Commit() error {
	if err := t.Txn.Commit(); err != nil {
		return err
	}
	if !t.f.dry {
		for name := range t.removed {
			t.f.t.forget(name)
		}
		for name, known := range t.after {
			if h, ok := t.hashes[name]; ok {
				t.f.t.SawHash(name, h)
				continue
			}
			t.f.t.know(name, known)
		}
	}
	return nil
}

// short is a hash's first 12 characters, as git shortens an id.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
