package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func txnTree(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	for name, c := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o640); err != nil {
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

func listing(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		b, _ := os.ReadFile(p)
		out = append(out, rel+"="+string(b)+" "+fi.Mode().String())
		return nil
	})
	return strings.Join(out, "\n")
}

func TestTxnCommit(t *testing.T) {
	w, dir := txnTree(t)
	tx := w.begin(nil, nil)
	for _, err := range []error{
		tx.Stage("a.txt", []byte("A\n"), WriteOptions{}),
		tx.Stage("new/dir/n.txt", []byte("N\n"), WriteOptions{}),
		tx.Remove("c.txt"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := "a.txt=A\n -rw-r-----\nb.txt=b\n -rw-r-----\nnew/\nnew/dir/\nnew/dir/n.txt=N\n -rw-r--r--"
	if got := listing(t, dir); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTxnRollback fails every step of a commit in turn: each time, every
// file is as before and nothing is left behind.
func TestTxnRollback(t *testing.T) {
	for step := 1; step <= 4; step++ {
		w, dir := txnTree(t)
		before := listing(t, dir)
		tx := w.begin(nil, nil)
		tx.failAt = step
		for _, err := range []error{
			tx.Stage("a.txt", []byte("A\n"), WriteOptions{}),
			tx.Stage("new/dir/n.txt", []byte("N\n"), WriteOptions{}),
			tx.Remove("c.txt"),
			tx.Stage("b.txt", []byte("B\n"), WriteOptions{}),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err == nil {
			t.Fatalf("step %d: commit succeeded", step)
		}
		if got := listing(t, dir); got != before {
			t.Errorf("step %d: after rollback\n%s\nwant\n%s", step, got, before)
		}
	}
}

func TestTxnAbort(t *testing.T) {
	w, dir := txnTree(t)
	before := listing(t, dir)
	tx := w.begin(nil, nil)
	if err := tx.Stage("x/y/z.txt", []byte("z"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	if got := listing(t, dir); got != before {
		t.Errorf("after abort\n%s\nwant\n%s", got, before)
	}
}

// TestTxnRealFailure makes a removal fail for real (the directory holding
// the file is made read-only after staging; root ignores permissions, so
// the directory is replaced by a file instead).
func TestTxnRealFailure(t *testing.T) {
	w, dir := txnTree(t)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sub", "s.txt"), []byte("s\n"), 0o644)
	before := listing(t, dir)
	tx := w.begin(nil, nil)
	if err := tx.Stage("a.txt", []byte("A\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Stage("sub/s.txt", []byte("S\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Sabotage: the staged temporary file of sub/s.txt vanishes.
	ents, _ := os.ReadDir(filepath.Join(dir, "sub"))
	for _, e := range ents {
		if IsTemp(e.Name()) {
			os.Remove(filepath.Join(dir, "sub", e.Name()))
		}
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("commit succeeded")
	}
	if got := listing(t, dir); got != before {
		t.Errorf("after failed commit\n%s\nwant\n%s", got, before)
	}
}
