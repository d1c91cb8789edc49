package history

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"
)

// summary is what the last prune knew of the log (log.sum): its operations'
// count, the bytes of their contents (each image counted, equal contents
// too: at least what the limit counts), the oldest one's time, the last
// number, and where the log ended then (Size, and its last bytes, Tail:
// a log rewritten since — by a prune of an older hunk, say — does not end
// with them there). A prune whose log only grew since by operations
// committed one after the other reads those records alone.
type summary struct {
	Size   int64     `json:"size"`
	Tail   []byte    `json:"tail"`
	Count  int       `json:"count"`
	Bytes  int64     `json:"bytes"`
	Oldest time.Time `json:"oldest"`
	Last   int64     `json:"last"`
	sweepState
}

// add counts the committed operation e.
func (sum *summary) add(e *Entry) {
	if sum.Count == 0 {
		sum.Oldest = e.Time
	}
	sum.Count++
	sum.Last = e.Seq
	for _, im := range images(e) {
		sum.Bytes += im.Size
	}
}

// tailLen is how many of the log's last bytes a summary keeps.
const tailLen = 64

// maxTail is the most a prune reads from the summary's end; a longer
// tail is read with the rest of the log.
const maxTail = 8 << 20

func (s *Store) summaryPath() string { return filepath.Join(s.dir, "log.sum") }

// readSummary is the summary as the last prune left it; ok false (and
// zero) when there is none to read.
func (s *Store) readSummary() (sum summary, ok bool) {
	if b, err := readFile(s.summaryPath()); err != nil || json.Unmarshal(b, &sum) != nil {
		return summary{}, false
	}
	return sum, true
}

// writeSummary records what a prune leaves: the operations kept, the log
// as it is now, and the sweep's state. A summary that cannot be
// written is removed (the next prune reads the whole log).
func (s *Store) writeSummary(keep []*Entry, st sweepState) {
	sum := summary{Count: len(keep), sweepState: st}
	for _, e := range keep {
		for _, im := range images(e) {
			sum.Bytes += im.Size
		}
	}
	if len(keep) > 0 {
		sum.Oldest, sum.Last = keep[0].Time, keep[len(keep)-1].Seq
	}
	f, err := openFile(filepath.Join(s.dir, "log"), os.O_RDONLY, 0)
	if err == nil {
		sum.Size, sum.Tail, err = logEnd(f)
		f.Close()
	}
	b, jerr := json.Marshal(sum)
	if err != nil || jerr != nil || writeAtomic(s.summaryPath(), b) != nil {
		os.Remove(s.summaryPath())
	}
}

// logEnd is the open log's size and its last tailLen bytes.
func logEnd(f *os.File) (int64, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	n := min(fi.Size(), tailLen)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, fi.Size()-n); err != nil && err != io.EOF {
		return 0, nil, err
	}
	return fi.Size(), tail, nil
}

// pruneFromTail is the prune of a log that, since the last prune's
// summary, only grew by operations committed one after the other, all
// within the limits: nothing to drop, nothing to rewrite — it reads the
// records appended since, sweeps its slice of the store when one is due
// (the names the log holds read without decoding it) and writes the
// summary again. done false: the whole log is to be read (no summary,
// another log, an aborted or killed operation since, a limit passed).
func (s *Store) pruneFromTail() (done bool) {
	sum, ok := s.readSummary()
	if !ok {
		return false
	}
	f, err := openFile(filepath.Join(s.dir, "log"), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	size, _, err := logEnd(f)
	if err != nil {
		return false
	}
	buf, ok := since(f, &sum, size)
	if !ok || !s.grown(&sum, buf) {
		return false
	}
	l := s.limits
	if l.Count > 0 && sum.Count > l.Count || l.Bytes > 0 && sum.Bytes > l.Bytes ||
		l.Age > 0 && sum.Count > 0 && sum.Oldest.Before(s.now().Add(-l.Age)) {
		return false
	}
	s.removeOldPacks(s.packGen())
	if sum.due(int(sum.Last) / max(s.pruneEvery, 1)) {
		sum.sweepState = s.sweepLog(f, size, 0, sum.sweepState)
	}
	_, sum.Tail, _ = logEnd(f)
	sum.Size = size
	if b, err := json.Marshal(sum); err != nil || writeAtomic(s.summaryPath(), b) != nil {
		os.Remove(s.summaryPath())
	}
	return true
}

// grown adds to sum the operations the records in tail commit: each an
// entry numbered after the last, then its commit. Anything else — an
// abort, an entry left open, a line cut short or not hunk's — is false.
func (s *Store) grown(sum *summary, tail []byte) bool {
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		return false
	}
	var open *Entry
	for _, line := range bytes.Split(tail, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		rec, ok := decodeRecord(line, nil)
		switch {
		case !ok:
			return false
		case rec.Entry != nil && open == nil && rec.Seq > sum.Last && rec.Entry.Seq == rec.Seq:
			open = rec.Entry
		case rec.Commit && open != nil && rec.Seq == open.Seq:
			sum.add(open)
			open = nil
		default:
			return false
		}
	}
	return open == nil
}

// summaryFiles: an operation of this many files or more brings the
// summary up to its own end when it commits, so that no prune decodes its
// entry (a 2,000-file patch's is 400 KB of log); smaller ones are read
// from the tail by the next prune.
const summaryFiles = 64

// seedSummary writes the summary of an empty log (Begin, creating it).
func (s *Store) seedSummary() {
	if b, err := json.Marshal(summary{}); err == nil && writeAtomic(s.summaryPath(), b) != nil {
		os.Remove(s.summaryPath())
	}
}

// advanceSummary brings the summary to the end of the log (open to
// append, under the lock) after e committed, its entry's record begun at
// entryAt: the records between the summary's end and entryAt are read,
// e's own are not. A summary that does not end where the log did, or
// records other than committed operations before e, remove it (the next
// prune reads the whole log). e sweeps the store in proportion to its
// files (so that removing contents keeps up with what big operations
// store).
func (s *Store) advanceSummary(log *os.File, e *Entry, entryAt int64) {
	sum, ok := s.readSummary()
	if !ok {
		return // none: the next prune reads all and writes one
	}
	ok = func() bool {
		buf, ok := since(log, &sum, entryAt)
		if !ok || !s.grown(&sum, buf) || e.Seq <= sum.Last {
			return false
		}
		sum.add(e)
		size, tail, err := logEnd(log)
		if err != nil {
			return false
		}
		sum.Size, sum.Tail = size, tail
		sum.sweepState = s.sweepLog(log, size, len(e.Files), sum.sweepState)
		b, err := json.Marshal(sum)
		return err == nil && writeAtomic(s.summaryPath(), b) == nil
	}()
	if !ok {
		os.Remove(s.summaryPath())
	}
}

// since is what log f holds from the summary's end to end (at most
// maxTail bytes); false when f does not end as the summary says it did
// there (another log: rewritten since by a hunk that keeps no summary).
func since(f *os.File, sum *summary, end int64) ([]byte, bool) {
	tl := int64(len(sum.Tail))
	if end < sum.Size || end-sum.Size > maxTail || tl > sum.Size {
		return nil, false
	}
	buf := make([]byte, end-sum.Size+tl)
	if _, err := f.ReadAt(buf, sum.Size-tl); err != nil && err != io.EOF {
		return nil, false
	}
	if !bytes.Equal(buf[:tl], sum.Tail) {
		return nil, false
	}
	return buf[tl:], true
}
