package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// Op is an operation being recorded. Begin takes the history's lock, so
// that operations on one workspace are numbered in the order they commit;
// the caller stores the pre-images (Put, PutFile), writes the entry
// (Prepare) before it changes the first file, and Commit makes it part of
// the history once every file has changed — or Abort drops it.
type Op struct {
	mu     sync.Mutex // Put and LinkNew may be called from several goroutines
	linked int        // LinkNew's files
	newDir bool       // blobs/new/SEQ is there
	s      *Store
	lf     *os.File // the lock, held
	log    *os.File // the log, open to append
	last   int64    // the log's last sequence number
	ended  bool     // the log ends a line (so an append needs no look)
	seq    int64    // the prepared entry's, 0 before Prepare
	done   bool
	pack   *os.File // the pack contents are appended to, once one is
	packAt int64
	snap   *os.File // the snapshot's pack (PutSnap), once open
	snapAt int64
	gen    int
	// private names a pack of this process's own ("x<pid>": BeginPrivate)
	// instead of the current one.
	private string
	entry   *Entry // the prepared entry
	entryAt int64  // where in the log its record begins (-1: not known)
}

// Begin starts recording an operation, settling first one a killed hunk
// left open.
func (s *Store) Begin() (*Op, error) {
	lf, err := s.lockFile()
	if err != nil {
		return nil, err
	}
	log, err := openFile(filepath.Join(s.dir, "log"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		lf.Close()
		return nil, err
	}
	o := &Op{s: s, lf: lf, log: log}
	if fi, err := log.Stat(); err == nil && fi.Size() == 0 {
		s.seedSummary() // a new log: its summary kept from the start
	}
	rec, ok, ended := lastRecord(log)
	o.ended = ended
	if ok {
		o.last = rec.Seq
		if rec.Entry != nil {
			s.settle(rec, o.add)
		}
	}
	return o, nil
}

// BeginPrivate starts storing contents no entry names yet — what a
// recorded command may change, kept before it runs — in a pack of its own
// (pack.x<pid>n<n>), which the prune leaves alone while the
// process lives. Release, not Commit, ends it: the lock is not held while
// the command runs. DropPrivate removes the pack once an entry no longer
// needs it.
func (s *Store) BeginPrivate() (*Op, error) {
	o, err := s.Begin()
	if err != nil {
		return nil, err
	}
	o.private = fmt.Sprintf("x%dn%d", os.Getpid(), privateSeq.Add(1))
	return o, nil
}

// privateSeq tells apart the private packs of one process (an MCP
// session's exec calls may run at once).
var privateSeq atomic.Int64

// Release ends an operation that recorded nothing, keeping what it stored.
func (o *Op) Release() {
	if !o.done {
		o.done = true
		o.unlock()
	}
}

// DropPrivate removes the private pack o stored into.
func (o *Op) DropPrivate() {
	if o.private != "" {
		os.Remove(filepath.Join(o.s.dir, "pack."+o.private))
	}
}

// add appends recs to the log.
func (o *Op) add(recs ...record) error {
	err := appendLines(o.log, !o.ended, recs...)
	o.ended = err == nil
	return err
}

// unlock ends the operation's hold on the history.
func (o *Op) unlock() {
	if o.pack != nil {
		o.pack.Close()
		o.pack = nil
	}
	if o.snap != nil {
		o.snap.Close()
		o.snap = nil
	}
	o.log.Close()
	o.lf.Close()
}

// Put stores data as the operation's and returns its image (no mode):
// appended to the pack when small, a blob file of its own otherwise.
func (o *Op) Put(data []byte) (*Image, error) {
	h := Hash(data)
	if len(data) == 0 {
		return &Image{Hash: h}, nil
	}
	if len(data) > packMax {
		return o.s.PutBlob(data)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pack == nil {
		name := o.private
		if name == "" {
			o.gen = o.s.currentGen(o.lf)
			name = strconv.Itoa(o.gen)
		}
		var err error
		if o.pack, o.packAt, err = openAppend(filepath.Join(o.s.dir, "pack."+name)); err != nil {
			return nil, err
		}
	}
	off, err := appendTo(o.pack, &o.packAt, data)
	if err != nil {
		return nil, err
	}
	where := strconv.Itoa(o.gen)
	if o.private != "" {
		where = o.private
	}
	return &Image{Hash: h, Size: int64(len(data)), Pack: fmt.Sprintf("%s:%d", where, off)}, nil
}

// openAppend opens a pack to append contents to, and says where its end is.
func openAppend(p string) (*os.File, int64, error) {
	f, err := openFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// appendTo appends data to pack f, whose end *at is, and returns where
// data begins; *at moves past it. A partial write leaves bytes no entry
// names (the next prune drops them): *at is then the file's end again.
func appendTo(f *os.File, at *int64, data []byte) (int64, error) {
	off := *at
	if _, err := f.Write(data); err != nil {
		if fi, serr := f.Stat(); serr == nil {
			*at = fi.Size()
		}
		return 0, err
	}
	*at += int64(len(data))
	return off, nil
}

// PutFile stores the content of the open file f (a copy: Put) and
// returns its image (no mode).
func (o *Op) PutFile(f *os.File) (*Image, error) {
	data, err := readAll(f)
	if err != nil {
		return nil, err
	}
	return o.Put(data)
}

// LinkNew stores a file of size bytes by link(newpath), a hard link into
// the blob files under a name of the operation's (blobs/new/SEQ/N: a
// directory an operation, so that the sweep reads them a few at a time), its
// hash not taken: the next prune reads it once, names it by its hash and
// drops a second copy. The caller vouches that nothing else can change the
// file (nothing else names it). This is how a transaction's backups are kept: no
// content is read or copied while hunk runs a patch.
func (o *Op) LinkNew(size int64, link func(newpath string) error) (*Image, error) {
	if size == 0 {
		return &Image{Hash: emptyHash}, nil
	}
	o.mu.Lock()
	o.linked++
	name := fmt.Sprintf("new/%d/%d", o.last+1, o.linked)
	p := filepath.Join(o.s.dir, "blobs", name)
	if !o.newDir { // (made before any of the operation's goroutines links into it)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			o.mu.Unlock()
			return nil, err
		}
		o.newDir = true
	}
	o.mu.Unlock()
	if err := link(p); err != nil {
		return nil, err
	}
	return &Image{Size: size, Unhashed: name}, nil
}

// Prepare numbers e, gives it an id and a time, and appends it to the log
// as prepared: call it before the operation changes the first file.
func (o *Op) Prepare(e *Entry) error {
	s := o.s
	if o.pack != nil {
		// The contents first: an entry names only what is stored.
		if err := o.pack.Close(); err != nil {
			return err
		}
		o.pack = nil
	}
	e.Seq = o.last + 1
	if e.ID == "" {
		var r [4]byte
		_, _ = rand.Read(r[:])
		e.ID = fmt.Sprintf("%04x%s", e.Seq&0xffff, hex.EncodeToString(r[:]))
	}
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	o.entryAt = -1
	if len(e.Files) >= summaryFiles && o.ended { // (advanceSummary's: one fstat, big operations only)
		if fi, err := o.log.Stat(); err == nil {
			o.entryAt = fi.Size()
		}
	}
	if err := o.add(record{Seq: e.Seq, Entry: e}); err != nil {
		return err
	}
	o.seq, o.entry = e.Seq, e
	return nil
}

// Commit makes the prepared entry part of the history and ends the
// operation, pruning the history every pruneEvery operations.
func (o *Op) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	defer o.unlock()
	if o.seq == 0 {
		return errors.New("history: nothing prepared")
	}
	if err := o.add(record{Seq: o.seq, Commit: true}); err != nil {
		return err
	}
	if len(o.entry.Files) >= summaryFiles && o.entryAt >= 0 {
		o.s.advanceSummary(o.log, o.entry, o.entryAt)
	}
	if o.seq%int64(o.s.pruneEvery) == 0 {
		return o.s.prune(o.lf)
	}
	return nil
}

// Abort drops the prepared entry (the operation changed nothing).
func (o *Op) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.seq != 0 {
		_ = o.add(record{Seq: o.seq, Abort: true})
	}
	o.unlock()
}

// A session's reads (read tracking across `hunk call --session S` runs):
// reads/<sha256 of the session name, 16 hex>.json maps each path the
// session read or wrote to the hash of what it held then; the contents
// are blob files, kept as long as the file names them.

func (s *Store) readsPath(session string) string {
	return filepath.Join(s.dir, "reads", Hash([]byte(session))[:16]+".json")
}

// Reads returns what session saw of each path (path: hash), empty when it
// saw nothing yet.
func (s *Store) Reads(session string) (map[string]string, error) {
	m := map[string]string{}
	b, err := readFile(s.readsPath(session))
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

// readHashes are the blob files the sessions' reads name (prune keeps
// them); a reads file older than the age limit goes.
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
		if b, err := readFile(p); err == nil && json.Unmarshal(b, &m) == nil {
			for _, h := range m {
				used[h] = true
			}
		}
	}
	return used
}
