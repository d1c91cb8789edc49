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
	sweepNames    = 1024
	sweepLooks    = 1024
	sweepRemovals = 128
)

// dirCost is what reading a directory costs the names budget beyond its
// names (an open, a read, a close: the hashes' 256 small directories are
// read a few dozen a step, not all at once).
const dirCost = 32

// sweep is one prune's: what is named, and its budget.
type sweep struct {
	dir      string          // the history's
	used     map[string]bool // the blob files named, by key (candidate's)
	recent   time.Time       // a file changed after it stays: a session's reads may name it, an undo that read the log before may want it
	names    int
	looks    int
	removals int
	dirs     []*os.File // the directories walk opened (close)
}

// newSweep is a sweep of s (the blob files the sessions' reads name used)
// with a budget for an operation of files files.
func (s *Store) newSweep(files int) *sweep {
	return &sweep{dir: s.dir, used: s.readHashes(), recent: s.now().Add(-10 * time.Minute),
		names: max(sweepNames, 32*files), looks: max(sweepLooks, 8*files), removals: max(sweepRemovals, files)}
}

// remove removes candidate c when it is not recent; false once the budget
// is spent. It acts on the directory walk opened, by c's name there: no
// path is looked up again.
func (w *sweep) remove(c candidate) bool {
	if w.looks <= 0 || w.removals <= 0 {
		return false
	}
	w.looks--
	fd := int(c.dir.Fd())
	if recent(fd, c.name, w.recent) {
		return true
	}
	if unix.Unlinkat(fd, c.name, 0) == nil {
		w.removals--
	}
	return true
}

// recent reports whether name in directory fd changed after t, by its
// change time: when it was stored, linked in (a backup keeps its file's
// modification time) or stored again (PutBlob); true when it cannot be
// told.
func recent(fd int, name string, t time.Time) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || time.Unix(st.Ctim.Unix()).After(t)
}

// candidate is a file the sweep looks at: its key (a hash, or S/N for a
// backup new/S/N), its directory (open) and its directory's and its own
// name (the cursor is rel/name).
type candidate struct {
	key       string
	dir       *os.File
	rel, name string
}

// walk lists the files of the store in order from cursor (the first to
// look at, "dir/…": the hashes' directories, then new, whose operations'
// directories hold their backups; "" the beginning), whole directories
// until the budget's names are read, and returns where the next sweep
// begins: "" at the end. Each directory is opened in the one above it,
// through no symbolic link, and stays open for remove (close ends it). An
// operation's directory found empty, and not recent, is removed.
func (w *sweep) walk(cursor string) (files []candidate, next string) {
	var cur []string
	if cursor != "" {
		cur = strings.Split(cursor, "/")
	}
	// visit lists directory d (rel, from blobs) and returns whether the
	// budget lasted, and how many names it held.
	var visit func(d *os.File, rel string, cur []string) (bool, int)
	visit = func(d *os.File, rel string, cur []string) (bool, int) {
		names := dirNames(d)
		w.names -= len(names) + dirCost
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
			switch {
			case rel == "" && (len(n) == 2 || n == "new"), rel == "new" && digits(n):
				// the hashes' directories and new; an operation's backups
				r := n
				if rel != "" {
					r = rel + "/" + n
				}
				if w.names <= 0 {
					next = r
					return false, len(names)
				}
				sd, err := w.open(int(d.Fd()), n)
				if err != nil {
					continue
				}
				more, held := visit(sd, r, sub)
				if !more {
					return false, len(names)
				}
				if rel == "new" && held == 0 && !recent(int(d.Fd()), n, w.recent) {
					unix.Unlinkat(int(d.Fd()), n, unix.AT_REMOVEDIR) // an operation's directory left empty
				}
			case rel == "":
			case rel == "new", len(rel) == 2 && strings.HasPrefix(n, rel):
				// an older hunk's backup (S-N), a hash's file, or not a blob
				files = append(files, candidate{n, d, rel, n})
			default: // a backup (S/N), or not a blob: named by none
				files = append(files, candidate{strings.TrimPrefix(rel, "new/") + "/" + n, d, rel, n})
			}
		}
		return true, len(names)
	}
	if root, err := w.open(unix.AT_FDCWD, filepath.Join(w.dir, "blobs")); err == nil {
		visit(root, "", cur)
	}
	return files, next
}

// open opens directory name in the directory at (AT_FDCWD: a path),
// following no symbolic link; close closes it.
func (w *sweep) open(at int, name string) (*os.File, error) {
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	w.dirs = append(w.dirs, f)
	return f, nil
}

// close closes the directories walk opened.
func (w *sweep) close() {
	for _, d := range w.dirs {
		d.Close()
	}
	w.dirs = nil
}

// dirNames are the names in open directory d, sorted.
func dirNames(d *os.File) []string {
	names, _ := d.Readdirnames(-1)
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
	defer w.close()
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
		if !w.remove(c) {
			next = c.rel + "/" + c.name // (the budget spent: the next sweep begins with it)
			break
		}
	}
	st.Cursor = next
	if next == "" { // a round ended: the store is clean if it found nothing
		st.Dirty, st.Found = st.Found, false
	}
	return st
}

// namedIn are the blob files of want that log names, by key, read without
// decoding the entries — every JSON string that is one: a name too many
// at worst (a path that looks like one keeps a file) — but for the
// backups a hashed record renamed (readers take the hash). A backup of
// operation S is named by S's entry alone (LinkNew's names are the
// operation's): when want holds only backups and every line begins as
// appendRecord writes it, only their operations' entry lines are read.
func namedIn(log []byte, want map[string]bool) map[string]bool {
	used := map[string]bool{}
	regions, hashed, whole := logLines(log, want)
	name := func(tok []byte) {
		if len(tok) != 64 && !bytes.HasPrefix(tok, []byte("new/")) {
			return // (neither a hash nor a backup's name)
		}
		if k := bytes.TrimPrefix(tok, []byte("new/")); want[string(k)] {
			used[string(k)] = true
		}
	}
	for _, region := range regions {
		if whole || bytes.IndexByte(region, '\\') >= 0 {
			jsonStrings(region, name)
			continue
		}
		// An entry line without a backslash holds its strings as they
		// are: a backup's name is "new/… wherever it is.
		for b := region; ; {
			i := bytes.Index(b, []byte("new/"))
			if i < 0 {
				break
			}
			if i > 0 && b[i-1] == '"' {
				if j := bytes.IndexByte(b[i:], '"'); j >= 0 {
					name(b[i : i+j])
				}
			}
			b = b[i+4:]
		}
	}
	for _, line := range hashed {
		var rec record
		if json.Unmarshal(line, &rec) != nil || rec.Entry != nil {
			continue
		}
		for k, v := range rec.Hashed {
			if validUnhashed(k) && validHash(v) { // (the ones a reader takes: parseLog)
				delete(used, strings.TrimPrefix(k, "new/"))
				if want[v] {
					used[v] = true
				}
			}
		}
	}
	return used
}

// jsonStrings calls f with the value of every JSON string on log's lines.
func jsonStrings(log []byte, f func([]byte)) {
	for len(log) > 0 {
		var line []byte
		line, log, _ = bytes.Cut(log, []byte("\n"))
	strings:
		for {
			i := bytes.IndexByte(line, '"')
			if i < 0 {
				break
			}
			line = line[i+1:]
			j := 0 // the closing quote: one no odd run of backslashes escapes
			for {
				k := bytes.IndexByte(line[j:], '"')
				if k < 0 {
					break strings // (none: the next line)
				}
				j += k
				n := 0
				for p := j - 1; p >= 0 && line[p] == '\\'; p-- {
					n++
				}
				if n%2 == 0 {
					break
				}
				j++
			}
			tok := line[:j]
			line = line[j+1:]
			if bytes.IndexByte(tok, '\\') >= 0 {
				var s string
				if json.Unmarshal(append(append([]byte{'"'}, tok...), '"'), &s) != nil {
					continue
				}
				tok = []byte(s)
			}
			f(tok)
		}
	}
}

// logLines are the parts of log that may name the files of want: the
// entry lines of the operations whose backups they are ({"seq":S,"entry":
// at a line's start), or (whole) the log when want holds a hash, an
// operation has no such line, or a line is not in appendRecord's form;
// and the hashed records' lines (a last line cut short is none: parseLog
// passes it over).
func logLines(log []byte, want map[string]bool) (lines, hashed [][]byte, whole bool) {
	seqs := map[string]bool{}
	for k := range want {
		s, _, ok := strings.Cut(k, "/")
		if !ok {
			s, _, ok = strings.Cut(k, "-")
		}
		if !ok || !digits(s) {
			whole = true
			break
		}
		seqs[s] = false
	}
	for b := log; len(b) > 0; {
		line, rest, cut := bytes.Cut(b, []byte("\n"))
		b = rest
		seq, r, ok := recordHead(line)
		switch {
		case !ok:
			whole = whole || len(bytes.TrimSpace(line)) > 0
		case bytes.HasPrefix(r, []byte(`,"hashed":{`)):
			if cut {
				hashed = append(hashed, line)
			}
		case bytes.HasPrefix(r, []byte(`,"entry":{`)):
			if _, wanted := seqs[string(seq)]; wanted {
				lines = append(lines, line)
				seqs[string(seq)] = true
			}
		case string(r) == `,"commit":true}`, string(r) == `,"abort":true}`:
		default:
			whole = true
		}
	}
	for _, found := range seqs {
		whole = whole || !found
	}
	if whole {
		return [][]byte{log}, hashed, true
	}
	return lines, hashed, false
}
