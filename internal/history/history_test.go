package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, l Limits) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "h"), l, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordList: entries come back newest first with their files, and
// contents are stored and checked when read.
func TestRecordList(t *testing.T) {
	s := open(t, Limits{})
	for i, c := range []string{"write", "edit", "apply-patch"} {
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		pre, err := o.Put([]byte("old " + c + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		e := &Entry{Command: c, Files: []FileChange{{Path: "f.txt", Pre: pre, Post: &Image{Hash: Hash([]byte("new\n"))}}}}
		if err := o.Prepare(e); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(i+1) || e.ID == "" || e.Time.IsZero() {
			t.Fatalf("recorded %+v", e)
		}
	}
	list, skipped, err := s.List()
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if len(list) != 3 || list[0].Command != "apply-patch" || list[2].Command != "write" {
		t.Fatalf("list: %+v", list)
	}
	got, err := s.Find(list[1].ID[:6])
	if err != nil || got.Command != "edit" {
		t.Fatalf("Find: %v %v", got, err)
	}
	pre := got.Files[0].Pre
	if data, err := s.Blob(pre); err != nil || string(data) != "old edit\n" {
		t.Fatalf("Blob: %q %v", data, err)
	}
	// Damaged content is refused, never handed back.
	gen, off, _ := strings.Cut(pre.Pack, ":")
	f, err := os.OpenFile(filepath.Join(s.dir, "pack."+gen), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var o int64
	for _, c := range off {
		o = o*10 + int64(c-'0')
	}
	f.WriteAt([]byte("X"), o)
	f.Close()
	if _, err := s.Blob(pre); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged content read: %v", err)
	}
	// An aborted operation is not listed.
	op, _ := s.Begin()
	op.Prepare(&Entry{Command: "write"})
	op.Abort()
	if list, _, _ := s.List(); len(list) != 3 {
		t.Fatalf("an aborted operation is listed: %d entries", len(list))
	}
}

// TestDamagedLog: a line that is not a record is reported by List and
// passed over; a line a killed hunk cut short is ended before the next.
func TestDamagedLog(t *testing.T) {
	s := open(t, Limits{Count: 5})
	if err := s.Record(&Entry{Command: "write"}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(s.dir, "log"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("{not json\n{\"seq\":2,\"entry\":{\"id\":\"cut")
	f.Close()
	if err := s.Record(&Entry{Command: "edit"}); err != nil {
		t.Fatal(err)
	}
	list, skipped, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || len(skipped) != 2 || !strings.Contains(skipped[0], "log line 3") {
		t.Fatalf("list %d, skipped %v", len(list), skipped)
	}
	if list[0].Command != "edit" || list[0].Seq != 2 {
		t.Fatalf("the entry after the damage: %+v", list[0])
	}
}

// TestSettle: an operation a killed hunk prepared and left open is
// committed by the next hunk when the tree holds its post-images, dropped
// otherwise.
func TestSettle(t *testing.T) {
	for _, holds := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "h")
		s, err := Open(dir, Limits{}, func(FileChange) bool { return holds })
		if err != nil {
			t.Fatal(err)
		}
		o, _ := s.Begin()
		e := &Entry{Command: "write", Files: []FileChange{{Path: "f", Post: &Image{Hash: Hash([]byte("x"))}}}}
		o.Prepare(e)
		o.unlock() // killed: the lock dies with the process, no outcome
		if err := s.Record(&Entry{Command: "edit"}); err != nil {
			t.Fatal(err)
		}
		list, _, _ := s.List()
		want := 1
		if holds {
			want = 2
		}
		if len(list) != want {
			t.Fatalf("the tree holds it: %v; %d entries listed, want %d", holds, len(list), want)
		}
		if holds && (len(s.Notes) != 1 || !strings.Contains(s.Notes[0], e.ID)) {
			t.Fatalf("notes: %v", s.Notes)
		}
	}
}

// TestRetention: the newest entries within the count, the age and the
// size are kept, the newest always; contents no entry names go (but blob
// files stored in the last minutes, which a session's reads may name).
func TestRetention(t *testing.T) {
	now := time.Now()
	s := open(t, Limits{Count: 3, Bytes: 1000, Age: time.Hour})
	s.now = func() time.Time { return now }
	s.pruneEvery = 1 // every limit at every operation
	rec := func(at time.Time, n int) *Entry {
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		pre, err := o.Put([]byte(strings.Repeat("x", n)))
		if err != nil {
			t.Fatal(err)
		}
		e := &Entry{Command: "write", Time: at, Files: []FileChange{{Path: "f", Pre: pre}}}
		if err := o.Prepare(e); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		return e
	}
	rec(now.Add(-2*time.Hour), 10) // too old once others come
	for i := 0; i < 4; i++ {
		rec(now, 20+i)
	}
	list, _, _ := s.List()
	if len(list) != 3 {
		t.Fatalf("kept %d entries, want 3 (count)", len(list))
	}
	for _, e := range list {
		if data, err := s.Blob(e.Files[0].Pre); err != nil || len(data) < 20 {
			t.Fatalf("a kept entry's content after the pack's rewrite: %d bytes, %v", len(data), err)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(s.dir, "pack.*"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	if fi, _ := os.Stat(packs[0]); fi.Size() != 21+22+23 {
		t.Fatalf("the pack holds %d bytes, want the three kept contents", fi.Size())
	}
	// Size: one big content pushes the older entries out, but the newest stays.
	rec(now, 900)
	big := rec(now, 950)
	list, _, _ = s.List()
	if len(list) != 1 || list[0].ID != big.ID {
		t.Fatalf("kept %d entries over the size limit, want the newest only", len(list))
	}
	// A large content is a blob file, swept once no entry names it (and it
	// is no longer fresh).
	large := rec(now, packMax+1)
	p := s.blobPath(large.Files[0].Pre.Hash)
	if _, err := os.Stat(p); err != nil {
		t.Fatal("a large content is not a blob file")
	}
	now = now.Add(11 * time.Minute) // (a file's change time cannot be set back: the clock goes on)
	rec(now, 5)
	rec(now, 6)
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the blob file of a pruned entry is still there")
	}
}

// TestConcurrentRecord: entries recorded at once get distinct, ordered
// sequence numbers.
func TestConcurrentRecord(t *testing.T) {
	s := open(t, Limits{})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Record(&Entry{Command: "write"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, _, _ := s.List()
	if len(list) != 20 {
		t.Fatalf("%d entries", len(list))
	}
	for i, e := range list {
		if e.Seq != int64(20-i) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
}

// TestLinkNewHashedByPrune: a backup linked in unhashed is read back as it
// is, and the prune names it by its hash (one copy of equal contents).
func TestLinkNewHashedByPrune(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 2
	src := filepath.Join(t.TempDir(), "backup")
	for i := 0; i < 2; i++ {
		os.WriteFile(src, []byte("same content\n"), 0o644)
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		im, err := o.LinkNew(13, func(to string) error { return os.Link(src, to) })
		if err != nil || im.Hash != "" || !im.Stored() {
			t.Fatalf("LinkNew: %+v %v", im, err)
		}
		os.Remove(src)
		if data, err := s.Blob(im); err != nil || string(data) != "same content\n" {
			t.Fatalf("an unhashed blob read back: %q %v", data, err)
		}
		if err := o.Prepare(&Entry{Command: "apply-patch", Files: []FileChange{{Path: "f", Pre: im}}}); err != nil {
			t.Fatal(err)
		}
		// Backups are hashed by a prune that reads the whole log (not one
		// that reads only the operations appended since the summary).
		os.Remove(s.summaryPath())
		if err := o.Commit(); err != nil { // the second prunes
			t.Fatal(err)
		}
	}
	list, _, _ := s.List()
	want := Hash([]byte("same content\n"))
	for _, e := range list {
		pre := e.Files[0].Pre
		if pre.Hash != want || pre.Unhashed != "" {
			t.Fatalf("after the prune: %+v", pre)
		}
		if data, err := s.Blob(pre); err != nil || string(data) != "same content\n" {
			t.Fatalf("a hashed blob read back: %q %v", data, err)
		}
	}
	// The unhashed names stay ten minutes (an undo that read the log
	// before the prune may want them), then go.
	if left, _ := filepath.Glob(filepath.Join(s.dir, "blobs", "new", "*")); len(left) != 2 {
		t.Fatalf("unhashed files right after the prune: %v", left)
	}
	// Every prune sweeps a slice of the store from where the last one
	// stopped: with this few files, within two prunes they are gone.
	s.now = func() time.Time { return time.Now().Add(11 * time.Minute) }
	s.pruneEvery = 1
	for i := 0; i < 2; i++ {
		if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(s.dir, "blobs", "new", "*")); len(left) != 0 {
		t.Fatalf("unhashed files left: %v", left)
	}
}

// TestBlobAfterPrune: an image read from the log (an undo choosing what to
// restore) stays readable when another operation's prune repacks the
// history before the content is read — a pack's content found by its hash
// where the log keeps it now, a backup not yet hashed kept by its name.
// Before, the undo failed NOT_FOUND ("pack.N: no such file") whenever
// another MCP session's operation pruned in between.
func TestBlobAfterPrune(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1000 // no prune before the undo reads the log
	o, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	packed, err := o.Put([]byte("small content\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "backup")
	os.WriteFile(src, []byte("a backup\n"), 0o644)
	linked, err := o.LinkNew(9, func(to string) error { return os.Link(src, to) })
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Prepare(&Entry{Command: "apply-patch", Files: []FileChange{{Path: "a", Pre: packed}, {Path: "b", Pre: linked}}}); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	list, _, _ := s.List()
	stale := list[0].Files // as an undo holds them
	if stale[1].Pre.Unhashed == "" {
		t.Fatal("the backup was hashed before the prunes: the test tests nothing")
	}
	s.pruneEvery = 1
	for i := 0; i < 3; i++ { // three prunes: every pack replaced, the backup hashed
		// An aborted operation before each: a prune rewrites only a log
		// that holds more than committed entries.
		a, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Prepare(&Entry{Command: "write", Files: []FileChange{{Path: "d"}}}); err != nil {
			t.Fatal(err)
		}
		a.Abort()
		if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "c"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if now, _, _ := s.List(); now[len(now)-1].Files[0].Pre.Pack == stale[0].Pre.Pack {
		t.Fatalf("the prunes did not repack (%s): the test tests nothing", stale[0].Pre.Pack)
	}
	for i, want := range []string{"small content\n", "a backup\n"} {
		if data, err := s.Blob(stale[i].Pre); err != nil || string(data) != want {
			t.Errorf("%s's content as read before the prunes: %q %v", stale[i].Path, data, err)
		}
	}
}

// TestPrivatePack: what a recorded command's scan stores is kept by the
// prune while its process lives, readable, and goes with DropPrivate; a
// dead process's private pack goes at the next prune.
func TestPrivatePack(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1
	o, err := s.BeginPrivate()
	if err != nil {
		t.Fatal(err)
	}
	im, err := o.Put([]byte("before the command\n"))
	if err != nil {
		t.Fatal(err)
	}
	o.Release()
	dead := filepath.Join(s.dir, "pack.x999999999n1")
	os.WriteFile(dead, []byte("x"), 0o600)
	if err := s.Record(&Entry{Command: "write"}); err != nil { // prunes
		t.Fatal(err)
	}
	if data, err := s.Blob(im); err != nil || string(data) != "before the command\n" {
		t.Fatalf("the live private pack after a prune: %q %v", data, err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Fatal("a dead process's private pack survived the prune")
	}
	o.DropPrivate()
	if _, err := s.Blob(im); err == nil {
		t.Fatal("the private pack is still there after DropPrivate")
	}
}

// TestPruneHashesInBatches: a prune hashes at most hashFiles backups, the
// oldest first; the others are read back by their names meanwhile, and
// later prunes hash them — no prune pays for thousands at once.
func TestPruneHashesInBatches(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1 // (a round that sweeps nothing: the operation's number, 1)
	dir := t.TempDir()
	o, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var files []FileChange
	for i := 0; i < hashFiles+10; i++ {
		src := filepath.Join(dir, fmt.Sprint(i))
		content := fmt.Sprintf("backup %d\n", i)
		os.WriteFile(src, []byte(content), 0o644)
		im, err := o.LinkNew(int64(len(content)), func(to string) error { return os.Link(src, to) })
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, FileChange{Path: fmt.Sprint(i), Pre: im})
	}
	if err := o.Prepare(&Entry{Command: "apply-patch", Files: files}); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	count := func() (hashed int) {
		list, _, _ := s.List()
		for i, f := range list[0].Files {
			if f.Pre.Unhashed == "" {
				hashed++
			}
			if b, err := s.Blob(f.Pre); err != nil || string(b) != fmt.Sprintf("backup %d\n", i) {
				t.Fatalf("file %d read back: %q %v", i, b, err)
			}
		}
		return hashed
	}
	// A prune that reads the whole log (no summary: made by an older hunk)
	// and rewrites nothing hashes hashFilesInPlace; one that rewrites (an
	// aborted operation in the log) hashFiles.
	prune := func() {
		t.Helper()
		os.Remove(s.summaryPath())
		if err := s.prune(nil); err != nil {
			t.Fatal(err)
		}
	}
	prune()
	if n := count(); n != hashFilesInPlace {
		t.Fatalf("a prune in place hashed %d backups, want %d", n, hashFilesInPlace)
	}
	a, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Prepare(&Entry{Command: "write", Files: []FileChange{{Path: "x"}}}); err != nil {
		t.Fatal(err)
	}
	a.Abort()
	prune()
	if n := count(); n != hashFilesInPlace+hashFiles {
		t.Fatalf("the prune that rewrote hashed %d backups, want %d", n-hashFilesInPlace, hashFiles)
	}
	for i := 0; i < 2; i++ {
		prune()
	}
	if n := count(); n != hashFiles+10 {
		t.Fatalf("four prunes hashed %d backups, want all %d", n, hashFiles+10)
	}
}

// TestCleanPruneRewritesNothing: a prune of a log holding only committed
// entries within the limits leaves the log and the pack as they are (the
// operation that meets it does not write the history again); one after an
// aborted operation rewrites the log without it.
func TestCleanPruneRewritesNothing(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1000
	for i := 0; i < 3; i++ {
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		im, err := o.Put([]byte(fmt.Sprintf("content %d\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Prepare(&Entry{Command: "write", Files: []FileChange{{Path: "f", Pre: im}}}); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(s.dir, "log")
	before, _ := os.ReadFile(log)
	packs, _ := filepath.Glob(filepath.Join(s.dir, "pack.*"))
	if err := s.prune(nil); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(log)
	packsAfter, _ := filepath.Glob(filepath.Join(s.dir, "pack.*"))
	if !bytes.Equal(before, after) || !slices.Equal(packs, packsAfter) {
		t.Fatalf("a clean prune rewrote the history:\n%s\n%v -> %v", after, packs, packsAfter)
	}
	o, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Prepare(&Entry{Command: "write", Files: []FileChange{{Path: "g"}}}); err != nil {
		t.Fatal(err)
	}
	o.Abort()
	if err := s.prune(nil); err != nil {
		t.Fatal(err)
	}
	after, _ = os.ReadFile(log)
	if n := bytes.Count(after, []byte("\n")); n != 6 || bytes.Contains(after, []byte(`"abort"`)) {
		t.Fatalf("the prune after an aborted operation left %d lines:\n%s", n, after)
	}
	list, _, _ := s.List()
	for i, e := range list {
		if b, err := s.Blob(e.Files[0].Pre); err != nil || string(b) != fmt.Sprintf("content %d\n", 2-i) {
			t.Fatalf("entry %d read back: %q %v", i, b, err)
		}
	}
}

// TestPruneFromTail: a prune after operations committed one after the
// other reads only what was appended since the last prune's summary (a
// damaged line before it is not seen); an aborted operation, a limit
// passed or a log another hunk rewrote makes it read the whole log again.
func TestPruneFromTail(t *testing.T) {
	s := open(t, Limits{Count: 4})
	s.pruneEvery = 1
	record := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: fmt.Sprint("f", i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	record(2)
	log := filepath.Join(s.dir, "log")
	b, _ := os.ReadFile(log)
	damaged := append([]byte("X"), b[1:]...) // line 1, its first byte: not a record any more
	os.WriteFile(log, damaged, 0o600)
	record(1)
	if now, _ := os.ReadFile(log); !bytes.HasPrefix(now, []byte("X")) {
		t.Fatal("the prune after one committed operation read the whole log (it rewrote the damaged line)")
	}
	record(2) // five operations, four kept: the limit passed, the whole log read and rewritten
	now, _ := os.ReadFile(log)
	if bytes.HasPrefix(now, []byte("X")) || bytes.Count(now, []byte("\n")) != 8 {
		t.Fatalf("over the limit, the prune left:\n%s", now)
	}
	// Another hunk rewrites the log (its own prune, which writes no
	// summary): the summary's end is not found, the whole log is read.
	lines := bytes.SplitAfter(now, []byte("\n"))
	other := append(append([]byte{}, bytes.Join(lines[2:], nil)...), lines[0]...)
	other = append(other, lines[1]...)
	os.WriteFile(log, append([]byte("X"), other[1:]...), 0o600)
	record(1)
	if now, _ := os.ReadFile(log); bytes.HasPrefix(now, []byte("X")) {
		t.Fatalf("a log rewritten since the summary was pruned from its tail:\n%s", now)
	}
}

// TestBigOperationAdvancesSummary: an operation of summaryFiles files or
// more brings the summary to the log's end when it commits, so that the
// next prune decodes none of its entry; a small one leaves it for the
// prune's tail read.
func TestBigOperationAdvancesSummary(t *testing.T) {
	s := open(t, Limits{})
	s.pruneEvery = 1000
	sumSize := func() int64 {
		var sum summary
		b, err := os.ReadFile(s.summaryPath())
		if err != nil || json.Unmarshal(b, &sum) != nil {
			t.Fatalf("no summary: %v", err)
		}
		return sum.Size
	}
	logSize := func() int64 {
		fi, err := os.Stat(filepath.Join(s.dir, "log"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if err := s.Record(&Entry{Command: "write", Files: []FileChange{{Path: "small"}}}); err != nil {
		t.Fatal(err)
	}
	if sumSize() != 0 {
		t.Fatalf("a one-file operation moved the summary to %d", sumSize())
	}
	var files []FileChange
	for i := 0; i < summaryFiles; i++ {
		files = append(files, FileChange{Path: fmt.Sprint("f", i), Pre: &Image{Hash: Hash([]byte{byte(i)}), Size: 1}})
	}
	if err := s.Record(&Entry{Command: "apply-patch", Files: files}); err != nil {
		t.Fatal(err)
	}
	if got, want := sumSize(), logSize(); got != want {
		t.Fatalf("after a %d-file operation the summary ends at %d, the log at %d", summaryFiles, got, want)
	}
	var sum summary
	b, _ := os.ReadFile(s.summaryPath())
	json.Unmarshal(b, &sum)
	if sum.Count != 2 || sum.Last != 2 || sum.Bytes != summaryFiles {
		t.Fatalf("summary %+v, want 2 operations, the last 2, %d bytes", sum, summaryFiles)
	}
}
