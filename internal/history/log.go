package history

// The log: one record a line, read whole (readLog) or from its end
// (lastRecord), appended to in one write a record set.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// readLog reads the log: the committed entries, oldest first; the entries
// prepared with no outcome yet; the lines it could not read.
func (s *Store) readLog() (committed, open []*Entry, skipped []string, err error) {
	committed, open, skipped, _, _, err = s.readLogCounted()
	return committed, open, skipped, err
}

// readLogCounted is readLog, also counting the log's records (lines) and
// those of them that are a prune's Hashed.
func (s *Store) readLogCounted() (committed, open []*Entry, skipped []string, records, hashedRecords int, err error) {
	f, err := openFile(filepath.Join(s.dir, "log"), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, 0, 0, nil
	}
	if err != nil {
		return nil, nil, nil, 0, 0, err
	}
	defer f.Close()
	prepared := map[int64]*Entry{}
	hashed := map[string]string{}
	var order []int64
	done := map[int64]bool{}
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			records++
			rec, fast := decodeRecord(line)
			var jerr error
			if !fast {
				rec = record{}
				jerr = json.Unmarshal(line, &rec)
			}
			switch {
			case err == io.EOF:
				// A record is written with its newline in one write: a
				// last line without one was cut short.
				skipped = append(skipped, fmt.Sprintf("log line %d: cut short (a killed hunk's)", n))
			case jerr != nil:
				skipped = append(skipped, fmt.Sprintf("log line %d: not a record: %v", n, jerr))
			case rec.Entry != nil:
				if rec.Entry.Seq != rec.Seq || rec.Entry.ID == "" {
					skipped = append(skipped, fmt.Sprintf("log line %d: an entry whose number disagrees", n))
					break
				}
				prepared[rec.Seq] = rec.Entry
				done[rec.Seq] = false
				order = append(order, rec.Seq)
			case rec.Hashed != nil:
				hashedRecords++
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
						committed = append(committed, e)
					}
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, 0, 0, err
		}
	}
	seen := map[int64]bool{}
	for _, seq := range order {
		if !done[seq] && !seen[seq] {
			seen[seq] = true
			open = append(open, prepared[seq])
		}
	}
	if len(hashed) > 0 {
		for _, e := range append(append([]*Entry{}, committed...), open...) {
			for _, f := range e.Files {
				for _, im := range []*Image{f.Pre, f.Post} {
					if h, ok := hashed[im.unhashed()]; ok {
						im.Hash, im.Unhashed = h, ""
					}
				}
			}
		}
	}
	return committed, open, skipped, records, hashedRecords, nil
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
