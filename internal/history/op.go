package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// pruneEvery is how often (in operations) Commit applies every limit and
// sweeps the blobs no entry names, which reads every entry; the count is
// held at every operation.
const pruneEvery = 16

// Op is an operation being recorded. Begin takes the history's lock, so
// that operations on one workspace are numbered in the order they commit;
// the caller stores the pre-images (Put, PutFile), writes the entry
// (Prepare) before it changes the first file, and Commit makes it part of
// the history once every file has changed — or Abort drops it.
type Op struct {
	s       *Store
	unlock  func()
	pending string // the pending entry's file, once Prepare wrote it
	name    string // its name in entries/
	done    bool
}

// Begin starts recording an operation.
func (s *Store) Begin() (*Op, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	return &Op{s: s, unlock: unlock}, nil
}

// Put stores data as a blob and returns its hash.
func (o *Op) Put(data []byte) (string, error) { return o.s.Put(data) }

// PutFile stores the open file f (hash: its content's, or "" to compute
// it) as a blob and returns its hash: by link(newpath), a hard link, where
// link is not nil and the file has no other name than the one link links
// from (nothing can change it then: that name, a transaction's backup, is
// removed after the commit) and lies on the history's file system; by a
// copy otherwise.
func (o *Op) PutFile(f *os.File, nlink int64, hash string, link func(newpath string) error) (string, error) {
	s := o.s
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	var data []byte
	if hash == "" {
		if data, err = io.ReadAll(f); err != nil {
			return "", err
		}
		hash = Hash(data)
	}
	p := s.blobPath(hash)
	if bi, err := os.Stat(p); err == nil && bi.Size() == fi.Size() {
		return hash, nil // stored already: Commit writes its entry, which the lock keeps from pruning
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	if link != nil && nlink == 1 {
		switch err := link(p); {
		case err == nil, errors.Is(err, os.ErrExist):
			return hash, nil
		}
		// EXDEV, EPERM (protected hard links): a copy.
	}
	if data == nil {
		if data, err = io.ReadAll(f); err != nil {
			return "", err
		}
		if Hash(data) != hash {
			return "", fmt.Errorf("%s changed while it was stored", f.Name())
		}
	}
	if err := writeAtomic(p, data); err != nil {
		return "", err
	}
	return hash, nil
}

// Prepare numbers e, gives it an id and a time, and writes it as pending:
// call it before the operation changes the first file.
func (o *Op) Prepare(e *Entry) error {
	s := o.s
	seq, err := s.lastSeq()
	if err != nil {
		return err
	}
	e.Seq = seq + 1
	if e.ID == "" {
		var r [4]byte
		_, _ = rand.Read(r[:])
		e.ID = fmt.Sprintf("%04x%s", e.Seq&0xffff, hex.EncodeToString(r[:]))
	}
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	o.name = fmt.Sprintf("%012d-%s.json", e.Seq, e.ID)
	p := filepath.Join(s.dir, "pending", strconv.Itoa(os.Getpid())+"."+o.name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return err
	}
	o.pending = p
	return nil
}

// Commit makes the prepared entry part of the history and ends the
// operation, pruning the history to its limits.
func (o *Op) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	defer o.unlock()
	if o.pending == "" {
		return errors.New("history: nothing prepared")
	}
	if err := os.Rename(o.pending, filepath.Join(o.s.dir, "entries", o.name)); err != nil {
		return err
	}
	return o.s.maybePrune(o.name)
}

// Abort drops the prepared entry (the operation changed nothing).
func (o *Op) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.pending != "" {
		os.Remove(o.pending)
	}
	o.unlock()
}

// lastSeq is the highest sequence number of an entry, pending ones too.
func (s *Store) lastSeq() (int64, error) {
	names, err := s.entryNames()
	if err != nil {
		return 0, err
	}
	var last int64
	if len(names) > 0 {
		last, _ = seqOf(names[len(names)-1])
	}
	pend, _ := os.ReadDir(filepath.Join(s.dir, "pending"))
	for _, p := range pend {
		if _, rest, ok := strings.Cut(p.Name(), "."); ok {
			if n, ok := seqOf(rest); ok && n > last {
				last = n
			}
		}
	}
	return last, nil
}

// maybePrune applies the limits: the count at every operation (it costs
// a directory listing), the age and the size every pruneEvery operations.
func (s *Store) maybePrune(latest string) error {
	names, err := s.entryNames()
	if err != nil {
		return err
	}
	seq, _ := seqOf(latest)
	if seq%int64(s.pruneEvery) == 0 {
		return s.prune(names)
	}
	// Between full prunes the count costs no reading: the oldest entries
	// beyond it go by name (their blobs at the next full prune).
	if c := s.limits.Count; c > 0 && len(names) > c {
		for _, n := range names[:len(names)-c] {
			os.Remove(filepath.Join(s.dir, "entries", n))
		}
	}
	return nil
}

// Settle decides the pending entries hunk processes that are gone left
// behind (killed between Prepare and Commit): an entry whose files all hold
// their post-images (committed(f) reports it, after the workspace's crash
// recovery made the tree all old or all new) joins the history; any other
// is dropped. It returns what it did, a sentence each.
func (s *Store) Settle(committed func(f FileChange) bool) []string {
	pend, err := os.ReadDir(filepath.Join(s.dir, "pending"))
	if err != nil || len(pend) == 0 {
		return nil
	}
	unlock, err := s.lock()
	if err != nil {
		return nil
	}
	defer unlock()
	var said []string
	for _, p := range pend {
		pidText, name, ok := strings.Cut(p.Name(), ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		path := filepath.Join(s.dir, "pending", p.Name())
		e, err := s.readFile(path, name)
		if err != nil {
			os.Remove(path)
			said = append(said, fmt.Sprintf("history: an interrupted operation's entry was unreadable (%v); dropped", err))
			continue
		}
		all := true
		for _, f := range e.Files {
			if !committed(f) {
				all = false
				break
			}
		}
		if !all {
			os.Remove(path)
			continue // the operation was rolled back: nothing to record
		}
		if err := os.Rename(path, filepath.Join(s.dir, "entries", name)); err == nil {
			said = append(said, fmt.Sprintf("history: recorded operation %s, which a killed hunk had committed", e.ID))
		}
	}
	return said
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// A session's reads (read tracking across `hunk call --session S` runs):
// reads/<sha256 of the session name, 16 hex>.json maps each path the
// session read or wrote to the hash of what it held then; the contents
// are blobs, kept as long as the file names them.

func (s *Store) readsPath(session string) string {
	return filepath.Join(s.dir, "reads", Hash([]byte(session))[:16]+".json")
}

// Reads returns what session saw of each path (path: hash), empty when it
// saw nothing yet.
func (s *Store) Reads(session string) (map[string]string, error) {
	m := map[string]string{}
	b, err := os.ReadFile(s.readsPath(session))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]string{}, fmt.Errorf("session %q's reads: %v", session, err)
	}
	return m, nil
}

// SaveReads stores what session saw (m: path to hash).
func (s *Store) SaveReads(session string, m map[string]string) error {
	p := s.readsPath(session)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeAtomic(p, b)
}

// readHashes are the blobs the sessions' reads name (prune keeps them); a
// reads file older than the age limit goes.
func (s *Store) readHashes() map[string]bool {
	used := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(s.dir, "reads"))
	for _, e := range ents {
		p := filepath.Join(s.dir, "reads", e.Name())
		if fi, err := e.Info(); err == nil && s.limits.Age > 0 && fi.ModTime().Before(s.now().Add(-s.limits.Age)) {
			os.Remove(p)
			continue
		}
		var m map[string]string
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &m) == nil {
			for _, h := range m {
				used[h] = true
			}
		}
	}
	return used
}
