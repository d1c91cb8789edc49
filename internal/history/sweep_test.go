package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// garbage puts n files no entry names in the store: a killed operation's
// backups (blobs/new/99/N), and returns their directory.
func garbage(t *testing.T, s *Store, n int) string {
	t.Helper()
	dir := filepath.Join(s.dir, "blobs", "new", "99")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func count(dir string) int {
	ents, _ := os.ReadDir(dir)
	return len(ents)
}

// TestSweepIsBounded: a prune removes at most its budget of the files no
// entry names, and the next prunes go on from where it stopped until
// none is left; a file an entry names stays; a file stored in the last ten
// minutes stays. A clean store is swept one prune in sweepRounds.
func TestSweepIsBounded(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1
	o, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "kept")
	os.WriteFile(src, []byte("a backup\n"), 0o600)
	kept, err := o.LinkNew(9, func(to string) error { return os.Link(src, to) })
	if err != nil || kept.Unhashed != "new/1/1" {
		t.Fatalf("LinkNew: %+v %v (want the operation's directory)", kept, err)
	}
	if err := o.Prepare(&Entry{Command: "apply-patch", Files: []FileChange{{Path: "f", Pre: kept}}}); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil { // (a prune: nothing is old yet)
		t.Fatal(err)
	}
	dir := garbage(t, s, sweepRemovals+100)
	if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
		t.Fatal(err)
	}
	if got := count(dir); got != sweepRemovals+100 {
		t.Fatalf("a prune removed files stored a moment ago: %d left", got)
	}
	// Nothing tells of a killed hunk's files: a clean store is swept one
	// prune in sweepRounds.
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	for i := 0; i < sweepRounds && count(dir) == sweepRemovals+100; i++ {
		if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := count(dir); got != 100 {
		t.Fatalf("the first sweep left %d of %d unnamed files, want its budget (%d) removed", got, sweepRemovals+100, sweepRemovals)
	}
	for i := 0; i < 3; i++ { // (the directory goes once a sweep finds it empty)
		if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the killed operation's directory after the sweep: %d files, %v", count(dir), err)
	}
	if data, err := s.Blob(kept); err != nil || string(data) != "a backup\n" {
		t.Fatalf("a kept entry's backup after the sweep: %q %v", data, err)
	}
}

// TestBigOperationSweepsInProportion: an operation of many files sweeps as
// many unnamed files as it has, with no prune due.
func TestBigOperationSweepsInProportion(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1000
	if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "small"}}}); err != nil {
		t.Fatal(err)
	}
	dir := garbage(t, s, 3*sweepRemovals)
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	var files []FileChange
	for i := 0; i < 2*sweepRemovals; i++ {
		files = append(files, FileChange{Path: fmt.Sprint("f", i), Pre: &Image{Hash: Hash([]byte{byte(i)}), Size: 1}})
	}
	if err := s.Record(&Entry{Command: "apply-patch", Files: files}); err != nil {
		t.Fatal(err)
	}
	if got := count(dir); got != sweepRemovals {
		t.Fatalf("after a %d-file operation %d of %d unnamed files are left, want %d", len(files), got, 3*sweepRemovals, sweepRemovals)
	}
}

// TestNamedIn: the names the log holds, read without decoding it — a
// hash, a backup's name — but for a backup a hashed record renamed; a
// path that only looks like a key does not end the search.
func TestNamedIn(t *testing.T) {
	h := func(c string) string { return strings.Repeat(c, 64) }
	var log []byte
	for _, r := range []record{
		{Seq: 1, Entry: &Entry{ID: "1", Seq: 1, Command: "apply-patch", Files: []FileChange{
			{Path: `a"hash":"` + h("e"), Pre: &Image{Unhashed: "new/1/1", Size: 3}, Post: &Image{Hash: h("a")}},
			{Path: "b", Pre: &Image{Unhashed: "new/1/2", Size: 3}},
			{Path: "c", Pre: &Image{Unhashed: "new/1-3", Size: 3}},
		}}},
		{Seq: 1, Commit: true},
		{Seq: 1, Hashed: map[string]string{"new/1/2": h("b")}},
	} {
		log = append(appendRecord(log, r), '\n')
	}
	want := map[string]bool{"1/1": true, "1/2": true, "1-3": true, h("a"): true, h("b"): true, h("c"): true, h("e"): true}
	got := namedIn(log, want)
	for k, named := range map[string]bool{"1/1": true, "1/2": false, "1-3": true, h("a"): true, h("b"): true, h("c"): false, h("e"): false} {
		if got[k] != named {
			t.Errorf("%.8s named: %v, want %v (log %s)", k, got[k], named, log)
		}
	}
	// Backups alone: their operations' entry lines are read, and an
	// operation with none (a killed hunk's) makes it read the whole log —
	// the same names either way.
	log = append(appendRecord(log, record{Seq: 12, Entry: &Entry{ID: "12", Seq: 12, Command: "edit", Files: []FileChange{
		{Path: "d", Pre: &Image{Unhashed: "new/12/1", Size: 3}},
	}}}), '\n')
	for _, want := range []map[string]bool{
		{"1/1": true, "1/2": true, "12/1": true, "12/2": true},
		{"1/1": true, "1/2": true, "12/1": true, "13/1": true},
	} {
		got := namedIn(log, want)
		if !got["1/1"] || got["1/2"] || !got["12/1"] || got["12/2"] || got["13/1"] {
			t.Errorf("backups %v: named %v", want, got)
		}
		lines, _, whole := logLines(log, want)
		read := 0
		for _, l := range lines {
			read += len(l)
		}
		if want["13/1"] != whole || whole != (read == len(log)) {
			t.Errorf("backups %v: %d of the log's %d bytes read (whole: %v)", want, read, len(log), whole)
		}
	}
}

// TestDropReadsHeadsOnly: the prune that drops operations by the count
// reads them but for their files and keeps the others whole; their
// backups go with the sweeps that follow.
func TestDropReadsHeadsOnly(t *testing.T) {
	s := open(t, Limits{Count: 2})
	s.pruneEvery = 1000
	src := t.TempDir()
	for i := 1; i <= 4; i++ {
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		var files []FileChange
		for j := 1; j <= 3; j++ {
			p := filepath.Join(src, fmt.Sprint(i, "-", j))
			os.WriteFile(p, []byte(p), 0o600)
			im, err := o.LinkNew(int64(len(p)), func(to string) error { return os.Link(p, to) })
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, FileChange{Path: fmt.Sprint("f", j), Pre: im})
		}
		if err := o.Prepare(&Entry{Command: "apply-patch", Files: files}); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := s.logBytes()
	drop := s.countDropped(data)
	if len(drop) != 2 || !drop[1] || !drop[2] {
		t.Fatalf("the count drops %v, want operations 1 and 2", drop)
	}
	l := parseLog(data, drop)
	if len(l.committed) != 4 || !l.committed[0].head || l.committed[0].Files != nil || l.committed[2].head || len(l.committed[2].Files) != 3 {
		t.Fatalf("read with heads only: %+v", l.committed)
	}
	if err := s.prune(nil); err != nil {
		t.Fatal(err)
	}
	list, skipped, err := s.List()
	if err != nil || len(skipped) > 0 || len(list) != 2 {
		t.Fatalf("after the prune: %d entries, %v %v", len(list), skipped, err)
	}
	readBack := func() {
		t.Helper()
		list, _, _ := s.List()
		for _, e := range list {
			for _, f := range e.Files {
				if data, err := s.Blob(f.Pre); err != nil || !strings.HasSuffix(string(data), fmt.Sprint(e.Seq, "-", f.Path[1:])) {
					t.Fatalf("operation %d's %s: %q %v", e.Seq, f.Path, data, err)
				}
			}
		}
	}
	readBack()
	if st := summaryOf(s); !st.Dirty {
		t.Fatalf("after a prune that dropped operations the store is not marked for the sweeps: %+v", st)
	}
	// The dropped operations' backups are left to the sweeps: the store
	// is dirty, swept by the next prunes until a round finds nothing.
	dir := garbage(t, s, 5)
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	if err := s.prune(nil); err != nil {
		t.Fatal(err)
	}
	if st := summaryOf(s); count(dir) != 0 || !st.Dirty {
		t.Fatalf("the prune after: %d files left, %+v (want none, and the store still dirty: this round found some)", count(dir), st)
	}
	s.prune(nil) // (it finds the empty directories)
	// (The kept operations' backups were named by their hash when the log
	// was rewritten: their first names went too.)
	if left, _ := filepath.Glob(filepath.Join(s.dir, "blobs", "new", "*")); len(left) != 0 {
		t.Errorf("left in blobs/new: %v", left)
	}
	readBack()
	if st := summaryOf(s); st.Dirty {
		t.Fatalf("a round that found nothing left the store dirty: %+v", st)
	}
}

// TestSweepFollowsNoLink: a symbolic link put where an operation's
// directory or the store's directories are is not followed: the files it
// leads to stay.
func TestSweepFollowsNoLink(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1
	outside := t.TempDir()
	victim := filepath.Join(outside, "1")
	os.WriteFile(victim, []byte("not the history's\n"), 0o600)
	os.MkdirAll(filepath.Join(s.dir, "blobs", "new"), 0o700)
	if err := os.Symlink(outside, filepath.Join(s.dir, "blobs", "new", "7")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.dir, "blobs", "ab")); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	for i := 0; i < sweepRounds; i++ {
		if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("a file a link in the store led to: %v", err)
	}
}

// FuzzNamedIn: every blob file an entry of the log names, as parseLog
// reads it (the hashed records applied), is named for the sweep — on any
// log whose backups are their own operations' (LinkNew's names), whatever
// else its lines hold — and it never panics.
func FuzzNamedIn(f *testing.F) {
	h := strings.Repeat("ab", 32)
	var log []byte
	for _, r := range []record{
		{Seq: 1, Entry: &Entry{ID: "1", Seq: 1, Command: "apply-patch", Files: []FileChange{
			{Path: "a", Pre: &Image{Unhashed: "new/1/1", Size: 3}, Post: &Image{Hash: h}},
			{Path: "b", Pre: &Image{Unhashed: "new/1/2", Size: 3}},
		}}},
		{Seq: 1, Commit: true},
		{Seq: 1, Hashed: map[string]string{"new/1/2": h}},
		{Seq: 2, Entry: &Entry{ID: "2", Seq: 2, Command: "edit", Files: []FileChange{{Path: "c", Pre: &Image{Hash: h, Size: 300000}}}}},
		{Seq: 2, Commit: true},
	} {
		log = append(appendRecord(log, r), '\n')
	}
	f.Add(log, false)
	f.Add(log, true)
	f.Add([]byte(`{"seq":3,"entry":{"id":"3","seq":3,"time":"2026-11-27T00:00:00Z","command":"x","files":[{"path":"p","pre":{"unhashed": "new/3/1","size":1}}]}}`+"\n"+`{"seq":3,"commit":true}`+"\n"), false)
	f.Fuzz(func(t *testing.T, log []byte, hashes bool) {
		l := parseLog(log, nil)
		want := map[string]bool{}
		for _, e := range append(l.committed, l.open...) {
			for _, im := range images(e) {
				switch {
				case im.Unhashed != "":
					k := strings.TrimPrefix(im.Unhashed, "new/")
					if s, _, _ := strings.Cut(strings.ReplaceAll(k, "-", "/"), "/"); s != fmt.Sprint(e.Seq) {
						return // (not a log hunk writes: a backup is its own operation's)
					}
					want[k] = true
				case hashes && im.Pack == "":
					want[im.Hash] = true
				}
			}
		}
		used := namedIn(log, want)
		for k := range want {
			if !used[k] {
				t.Fatalf("%q is named by an entry but not for the sweep (log %q)", k, log)
			}
		}
	})
}

// TestSweepReadsFewDirectories: a step reads a few dozen of the hashes'
// 256 directories, not all of them, and the next steps go on.
func TestSweepReadsFewDirectories(t *testing.T) {
	s := open(t, Limits{})
	for i := 0; i < 256; i++ {
		h := fmt.Sprintf("%02x", i) + strings.Repeat("0", 62)
		os.MkdirAll(filepath.Dir(s.blobPath(h)), 0o700)
		os.WriteFile(s.blobPath(h), []byte("x"), 0o600)
	}
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	left := func() int {
		m, _ := filepath.Glob(filepath.Join(s.dir, "blobs", "??", "*"))
		return len(m)
	}
	st := s.sweepFrom(sweepState{Dirty: true})
	if got := 256 - left(); got == 0 || got > sweepNames/dirCost || st.Cursor == "" {
		t.Fatalf("one step removed %d of 256 files in as many directories (cursor %q), want a few dozen", got, st.Cursor)
	}
	for i := 0; i < 20 && st.Cursor != ""; i++ {
		st = s.sweepFrom(st)
	}
	if left() != 0 || st.Cursor != "" {
		t.Fatalf("%d files left after the round (cursor %q)", left(), st.Cursor)
	}
}

// summaryOf is s's sweep state as the summary keeps it.
func summaryOf(s *Store) sweepState {
	sum, _ := s.readSummary()
	return sum.sweepState
}
