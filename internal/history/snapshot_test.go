package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshot: a file's content kept by one recorded run is taken from
// the snapshot by the next while its stat is the same — not when its
// change time moved, nor when it changed within two seconds of the scan
// that stored it — and the pack is rewritten once it is mostly dead.
func TestSnapshot(t *testing.T) {
	s := open(t, Limits{})
	then := time.Now().Add(-time.Minute)
	begin := func() (*Op, *Snapshot) {
		o, err := s.BeginPrivate()
		if err != nil {
			t.Fatal(err)
		}
		return o, o.Snapshot()
	}
	o, sn := begin()
	for i, name := range []string{"a", "b", "empty"} {
		data := []byte(fmt.Sprintf("content %d\n", i))
		if name == "empty" {
			data = nil
		}
		if _, err := o.PutSnap(sn, name, data, uint64(i+1), then, then, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	racy := time.Now()
	if _, err := o.PutSnap(sn, "racy", []byte("racy\n"), 9, racy, racy, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := o.SaveSnapshot(sn, time.Now()); err != nil {
		t.Fatal(err)
	}
	o.Release()

	o, sn = begin()
	im, ok := sn.Unchanged("a", 1, 10, then, then, 0o644)
	if !ok {
		t.Fatal("an unchanged file is read again")
	}
	if b, err := s.Blob(im); err != nil || string(b) != "content 0\n" {
		t.Fatalf("its content from the snapshot: %q %v", b, err)
	}
	if im, ok := sn.Unchanged("empty", 3, 0, then, then, 0o644); !ok || im.Hash != emptyHash {
		t.Fatalf("an empty file: %+v %v", im, ok)
	}
	if _, ok := sn.Unchanged("b", 2, 10, then, then.Add(time.Second), 0o644); ok {
		t.Fatal("a file whose change time moved is taken as unchanged")
	}
	if _, ok := sn.Unchanged("b", 2, 10, then, then, 0o755); ok {
		t.Fatal("a file whose mode changed is taken as unchanged")
	}
	if _, ok := sn.Unchanged("racy", 9, 5, racy, racy, 0o644); ok {
		t.Fatal("a file changed within two seconds of its scan is taken as unchanged")
	}
	sn.Forget(func(name string) bool { return name != "b" })
	if _, ok := sn.Files["b"]; ok {
		t.Fatal("a file the scan did not find stays")
	}
	o.Release()

	// Mostly dead: rewritten as a new generation, the old one gone, every
	// live content read back from the new one.
	o, sn = begin()
	big := bytes.Repeat([]byte("x"), 33<<20)
	for i := 0; i < 3; i++ {
		big[0] = byte('0' + i)
		if _, err := o.PutSnap(sn, "big", big, 7, then, then, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.SaveSnapshot(sn, time.Now()); err != nil {
		t.Fatal(err)
	}
	o.Release()
	o, sn = begin()
	if err := o.CompactSnapshot(sn); err != nil {
		t.Fatal(err)
	}
	if sn.Gen != 2 {
		t.Fatalf("generation %d after the rewrite, want 2", sn.Gen)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "pack.s1")); err == nil {
		t.Fatal("the old generation stays")
	}
	for name, want := range map[string]string{"a": "content 0\n", "big": "2x"} {
		f := sn.Files[name]
		b, err := s.Blob(sn.image(f))
		if err != nil || !bytes.HasPrefix(b, []byte(want)) {
			t.Fatalf("%s after the rewrite: %.10q %v", name, b, err)
		}
	}
	o.Release()
	o, sn2 := begin()
	if sn2.Gen != 2 || len(sn2.Files) != len(sn.Files) {
		t.Fatalf("the index read back: gen %d, %d files", sn2.Gen, len(sn2.Files))
	}
	o.Release()
}
