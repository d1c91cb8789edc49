package history

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEncodeMatchesJSON: the hand-written records are byte for byte what
// encoding/json writes, and peekRecord reads their kind.
func TestEncodeMatchesJSON(t *testing.T) {
	when := time.Date(2026, 11, 26, 18, 2, 32, 179300903, time.UTC)
	for _, r := range []record{
		{Seq: 1, Commit: true},
		{Seq: 22, Abort: true},
		{Seq: 3, Entry: &Entry{ID: "0003ab", Seq: 3, Time: when, Command: "write", Files: nil}},
		{Seq: 4, Entry: &Entry{ID: "0004cd", Seq: 4, Time: when.In(time.FixedZone("x", 3600)), Command: "apply-patch", Session: "s<1>&\"\\",
			Undoes: "a,b", Check: "go test ./...", Files: []FileChange{
				{Path: "a\tb\nc\x01\u2028é\xff.txt", From: "old", Pre: &Image{Hash: Hash([]byte("x")), Size: 1, Pack: "2:10", Mode: 0o755 | fs.ModeSetuid}},
				{Path: "l", Post: &Image{Link: "../t"}},
				{Path: "u", Pre: &Image{Size: 7, Unhashed: "new/4-1", Mode: 0o644}},
				{Path: "d", Post: &Image{Dir: true}},
				{Path: "e", Pre: &Image{}, Post: &Image{Hash: emptyHash}},
			}}},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRecord(nil, r); string(got) != string(want) {
			t.Errorf("appendRecord:\n got %s\nwant %s", got, want)
		}
		seq, entry, ok := peekRecord(want)
		if !ok || seq != r.Seq || entry != (r.Entry != nil) {
			t.Errorf("peekRecord(%s) = %d, %v, %v", want, seq, entry, ok)
		}
	}
	for _, bad := range []string{`{"seq":0,"commit":true}`, `{"seq":1,"commit":false}`, `{"seq":x}`, `garbage`, `{"seq":5,"commit":true} `} {
		if _, _, ok := peekRecord([]byte(bad)); ok {
			t.Errorf("peekRecord(%s) took it for a record", bad)
		}
	}
}

// FuzzLog: any bytes where the log is — a damaged file, a planted one —
// are read without a panic, and an operation recorded after them is
// listed whole: the reader passes over what is not a record, the writer
// starts a fresh line.
func FuzzLog(f *testing.F) {
	f.Add([]byte(`{"seq":1,"entry":{"id":"a","seq":1,"time":"2026-11-26T00:00:00Z","command":"write","files":[]}}` + "\n" + `{"seq":1,"commit":true}` + "\n"))
	f.Add([]byte(`{"seq":7,"entry":{"id":"x","seq":7`))
	f.Add([]byte("{not json\n\n{\"seq\":99999999999999999999,\"commit\":true}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Open(filepath.Join(t.TempDir(), "h"), Limits{}, func(FileChange) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "log"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		before, _, _ := s.List()
		e := &Entry{Command: "fuzz", Files: []FileChange{{Path: "p", Post: &Image{Hash: emptyHash}}}}
		if err := s.Record(e); err != nil {
			t.Fatal(err)
		}
		list, _, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 || list[0].ID != e.ID || list[0].Command != "fuzz" || len(list[0].Files) != 1 {
			t.Fatalf("the operation recorded after %q is not listed first: %+v", data, list)
		}
		if len(list) > len(before)+1 {
			t.Fatalf("recording one operation listed %d more", len(list)-len(before))
		}
	})
}
