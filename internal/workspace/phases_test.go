package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// tradeTree is a tree where a directory d holds d/e/f and d/g, and x is a
// file: the transaction of tradePlaces makes d a file and x a directory.
func tradeTree(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	for name, c := range map[string]string{"d/e/f": "f\n", "d/g": "g\n", "x": "x\n", "keep": "k\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

// tradePlaces stages, in the order git's diff names them, the new file d
// before the removals of d's files, and x/y/z before x's removal.
func tradePlaces(t *testing.T, tx *diskTxn) {
	t.Helper()
	for _, err := range []error{
		tx.Stage("d", []byte("D\n"), WriteOptions{ReplaceDir: true}),
		tx.Remove("d/e/f"),
		tx.Remove("d/g"),
		tx.Stage("x/y/z", []byte("Z\n"), WriteOptions{}),
		tx.Remove("x"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTxnTradePlaces(t *testing.T) {
	w, dir := tradeTree(t)
	tx := w.begin(nil, nil)
	tradePlaces(t, tx)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := "d=D\n -rw-r--r--\nkeep=k\n -rw-r--r--\nx/\nx/y/\nx/y/z=Z\n -rw-r--r--"
	if got := listing(t, dir); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTxnTradePlacesRollback fails every step of the commit in turn: each
// time the tree is as before, nothing left behind.
func TestTxnTradePlacesRollback(t *testing.T) {
	for step := 1; step <= 5; step++ {
		w, dir := tradeTree(t)
		before := listing(t, dir)
		tx := w.begin(nil, nil)
		tx.failAt = step
		tradePlaces(t, tx)
		if err := tx.Commit(); err == nil {
			t.Fatalf("step %d: commit succeeded", step)
		}
		if got := listing(t, dir); got != before {
			t.Errorf("step %d: after rollback\n%s\nwant\n%s", step, got, before)
		}
	}
}

// TestTxnReplaceDirKeepsFiles: a directory that still holds a file the
// transaction does not remove is never put aside; nothing changes.
func TestTxnReplaceDirKeepsFiles(t *testing.T) {
	w, dir := tradeTree(t)
	before := listing(t, dir)
	tx := w.begin(nil, nil)
	if err := tx.Stage("d", []byte("D\n"), WriteOptions{ReplaceDir: true}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Remove("d/g"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("commit succeeded over d/e/f")
	}
	if got := listing(t, dir); got != before {
		t.Errorf("after the refusal\n%s\nwant\n%s", got, before)
	}
}

// TestTxnLaterNeedsRemoval: a file staged under a file the transaction
// does not remove is refused at commit; nothing changes.
func TestTxnLaterNeedsRemoval(t *testing.T) {
	w, dir := tradeTree(t)
	before := listing(t, dir)
	tx := w.begin(nil, nil)
	if err := tx.Stage("x/y", []byte("Y\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("commit succeeded under the file x")
	}
	if got := listing(t, dir); got != before {
		t.Errorf("after the refusal\n%s\nwant\n%s", got, before)
	}
}

// TestTxnTradePlacesRecovered kills the commit at every step in turn (the
// steps of a phase run two at a time, so some of the others are done):
// the next hunk to open the workspace finds the journal and puts the tree
// back as it was, nothing left behind.
func TestTxnTradePlacesRecovered(t *testing.T) {
	for step := 1; step <= 5; step++ {
		state := t.TempDir()
		t.Setenv("XDG_STATE_HOME", state)
		w, dir := tradeTree(t)
		before := listing(t, dir)
		tx := w.begin(nil, nil)
		tx.crashAt = step
		tradePlaces(t, tx)
		if err := tx.Commit(); err == nil {
			t.Fatalf("step %d: commit succeeded", step)
		}
		tx.j.f.Close() // the process is gone: its journal stays
		// The journal of a process that is gone (pid 0 never is one).
		real, _ := filepath.EvalSymlinks(dir)
		base, rel := stateJournalDir(real)
		jdir := filepath.Join(append([]string{base}, rel...)...)
		ents, err := os.ReadDir(jdir)
		if err != nil || len(ents) != 1 {
			t.Fatalf("step %d: journals %v (%v), want one", step, ents, err)
		}
		must(t, os.Rename(filepath.Join(jdir, ents[0].Name()), filepath.Join(jdir, "0-dead.tmp")))
		w2, err := Open(dir, Options{})
		must(t, err)
		if len(w2.Refused) > 0 {
			t.Errorf("step %d: refused: %v", step, w2.Refused)
		}
		w2.Close()
		if got := listing(t, dir); got != before {
			t.Errorf("step %d: after recovery\n%s\nwant\n%s", step, got, before)
		}
	}
}
