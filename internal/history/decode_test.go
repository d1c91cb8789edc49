package history

import (
	"encoding/json"
	"io/fs"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// TestDecodeMatchesJSON: every record appendRecord writes — strings with
// quotes, backslashes, control and HTML characters, invalid UTF-8, line
// separators, every optional field on and off — reads back through
// decodeRecord exactly as encoding/json reads it.
func TestDecodeMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewSource(38))
	alphabet := []string{"a", "z", "/", ".", " ", `"`, `\`, "\n", "\r", "\t", "\x01", "<", ">", "&", "é", "日", "\xff", "\u2028", "😀", "'"}
	str := func() string {
		s := ""
		for i := r.Intn(8); i > 0; i-- {
			s += alphabet[r.Intn(len(alphabet))]
		}
		return s
	}
	img := func() *Image {
		if r.Intn(3) == 0 {
			return nil
		}
		im := &Image{}
		if r.Intn(2) == 0 {
			im.Hash = Hash([]byte(str()))
		}
		if r.Intn(2) == 0 {
			im.Size = r.Int63n(1 << 40)
		}
		if r.Intn(2) == 0 {
			im.Pack = str()
		}
		if r.Intn(3) == 0 {
			im.Unhashed = str()
		}
		if r.Intn(2) == 0 {
			im.Mode = fs.FileMode(r.Uint32())
		}
		if r.Intn(3) == 0 {
			im.Link = str()
		}
		im.Dir = r.Intn(4) == 0
		return im
	}
	for n := 0; n < 3000; n++ {
		rec := record{Seq: r.Int63n(1 << 50), Commit: r.Intn(4) == 0, Abort: r.Intn(5) == 0}
		if r.Intn(2) == 0 {
			e := &Entry{ID: str(), Seq: r.Int63(), Time: time.Unix(r.Int63n(4e9), r.Int63n(1e9)).UTC(), Command: str(), Session: str(), Tool: r.Intn(2) == 0, Undoes: str(), Check: str()}
			if r.Intn(5) > 0 {
				e.Files = []FileChange{}
				for i := r.Intn(4); i > 0; i-- {
					e.Files = append(e.Files, FileChange{Path: str(), From: str(), Pre: img(), Post: img()})
				}
			}
			rec.Entry = e
		}
		line := appendRecord(nil, rec)
		var want record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("encoding/json cannot read %s: %v", line, err)
		}
		got, ok := decodeRecord(line, nil)
		if !ok {
			t.Fatalf("decodeRecord refused %s", line)
		}
		sameRecord(t, line, got, want)
	}
}

func sameRecord(t *testing.T, line []byte, got, want record) {
	t.Helper()
	if got.Entry != nil && want.Entry != nil {
		if !got.Entry.Time.Equal(want.Entry.Time) {
			t.Fatalf("%s: time %v, encoding/json %v", line, got.Entry.Time, want.Entry.Time)
		}
		got.Entry.Time = want.Entry.Time
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s:\ndecoded       %s\nencoding/json %s", line, g, w)
	}
}

// FuzzDecodeRecord: on any line decodeRecord either declines (encoding/json
// reads it) or reads what encoding/json reads — never a panic.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"seq":1,"entry":{"id":"0001ab","seq":1,"time":"2026-11-27T16:19:57.2Z","command":"edit","files":[{"path":"a\\"b","pre":{"hash":"x","size":3,"mode":420}}]}}`))
	f.Add([]byte(`{"seq":2,"commit":true}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := decodeRecord(line, nil)
		if !ok {
			return
		}
		var want record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("decodeRecord read what encoding/json refuses (%v): %q", err, line)
		}
		sameRecord(t, line, got, want)
	})
}
