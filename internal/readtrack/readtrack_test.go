package readtrack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestCheck: the STALE rules of read tracking, case by case.
func TestCheck(t *testing.T) {
	lines := func(change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= 20; i++ {
			l := "line " + string(rune('a'+i))
			if c, ok := change[i]; ok {
				l = c
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	read := lines(nil)
	for name, c := range map[string]struct {
		seen   bool   // the session read the file (as read)
		hashed bool   // ... but holds only its hash
		now    string // what the file holds now
		next   string // the change's result
		remove bool
		whole  bool
		stale  bool
	}{
		"never read, whole write":         {now: read, next: "x\n", whole: true, stale: true},
		"never read, edit":                {now: read, next: lines(map[int]string{3: "X"})},
		"unchanged since the read, whole": {seen: true, now: read, next: "x\n", whole: true},
		"changed since the read, whole":   {seen: true, now: lines(map[int]string{18: "P"}), next: "x\n", whole: true, stale: true},
		"changed far from the edit":       {seen: true, now: lines(map[int]string{18: "P"}), next: lines(map[int]string{18: "P", 3: "X"})},
		"changed beside the edit":         {seen: true, now: lines(map[int]string{5: "P"}), next: lines(map[int]string{5: "P", 3: "X"}), stale: true},
		"changed where the edit is":       {seen: true, now: lines(map[int]string{3: "P"}), next: lines(map[int]string{3: "X"}), stale: true},
		"changed, removal":                {seen: true, now: lines(map[int]string{18: "P"}), remove: true, stale: true},
		"hash only, changed far":          {seen: true, hashed: true, now: lines(map[int]string{18: "P"}), next: lines(map[int]string{18: "P", 3: "X"}), stale: true},
		"four lines away from the edit":   {seen: true, now: lines(map[int]string{7: "P"}), next: lines(map[int]string{7: "P", 3: "X"})},
		"three lines away from the edit":  {seen: true, now: lines(map[int]string{6: "P"}), next: lines(map[int]string{6: "P", 3: "X"}), stale: true},
		"a new file, never read, whole":   {now: "", next: "x\n", whole: true},
	} {
		dir := t.TempDir()
		if c.now != "" {
			os.WriteFile(filepath.Join(dir, "f"), []byte(c.now), 0o644)
		}
		ws, err := workspace.Open(dir, workspace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr := New()
		switch {
		case c.hashed:
			tr.SawHash("f", "0000")
		case c.seen:
			tr.Saw("f", []byte(read))
		}
		fsys := workspace.Disk(ws)
		known, err := tr.check(fsys, "f", []byte(c.next), c.remove, c.whole)
		if got := err != nil && result.As(err).Code == result.Stale; got != c.stale {
			t.Errorf("%s: STALE %v, want %v (%v)", name, got, c.stale, err)
		}
		if name == "changed far from the edit" && string(known) != lines(map[int]string{3: "X"}) {
			t.Errorf("%s: what the session knows after it is %q, not its read with its change", name, known)
		}
		fsys.Done()
		ws.Close()
	}
}

// TestTxnConcurrentStage: apply-patch plans a patch's files on several
// workers, each staging into the one transaction, so a session's guarded
// transaction takes stages and removals from many goroutines at once
// (before, hunk serve died of "concurrent map writes" on a patch of two
// files), and knows each file once committed.
func TestTxnConcurrentStage(t *testing.T) {
	dir := t.TempDir()
	const n = 64
	for i := range n {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("old\n"), 0o644)
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tr := New()
	fsys := FS(workspace.Disk(ws), tr, false, false)
	defer fsys.Done()
	txn := fsys.Begin()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("f%d", i)
			var err error
			if i%4 == 0 {
				err = txn.Remove(name)
			} else {
				err = txn.Stage(name, []byte("new "+name+"\n"), workspace.WriteOptions{})
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		_, known := tr.readContent(name)
		if want := i%4 != 0; known != want {
			t.Errorf("%s: the session knows it: %v, want %v", name, known, want)
		}
	}
}

// TestTxnStageParts: a binary patch's result is staged as parts, never
// joined: the session then knows the file by its hash, and a file that
// changed since the session read it is refused (STALE), unchanged.
func TestTxnStageParts(t *testing.T) {
	for _, changed := range []bool{false, true} {
		dir := t.TempDir()
		old := []byte("\x00old binary\x00")
		os.WriteFile(filepath.Join(dir, "z.bin"), old, 0o644)
		ws, err := workspace.Open(dir, workspace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr := New()
		tr.Saw("z.bin", old)
		if changed {
			os.WriteFile(filepath.Join(dir, "z.bin"), []byte("\x00someone else's\x00"), 0o644)
		}
		fsys := FS(workspace.Disk(ws), tr, false, false)
		txn := fsys.Begin()
		parts := [][]byte{old[:4], []byte("NEW"), old[4:]}
		err = txn.StageParts("z.bin", parts, workspace.WriteOptions{})
		if changed {
			if result.As(err).Code != result.Stale {
				t.Errorf("changed since the read: %v, want STALE", err)
			}
			txn.Abort()
			if b, _ := os.ReadFile(filepath.Join(dir, "z.bin")); string(b) != "\x00someone else's\x00" {
				t.Errorf("the refused file holds %q", b)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			if err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
			want := "\x00oldNEW binary\x00"
			if b, _ := os.ReadFile(filepath.Join(dir, "z.bin")); string(b) != want {
				t.Errorf("z.bin holds %q, want %q", b, want)
			}
			if s, ok := tr.readContent("z.bin"); !ok || s.hash != history.Hash([]byte(want)) {
				t.Errorf("the session knows z.bin as %+v, not by the hash of what it wrote", s)
			}
		}
		fsys.Done()
		ws.Close()
	}
}
