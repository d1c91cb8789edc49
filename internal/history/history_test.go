package history

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, l Limits) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "h"), l)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordList: entries come back newest first with their files, and
// blobs are stored once and checked when read.
func TestRecordList(t *testing.T) {
	s := open(t, Limits{})
	a, _ := s.Put([]byte("old\n"))
	b, _ := s.Put([]byte("new\n"))
	if a2, _ := s.Put([]byte("old\n")); a2 != a {
		t.Fatal("the same content gave another blob")
	}
	for i, c := range []string{"write", "edit", "apply-patch"} {
		e := &Entry{Command: c, Files: []FileChange{{Path: "f.txt", Pre: &Image{Hash: a, Mode: 0o644}, Post: &Image{Hash: b, Mode: 0o644}}}}
		if err := s.Record(e); err != nil {
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
	if data, err := s.Blob(a); err != nil || string(data) != "old\n" {
		t.Fatalf("Blob: %q %v", data, err)
	}
	// A damaged blob is refused, never handed back.
	if err := os.WriteFile(s.blobPath(b), []byte("xxx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(b); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged blob read: %v", err)
	}
}

// TestDamagedEntries: a file that is not an entry is reported by List and
// left alone; the others are listed.
func TestDamagedEntries(t *testing.T) {
	s := open(t, Limits{Count: 5})
	if err := s.Record(&Entry{Command: "write"}); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(s.dir, "entries", "000000000002-zzzz.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(&Entry{Command: "edit"}); err != nil {
		t.Fatal(err)
	}
	list, skipped, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || len(skipped) != 1 || !strings.Contains(skipped[0], "000000000002-zzzz.json") {
		t.Fatalf("list %d, skipped %v", len(list), skipped)
	}
	if list[0].Seq != 3 {
		t.Fatalf("the entry after a damaged one got seq %d, want 3", list[0].Seq)
	}
}

// TestRetention: the newest entries within the count, the age and the
// size are kept, the newest always; blobs no entry names go (but fresh
// ones, which an operation may be about to name).
func TestRetention(t *testing.T) {
	now := time.Now()
	s := open(t, Limits{Count: 3, Bytes: 1000, Age: time.Hour})
	s.now = func() time.Time { return now }
	s.pruneEvery = 1 // every limit at every operation
	put := func(n int) string {
		h, err := s.Put([]byte(strings.Repeat("x", n)))
		if err != nil {
			t.Fatal(err)
		}
		old := now.Add(-time.Hour)
		os.Chtimes(s.blobPath(h), old, old)
		return h
	}
	rec := func(at time.Time, h string) {
		if err := s.Record(&Entry{Command: "write", Time: at, Files: []FileChange{{Path: "f", Post: &Image{Hash: h}}}}); err != nil {
			t.Fatal(err)
		}
	}
	first := put(10)
	rec(now.Add(-2*time.Hour), first) // too old once others come
	for i := 0; i < 4; i++ {
		rec(now, put(20+i))
	}
	list, _, _ := s.List()
	if len(list) != 3 {
		t.Fatalf("kept %d entries, want 3 (count)", len(list))
	}
	if _, err := os.Stat(s.blobPath(first)); err == nil {
		t.Fatal("the blob of a pruned entry is still there")
	}
	// Size: one big blob pushes the older entries out, but the newest stays.
	rec(now, put(900))
	rec(now, put(950))
	list, _, _ = s.List()
	if len(list) != 1 {
		t.Fatalf("kept %d entries over the size limit, want the newest only", len(list))
	}
	// A fresh blob nobody names yet is kept.
	fresh, _ := s.Put([]byte("fresh"))
	rec(now, put(5))
	if _, err := os.Stat(s.blobPath(fresh)); err != nil {
		t.Fatal("a fresh blob was swept")
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
