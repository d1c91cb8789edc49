package history

import (
	"encoding/json"
	"io/fs"
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
			Undoes: "a,b", Files: []FileChange{
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
