package history

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The sweep removes the blob files nothing names any more: the contents
// of operations a prune dropped (or a killed hunk's, or an aborted
// operation's), backups a prune named by their hash (a second name), a
// session's reads no reads file names. A prune that is due (sweepState)
// sweeps a slice of the store, within a budget, from where the last
// sweep stopped (the summary's cursor), and an operation of many files
// one in proportion, so that no operation pays for a walk of everything
// stored, nor for removing thousands of files at once.

// A small operation's sweep looks at sweepNames names at most, stats
// sweepLooks of them (those nothing names) and removes sweepRemovals; an
// operation of many files sweeps in proportion to them.
const (
	sweepNames    = 2048
	sweepLooks    = 1024
	sweepRemovals = 128
)

// sweep is one prune's: what is named, and its budget.
type sweep struct {
	dir      string          // the history's
	used     map[string]bool // the blob files named, by key (candidate's)
	recent   time.Time       // a file changed after it stays: a session's reads may name it, an undo that read the log before may want it
	names    int
	looks    int
	removals int
}

// newSweep is a sweep of s (the blob files the sessions' reads name used)
// with a budget for an operation of files files.
func (s *Store) newSweep(files int) *sweep {
	return &sweep{dir: s.dir, used: s.readHashes(), recent: s.now().Add(-10 * time.Minute),
		names: max(sweepNames, 32*files), looks: max(sweepLooks, 8*files), removals: max(sweepRemovals, files)}
}

// removeAt removes the file at p, blob file key, when nothing names it and
// it is not recent; false once the budget is spent.
func (w *sweep) removeAt(key, p string) bool {
	if w.used[key] {
		return true
	}
	if w.looks <= 0 || w.removals <= 0 {
		return false
	}
	w.looks--
	if recent(p, w.recent) {
		return true
	}
	if os.Remove(p) == nil {
		w.removals--
	}
	return true
}

// recent reports whether the file at p changed after t, by its change
// time: when it was stored, linked in (a backup keeps its file's
// modification time) or stored again (PutBlob); true when it cannot be
// told.
func recent(p string, t time.Time) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) != nil || time.Unix(st.Ctim.Unix()).After(t)
}

// candidate is a file the sweep looks at: its key (a hash, or S/N for a
// backup new/S/N), its
// directory and name there, and its name as a cursor.
type candidate struct{ key, dir, name, rel string }

// walk lists the files of the store in order from cursor (the first to
// look at, "dir/…": the hashes' directories, then new, whose operations'
// directories hold their backups; "" the beginning), at most the budget's
// names, and returns where the next sweep begins: "" at the end. An
// operation's directory left empty, and not recent, is removed.
func (w *sweep) walk(cursor string) (files []candidate, next string) {
	var cur []string
	if cursor != "" {
		cur = strings.Split(cursor, "/")
	}
	var visit func(dir, rel string, cur []string) bool
	visit = func(dir, rel string, cur []string) bool {
		names := sortedNames(dir)
		for _, n := range names {
			var sub []string
			if len(cur) > 0 {
				if n < cur[0] {
					continue
				}
				if n == cur[0] {
					sub = cur[1:]
				}
				cur = nil // (past the cursor's name at this depth)
			}
			r := n
			if rel != "" {
				r = rel + "/" + n
			}
			if w.names <= 0 {
				next = r
				return false
			}
			w.names--
			switch {
			case rel == "": // blobs: the hashes' directories, and new
				if len(n) == 2 || n == "new" {
					if !visit(filepath.Join(dir, n), r, sub) {
						return false
					}
				}
			case rel == "new" && digits(n): // an operation's backups
				p := filepath.Join(dir, n)
				if !visit(p, r, sub) {
					return false
				}
				if len(sortedNames(p)) == 0 && !recent(p, w.recent) {
					os.Remove(p)
				}
			case len(rel) == 2 && strings.HasPrefix(n, rel): // a hash's file
				files = append(files, candidate{n, dir, n, r})
			default: // a backup's (S/N; S-N an older hunk's), or not a blob: named by none
				files = append(files, candidate{strings.TrimPrefix(r, "new/"), dir, n, r})
			}
		}
		return true
	}
	visit(filepath.Join(w.dir, "blobs"), "", cur)
	return files, next
}

// sortedNames are the names in directory dir, sorted (none when it cannot
// be read, or is a symbolic link: the sweep follows none).
func sortedNames(dir string) []string {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	slices.Sort(names)
	return names
}

// sweepState is the sweep's, kept in the summary: where the next one
// begins (Cursor, "" a new round), whether the store may hold a file
// nothing names (Dirty: a prune dropped operations or passed over lines,
// or the last round found one), and whether this round found one (Found).
type sweepState struct {
	Cursor string `json:"cursor,omitempty"`
	Dirty  bool   `json:"dirty,omitempty"`
	Found  bool   `json:"found,omitempty"`
}

// sweepRounds: a clean store is swept one prune in this many all the same
// (a hunk killed before its entry was written leaves files no record
// tells of, a session's reads files name other contents over time).
const sweepRounds = 8

// due reports whether prune round (the operations' number over
// pruneEvery) sweeps: a dirty store, a round begun, or one in sweepRounds.
func (st sweepState) due(round int) bool {
	return st.Dirty || st.Cursor != "" || round%sweepRounds == 0
}

// sweepLog is a sweep by an operation of files files from st: the files
// walk lists, those the log f (its first size bytes) or a session's reads
// name kept, the others removed within the budget. It returns the state
// after it (st itself when the log cannot be read).
func (s *Store) sweepLog(f *os.File, size int64, files int, st sweepState) sweepState {
	b := make([]byte, size)
	if n, _ := f.ReadAt(b, 0); int64(n) != size {
		return st
	}
	return s.sweepData(b, files, st)
}

// sweepFrom is sweepLog over the log as it is now.
func (s *Store) sweepFrom(st sweepState) sweepState {
	data, err := s.logBytes()
	if err != nil {
		return st
	}
	return s.sweepData(data, 0, st)
}

// sweepData is sweepLog with the log's data.
func (s *Store) sweepData(log []byte, files int, st sweepState) sweepState {
	w := s.newSweep(files)
	cands, next := w.walk(st.Cursor)
	want := make(map[string]bool, len(cands))
	for _, c := range cands {
		want[c.key] = true
	}
	for k := range namedIn(log, want) {
		w.used[k] = true
	}
	for _, c := range cands {
		if w.used[c.key] {
			continue
		}
		st.Found = true
		if !w.removeAt(c.key, filepath.Join(c.dir, c.name)) {
			next = c.rel // (the budget spent: the next sweep begins with it)
			break
		}
	}
	st.Cursor = next
	if next == "" { // a round ended: the store is clean if it found nothing
		st.Dirty, st.Found = st.Found, false
	}
	return st
}

// namedIn are the blob files of want that log names, by key: the
// value of every "hash" and "unhashed" key of its lines, read without
// decoding the entries (a string that only looks like one keeps a file
// at worst), but for the LinkNew names a hashed record renamed (readers
// take the hash).
func namedIn(log []byte, want map[string]bool) map[string]bool {
	used := map[string]bool{}
	var hashed [][]byte // the hashed records' lines
	for b, at := log, 0; ; {
		i := bytes.Index(b[at:], []byte(`hash`)) // ('h' is rarer than '"' in the log: the search is fast)
		if i < 0 {
			break
		}
		i += at
		at = i + 4
		var tok []byte
		switch rest := b[at:]; {
		case bytes.HasPrefix(rest, []byte(`":"`)) && i >= 1 && b[i-1] == '"':
			tok = rest[3:]
		case bytes.HasPrefix(rest, []byte(`ed":"new/`)) && i >= 3 && string(b[i-3:i]) == `"un`:
			tok = rest[9:]
		case bytes.HasPrefix(rest, []byte(`ed":{`)) && i >= 1 && b[i-1] == '"':
			start := bytes.LastIndexByte(b[:i], '\n') + 1
			line, _, _ := bytes.Cut(b[start:], []byte("\n"))
			hashed = append(hashed, line)
			b, at = b[start+len(line):], 0
			continue
		default:
			continue
		}
		if j := bytes.IndexByte(tok, '"'); j >= 0 && want[string(tok[:j])] {
			used[string(tok[:j])] = true
		}
	}
	for _, line := range hashed {
		var rec record
		if json.Unmarshal(line, &rec) != nil || rec.Entry != nil {
			continue
		}
		for k, v := range rec.Hashed {
			delete(used, strings.TrimPrefix(k, "new/"))
			if want[v] {
				used[v] = true
			}
		}
	}
	return used
}
