package history

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// prune brings the history within its limits (under the lock): the
// newest entries that fit are kept — the newest always — the small
// contents they name copied to a new pack, the log rewritten, and the blob
// files the dropped entries named removed (as many as a budget allows).
//
// A prune whose log only grew by committed operations since the last
// prune's summary, within the limits, reads those alone (pruneFromTail).
// One with nothing to drop from a log holding nothing but committed
// entries (no aborted or cut record, no open entry) rewrites nothing: the
// log, the pack and the backups not hashed yet stay as they are (those
// are hashed, a budget a prune, by the prunes that rewrite). Both then
// sweep a slice of the store (sweep.go). The operation that meets the
// prune pays for reading the log and a bounded sweep, not for writing the
// history again.
func (s *Store) prune(lf *os.File) error {
	if s.pruneFromTail() {
		return nil
	}
	sum, _ := s.readSummary() // (the sweep's state: before it is written again)
	st := sum.sweepState
	data, err := s.logBytes()
	if err != nil {
		return err
	}
	// The operations the count drops are read but for their files (a big
	// patch's entry is most of the log), unless one of them is kept after
	// all.
	l := parseLog(data, s.countDropped(data))
	keep := s.kept(l.committed)
	if slices.ContainsFunc(keep, func(e *Entry) bool { return e.head }) || slices.ContainsFunc(l.open, func(e *Entry) bool { return e.head }) {
		l = parseLog(data, nil)
		keep = s.kept(l.committed)
	}
	entries, open := l.committed, l.open
	dropped := entries[:len(entries)-len(keep)]
	if len(dropped) == 0 && len(open) == 0 && len(l.skipped) == 0 && l.records == 2*len(entries)+l.hashedRecords {
		err := s.pruneInPlace(keep)
		s.writeSummary(keep, s.sweepFrom(st))
		return err
	}
	gen := s.packGen() + 1
	if err := s.repack(gen, append(append([]*Entry{}, keep...), open...)); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, e := range keep {
		for _, r := range []record{{Seq: e.Seq, Entry: e}, {Seq: e.Seq, Commit: true}} {
			buf.Write(append(appendRecord(nil, r), '\n'))
		}
	}
	for _, e := range open {
		buf.Write(append(appendRecord(nil, record{Seq: e.Seq, Entry: e}), '\n'))
	}
	if err := writeAtomic(filepath.Join(s.dir, "log"), buf.Bytes()); err != nil {
		return err
	}
	if lf != nil {
		g := []byte(strconv.Itoa(gen))
		if _, err := lf.WriteAt(g, 0); err == nil {
			_ = lf.Truncate(int64(len(g)))
		}
	}
	s.removeOldPacks(gen)
	// The files the dropped entries named are left to the sweeps that
	// follow, a budget a prune (a 2,000-file patch's backups are 2,000
	// files to unlink).
	st.Dirty = true
	if len(open) == 0 {
		s.writeSummary(keep, st)
	} else {
		os.Remove(s.summaryPath()) // (an open entry: the next prune reads all)
	}
	return nil
}

// pruneInPlace is a prune that rewrites nothing (keep is the whole log):
// a budget of backups hashed, said by one record appended to the log, and
// a dead process's private pack removed.
func (s *Store) pruneInPlace(keep []*Entry) error {
	budget := hashBudget{files: hashFilesInPlace, bytes: hashBytes / 4}
	hashed := map[string]string{}
	for _, e := range keep {
		for _, im := range images(e) {
			if u := im.Unhashed; u != "" && budget.take(im.Size) {
				if s.hashUnhashed(im); im.Unhashed == "" {
					hashed[u] = im.Hash
				}
			}
		}
	}
	s.removeOldPacks(s.packGen())
	if len(hashed) > 0 {
		return s.appendRecords(record{Seq: keep[len(keep)-1].Seq, Hashed: hashed})
	}
	return nil
}

// kept are the newest entries within the limits: the count, the age (the
// newest always kept) and the bytes their contents take (an entry whose
// contents newer ones keep anyway costs nothing).
func (s *Store) kept(entries []*Entry) []*Entry {
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
			for _, im := range images(keep[i]) {
				key := im.Hash + im.Unhashed // one of them
				if !seen[key] {
					seen[key] = true
					total += im.Size
				}
			}
			if total > max && total > before && i < len(keep)-1 {
				return keep[i+1:]
			}
		}
	}
	return keep
}

// repack writes pack gen with each small content the entries name, once,
// and points their images at it.
func (s *Store) repack(gen int, entries []*Entry) error {
	pack, err := openFile(filepath.Join(s.dir, fmt.Sprintf("pack.%d", gen)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	placed := map[string]string{}
	var off int64
	budget := hashBudget{files: hashFiles, bytes: hashBytes}
	for _, e := range entries {
		for _, im := range images(e) {
			if im.Unhashed != "" && budget.take(im.Size) {
				s.hashUnhashed(im)
			}
			if im.Pack == "" {
				continue
			}
			if p, ok := placed[im.Hash]; ok {
				im.Pack = p
				continue
			}
			data, err := s.Blob(im)
			if err != nil {
				im.Pack, im.Hash = "", "" // lost: the entry says so when undone
				continue
			}
			if _, err := pack.Write(data); err != nil {
				pack.Close()
				return err
			}
			im.Pack = fmt.Sprintf("%d:%d", gen, off)
			placed[im.Hash] = im.Pack
			off += int64(len(data))
		}
	}
	return pack.Close()
}

// removeOldPacks removes every pack but gen's — a live process's private
// one stays: it is storing what its command may change.
func (s *Store) removeOldPacks(gen int) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, d := range ents {
		g, ok := strings.CutPrefix(d.Name(), "pack.")
		if !ok || g == strconv.Itoa(gen) || snapGen(g) {
			continue // the snapshot's pack is its own (snapshot.go)
		}
		if p, isPriv := strings.CutPrefix(g, "x"); isPriv {
			pid, _, _ := strings.Cut(p, "n")
			if n, err := strconv.Atoi(pid); err == nil && (n == os.Getpid() || alive(n)) {
				continue
			}
		}
		os.Remove(filepath.Join(s.dir, d.Name()))
	}
}

// A prune hashes at most hashFiles backups (LinkNew's) and hashBytes of
// them, oldest first: the rest stay as they are, read back by their names
// (Image.Unhashed), and are hashed by later prunes. Hashing every backup
// a big patch left (thousands of files: a read, a hash and a link each)
// stalled the operation that met the prune for a second and more.
const (
	hashFiles = 16
	hashBytes = 16 << 20
	// hashFilesInPlace: a prune that rewrites nothing hashes fewer, so
	// that the operation meeting it stays near its median (hashing is for
	// space alone: equal contents stored once).
	hashFilesInPlace = 4
)

// hashBudget is what a prune may still hash.
type hashBudget struct {
	files int
	bytes int64
}

// take reports whether a backup of size bytes fits, and counts it.
func (b *hashBudget) take(size int64) bool {
	if b.files <= 0 || b.bytes < size {
		return false
	}
	b.files--
	b.bytes -= size
	return true
}

// hashUnhashed names the blob file LinkNew stored for im by its hash (or
// finds that content stored already); im is left as it is when the file
// cannot be read.
func (s *Store) hashUnhashed(im *Image) {
	if !validUnhashed(im.Unhashed) {
		return
	}
	p := filepath.Join(s.dir, "blobs", im.Unhashed)
	b, err := readFile(p)
	if err != nil || int64(len(b)) != im.Size {
		return
	}
	h := Hash(b)
	dst := s.blobPath(h)
	// A second name, not a rename: the log still names the first until the
	// prune has rewritten it (a crash meanwhile loses nothing); the sweep
	// removes the first after.
	if fi, err := os.Stat(dst); err != nil || fi.Size() != im.Size {
		if os.MkdirAll(filepath.Dir(dst), 0o700) != nil {
			return
		}
		if err := os.Link(p, dst); err != nil && !errors.Is(err, os.ErrExist) {
			return
		}
	}
	im.Hash, im.Unhashed = h, ""
}

// packGen is the generation of the current pack (0: none yet).
func (s *Store) packGen() int {
	gen := 0
	ents, _ := os.ReadDir(s.dir)
	for _, d := range ents {
		if g, ok := strings.CutPrefix(d.Name(), "pack."); ok && !strings.HasPrefix(g, "x") {
			if n, err := strconv.Atoi(g); err == nil && n > gen {
				gen = n
			}
		}
	}
	return gen
}

// images are the stored contents an entry names.
func images(e *Entry) []*Image {
	var out []*Image
	for _, f := range e.Files {
		for _, im := range []*Image{f.Pre, f.Post} {
			if im.Stored() {
				out = append(out, im)
			}
		}
	}
	return out
}
