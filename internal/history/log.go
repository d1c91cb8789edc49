package history

// The log: one record a line, read whole (readLog) or from its end
// (lastRecord), appended to in one write a record set.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// readLog reads the log: the committed entries, oldest first; the entries
// prepared with no outcome yet; the lines it could not read.
func (s *Store) readLog() (committed, open []*Entry, skipped []string, err error) {
	data, err := s.logBytes()
	if err != nil {
		return nil, nil, nil, err
	}
	l := parseLog(data, nil)
	return l.committed, l.open, l.skipped, nil
}

// logBytes is the log, whole (none: nil).
func (s *Store) logBytes() ([]byte, error) {
	data, err := readFile(filepath.Join(s.dir, "log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// logContents is what a log holds (readLog's), and how many records
// (lines) it has, and how many of them are a prune's Hashed.
type logContents struct {
	committed, open        []*Entry
	skipped                []string
	records, hashedRecords int
}

// parseLog reads log data. The entries numbered in headOnly are read but
// for their files (a prune drops them: their files are not needed).
func parseLog(data []byte, headOnly map[int64]bool) logContents {
	var l logContents
	prepared := map[int64]*Entry{}
	hashed := map[string]string{}
	var order []int64
	done := map[int64]bool{}
	for n := 1; len(data) > 0; n++ {
		line, rest, cut := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		l.records++
		rec, fast := decodeRecord(line, headOnly)
		var jerr error
		if !fast {
			rec = record{}
			jerr = json.Unmarshal(line, &rec)
		}
		switch {
		case !cut:
			// A record is written with its newline in one write: a last
			// line without one was cut short.
			l.skipped = append(l.skipped, fmt.Sprintf("log line %d: cut short (a killed hunk's)", n))
		case jerr != nil:
			l.skipped = append(l.skipped, fmt.Sprintf("log line %d: not a record: %v", n, jerr))
		case rec.Entry != nil:
			if rec.Entry.Seq != rec.Seq || rec.Entry.ID == "" {
				l.skipped = append(l.skipped, fmt.Sprintf("log line %d: an entry whose number disagrees", n))
				break
			}
			prepared[rec.Seq] = rec.Entry
			done[rec.Seq] = false
			order = append(order, rec.Seq)
		case rec.Hashed != nil:
			l.hashedRecords++
			for u, h := range rec.Hashed {
				if validUnhashed(u) && validHash(h) {
					hashed[u] = h
				}
			}
		case rec.Commit || rec.Abort:
			// The outcome of the entry prepared last under this number;
			// one with none is passed over.
			if e := prepared[rec.Seq]; e != nil && !done[rec.Seq] {
				done[rec.Seq] = true
				if rec.Commit {
					l.committed = append(l.committed, e)
				}
			}
		}
	}
	seen := map[int64]bool{}
	for _, seq := range order {
		if !done[seq] && !seen[seq] {
			seen[seq] = true
			l.open = append(l.open, prepared[seq])
		}
	}
	if len(hashed) > 0 {
		for _, e := range append(append([]*Entry{}, l.committed...), l.open...) {
			for _, f := range e.Files {
				for _, im := range []*Image{f.Pre, f.Post} {
					if h, ok := hashed[im.unhashed()]; ok {
						im.Hash, im.Unhashed = h, ""
					}
				}
			}
		}
	}
	return l
}

// recordHead splits a line that begins as appendRecord writes a record,
// {"seq":N,…, into N's digits and what follows them; ok false for any
// other line.
func recordHead(line []byte) (seq, rest []byte, ok bool) {
	r, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	i := 0
	for i < len(r) && r[i] >= '0' && r[i] <= '9' {
		i++
	}
	return r[:i], r[i:], ok && i > 0
}

// countDropped are the committed operations the count limit drops from
// log data (nil: none), told from their records' first bytes alone: an
// entry's record, then its commit (an abort drops it). parseLog then
// reads them but for their files; a prune checks that it kept none of
// them (an entry this reading took for committed and parseLog did not,
// say), else it reads the log whole.
func (s *Store) countDropped(data []byte) map[int64]bool {
	if s.limits.Count <= 0 {
		return nil
	}
	var committed []int64
	prepared := map[int64]bool{}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		digits, rest, ok := recordHead(line)
		seq, err := strconv.ParseInt(string(digits), 10, 64)
		if !ok || err != nil {
			continue
		}
		switch {
		case bytes.HasPrefix(rest, []byte(`,"entry":`)):
			prepared[seq] = true
		case string(rest) == `,"commit":true}` && prepared[seq]:
			committed = append(committed, seq)
			delete(prepared, seq)
		case string(rest) == `,"abort":true}`:
			delete(prepared, seq)
		}
	}
	if len(committed) <= s.limits.Count {
		return nil
	}
	drop := map[int64]bool{}
	for _, seq := range committed[:len(committed)-s.limits.Count] {
		drop[seq] = true
	}
	return drop
}

// appendRecords appends recs to the log, each a line, in one write (a
// line a killed hunk cut short is ended first).
func (s *Store) appendRecords(recs ...record) error {
	f, err := openFile(filepath.Join(s.dir, "log"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	err = appendLines(f, true, recs...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendLines appends recs to the open log f (O_RDWR|O_APPEND); check:
// first see whether f ends a line (the caller may know it does).
func appendLines(f *os.File, check bool, recs ...record) error {
	var buf []byte
	for _, r := range recs {
		buf = append(appendRecord(buf, r), '\n')
	}
	if check {
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			var last [1]byte
			if _, err := f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
				buf = append([]byte{'\n'}, buf...)
			}
		}
	}
	_, err := f.Write(buf)
	return err
}

// lastRecord reads the open log f's last line that is a record (lines a
// killed hunk cut short, or damaged, are passed over): the record, whether
// there is one, and whether f ends a line (or is empty).
func lastRecord(f *os.File) (rec record, ok, ended bool) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return record{}, false, true
	}
	size := fi.Size()
	for n := int64(4096); ; n *= 4 {
		if n > size {
			n = size
		}
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return record{}, false, false
		}
		ended = buf[len(buf)-1] == '\n'
		// Whole lines only: the first may have begun before what was read.
		end := bytes.LastIndexByte(buf, '\n')
		for end > 0 {
			start := bytes.LastIndexByte(buf[:end], '\n') + 1
			if start == 0 && n < size {
				break // read more
			}
			line := buf[start:end]
			if seq, entry, ok := peekRecord(line); ok && !entry {
				return record{Seq: seq}, true, ended // a commit or an abort: nothing more to read
			}
			if json.Unmarshal(line, &rec) == nil && rec.Seq > 0 {
				return rec, true, ended
			}
			rec = record{}
			end = start - 1
		}
		if n == size {
			return record{}, false, ended
		}
	}
}

// settleTail settles an operation a killed hunk prepared and left without
// its outcome (called under the lock: a live hunk's operation is never
// open then). Records are appended in order and every hunk settles before
// it prepares, so only the log's last record can be one.
func (s *Store) settleTail() {
	f, err := openFile(filepath.Join(s.dir, "log"), os.O_RDONLY, 0)
	if err != nil {
		return
	}
	rec, ok, _ := lastRecord(f)
	f.Close()
	if ok && rec.Entry != nil {
		s.settle(rec, s.appendRecords)
	}
}

// settle decides the open operation rec prepared, appending its outcome
// with add.
func (s *Store) settle(rec record, add func(...record) error) {
	e := rec.Entry
	keep := s.committed != nil
	for _, f := range e.Files {
		keep = keep && s.committed(f)
	}
	if keep {
		if add(record{Seq: e.Seq, Commit: true}) == nil {
			s.Notes = append(s.Notes, fmt.Sprintf("history: recorded operation %s, which a killed hunk had committed", e.ID))
		}
		return
	}
	_ = add(record{Seq: e.Seq, Abort: true}) // rolled back: nothing to record
}
