package undo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// tree is a workspace made in a temporary directory, its history in a
// temporary state directory.
type tree struct {
	t   *testing.T
	dir string
	ws  *workspace.Workspace
}

func newTree(t *testing.T, files map[string]string) *tree {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &tree{t: t, dir: dir, ws: ws}
}

// do records change as one operation, as an engine makes it, and returns
// its id.
func (tr *tree) do(change func(fsys workspace.FS) error) string {
	tr.t.Helper()
	rec := &workspace.Recording{Command: "test", Session: "s1", Tool: true}
	fsys := workspace.Recorded(workspace.Disk(tr.ws), rec)
	defer fsys.Done()
	if err := change(fsys); err != nil {
		tr.t.Fatal(err)
	}
	if rec.ID == "" {
		tr.t.Fatal("the change was not recorded")
	}
	return rec.ID
}

// stage is a change that commits one transaction.
func stage(f func(txn workspace.Txn) error) func(workspace.FS) error {
	return func(fsys workspace.FS) error {
		txn := fsys.Begin()
		if err := f(txn); err != nil {
			txn.Abort()
			return err
		}
		return txn.Commit()
	}
}

// undo takes back what c names, as ops does: through a Restoring FS (a dry
// run over one), recorded as an undo.
func (tr *tree) undo(c Choice, opt Options) (*Result, error) {
	tr.t.Helper()
	store, err := tr.ws.History()
	if err != nil {
		tr.t.Fatal(err)
	}
	list, _, err := store.List()
	if err != nil {
		tr.t.Fatal(err)
	}
	chosen, err := Choose(store, list, c)
	if err != nil {
		return nil, err
	}
	var fsys workspace.FS
	if opt.DryRun {
		fsys = workspace.DryRun(workspace.Restoring(tr.ws, nil))
	} else {
		fsys = workspace.Restoring(tr.ws, &workspace.Recording{Command: "undo", Undoes: strings.Join(IDs(chosen), ",")})
	}
	defer fsys.Done()
	return Run(tr.ws, fsys, store, chosen, opt)
}

// snapshot is every entry of the tree: a file's content and mode, a link's
// target, a directory.
func (tr *tree) snapshot() map[string]string {
	tr.t.Helper()
	out := map[string]string{}
	err := filepath.Walk(tr.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == tr.dir {
			return err
		}
		rel, _ := filepath.Rel(tr.dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			out[rel] = "-> " + t
		case fi.IsDir():
			out[rel] = "dir"
		default:
			data, _ := os.ReadFile(p)
			out[rel] = fi.Mode().Perm().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		tr.t.Fatal(err)
	}
	return out
}

func (tr *tree) same(want map[string]string) {
	tr.t.Helper()
	if got := tr.snapshot(); !reflect.DeepEqual(got, want) {
		tr.t.Errorf("tree:\n got %v\nwant %v", got, want)
	}
}

func TestUndoEveryKind(t *testing.T) {
	tr := newTree(t, map[string]string{"mod.txt": "one\n", "gone.txt": "bye\n", "link": ""})
	os.Remove(filepath.Join(tr.dir, "link"))
	if err := os.Symlink("mod.txt", filepath.Join(tr.dir, "link")); err != nil {
		t.Fatal(err)
	}
	before := tr.snapshot()
	tr.do(stage(func(txn workspace.Txn) error {
		for _, err := range []error{
			txn.Stage("mod.txt", []byte("two\n"), workspace.WriteOptions{Perm: 0o755, ForcePerm: true}),
			txn.Stage("new/made.txt", []byte("new\n"), workspace.WriteOptions{}),
			txn.Remove("gone.txt"),
			txn.StageLink("link", "gone.txt"),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}))
	if tr.snapshot()["mod.txt"] != "-rwxr-xr-x two\n" {
		t.Fatalf("the operation did not land: %v", tr.snapshot())
	}
	res, err := tr.undo(Choice{}, Options{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	tr.same(before)
	if want := []string{"gone.txt"}; !reflect.DeepEqual(res.Added, want) {
		t.Errorf("added %v, want %v", res.Added, want)
	}
	if want := []string{"link", "mod.txt"}; !reflect.DeepEqual(res.Modified, want) {
		t.Errorf("modified %v, want %v", res.Modified, want)
	}
	if want := []string{"new/made.txt", "new/"}; !reflect.DeepEqual(res.Deleted, want) {
		t.Errorf("deleted %v, want %v (the file, then the directory made for it)", res.Deleted, want)
	}
	for _, want := range []string{"--- a/mod.txt\n+++ b/mod.txt\n", "-two\n+one\n", "--- a/new/made.txt\n+++ /dev/null\n", "--- /dev/null\n+++ b/gone.txt\n"} {
		if !strings.Contains(res.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, res.Diff)
		}
	}
}

func TestUndoStale(t *testing.T) {
	tr := newTree(t, map[string]string{"a.txt": "one\n"})
	id := tr.do(stage(func(txn workspace.Txn) error { return txn.Stage("a.txt", []byte("two\n"), workspace.WriteOptions{}) }))
	if err := os.WriteFile(filepath.Join(tr.dir, "a.txt"), []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := tr.snapshot()
	_, err := tr.undo(Choice{ID: id}, Options{})
	if e := result.As(err); e == nil || e.Code != result.Stale || !strings.Contains(e.Msg, "a.txt (now sha256 ") {
		t.Fatalf("got %v, want STALE naming a.txt and its hashes", err)
	}
	tr.same(changed)
	res, err := tr.undo(Choice{ID: id}, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Forced) != 1 || !strings.HasPrefix(res.Forced[0], "a.txt (") {
		t.Errorf("forced %v, want a.txt", res.Forced)
	}
	tr.same(map[string]string{"a.txt": "-rw-r--r-- one\n"})
	// The forced undo kept what it overwrote: undoing it brings it back.
	store, _ := tr.ws.History()
	list, _, _ := store.List()
	if list[0].Undoes != id {
		t.Fatalf("the newest operation is %+v, not the undo of %s", list[0], id)
	}
	if _, err := tr.undo(Choice{ID: list[0].ID}, Options{}); err != nil {
		t.Fatal(err)
	}
	tr.same(changed)
}

func TestUndoDryRunWritesNothing(t *testing.T) {
	tr := newTree(t, map[string]string{"a.txt": "one\n"})
	tr.do(stage(func(txn workspace.Txn) error {
		if err := txn.Stage("a.txt", []byte("two\n"), workspace.WriteOptions{}); err != nil {
			return err
		}
		return txn.Stage("d/b.txt", []byte("b\n"), workspace.WriteOptions{})
	}))
	after := tr.snapshot()
	res, err := tr.undo(Choice{}, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	tr.same(after)
	if !reflect.DeepEqual(res.Modified, []string{"a.txt"}) || !reflect.DeepEqual(res.Deleted, []string{"d/b.txt"}) {
		t.Errorf("a dry run says %+v", res)
	}
	store, _ := tr.ws.History()
	list, _, _ := store.List()
	if len(list) != 1 {
		t.Errorf("a dry run recorded an operation: %d in the history", len(list))
	}
}

func TestUndoMadeDirectories(t *testing.T) {
	tr := newTree(t, map[string]string{"keep.txt": "k\n"})
	before := tr.snapshot()
	tr.do(func(fsys workspace.FS) error { return fsys.MkdirAll("a/b/c") })
	if tr.snapshot()["a/b/c"] != "dir" {
		t.Fatal("MkdirAll made nothing")
	}
	res, err := tr.undo(Choice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr.same(before)
	if want := []string{"a/b/c/", "a/b/", "a/"}; !reflect.DeepEqual(res.Deleted, want) {
		t.Errorf("deleted %v, want %v", res.Deleted, want)
	}
	// A directory the operation made that holds a file now stays.
	tr.do(func(fsys workspace.FS) error { return fsys.MkdirAll("x/y") })
	if err := os.WriteFile(filepath.Join(tr.dir, "x", "mine.txt"), []byte("m"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = tr.undo(Choice{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x/y/"}; !reflect.DeepEqual(res.Deleted, want) {
		t.Errorf("deleted %v, want %v (x holds a file)", res.Deleted, want)
	}
}

func TestUndoMove(t *testing.T) {
	tr := newTree(t, map[string]string{"a.txt": "a\n"})
	before := tr.snapshot()
	id := tr.do(func(fsys workspace.FS) error { return fsys.Move("a.txt", "b.txt") })
	res, err := tr.undo(Choice{ID: id}, Options{DryRun: true})
	if err != nil || res.Moved == nil || res.Moved.From != "a.txt" {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(tr.dir, "b.txt")); err != nil {
		t.Fatal("a dry run moved the file back")
	}
	if err := os.WriteFile(filepath.Join(tr.dir, "a.txt"), []byte("again"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.undo(Choice{ID: id}, Options{}); result.As(err) == nil || result.As(err).Code != result.AlreadyExists {
		t.Fatalf("got %v, want ALREADY_EXISTS: a.txt took the old place", err)
	}
	os.Remove(filepath.Join(tr.dir, "a.txt"))
	if _, err := tr.undo(Choice{ID: id}, Options{}); err != nil {
		t.Fatal(err)
	}
	tr.same(before)
}

// A command replaced a directory the operation wrote in by a link
// elsewhere: the undo refuses, and writes nothing through the link.
func TestUndoPlantedLinkRefused(t *testing.T) {
	tr := newTree(t, map[string]string{"sub/f": "mine\n", "hooks/keep": "k\n"})
	tr.do(stage(func(txn workspace.Txn) error { return txn.Remove("sub/f") }))
	if err := os.Remove(filepath.Join(tr.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hooks", filepath.Join(tr.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	planted := tr.snapshot()
	for _, force := range []bool{false, true} {
		_, err := tr.undo(Choice{}, Options{Force: force})
		if err == nil {
			t.Fatalf("force %v: the undo wrote through a planted link", force)
		}
		tr.same(planted)
	}
}

func TestUndoModeOnly(t *testing.T) {
	tr := newTree(t, map[string]string{"run.sh": "echo\n"})
	before := tr.snapshot()
	tr.do(stage(func(txn workspace.Txn) error {
		return txn.Stage("run.sh", []byte("echo\n"), workspace.WriteOptions{Perm: 0o755, ForcePerm: true})
	}))
	if _, err := tr.undo(Choice{}, Options{}); err != nil {
		t.Fatal(err)
	}
	tr.same(before)
}

func TestChoose(t *testing.T) {
	tr := newTree(t, map[string]string{"a": "1", "b": "1"})
	write := func(name, data string) string {
		return tr.do(stage(func(txn workspace.Txn) error { return txn.Stage(name, []byte(data), workspace.WriteOptions{}) }))
	}
	a2, b2, a3 := write("a", "2"), write("b", "2"), write("a", "3")
	store, _ := tr.ws.History()
	list, _, _ := store.List()
	ids := func(c Choice) ([]string, error) {
		es, err := Choose(store, list, c)
		return IDs(es), err
	}
	for _, tc := range []struct {
		c    Choice
		want []string
	}{
		{Choice{}, []string{a3}},
		{Choice{N: 2}, []string{a3, b2}},
		{Choice{Path: "b"}, []string{b2}},
		{Choice{Session: "s1"}, []string{a3, b2, a2}},
		{Choice{ID: a2[:6]}, []string{a2}},
		{Choice{OwnOnly: true, Own: "s1"}, []string{a3}},
	} {
		got, err := ids(tc.c)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %v, %v; want %v", tc.c, got, err, tc.want)
		}
	}
	for _, c := range []Choice{
		{ID: a2, N: 1},                     // two ways
		{N: -1},                            // no count
		{OwnOnly: true, Own: "s2"},         // another session's
		{ID: a2, OwnOnly: true, Own: "s2"}, // another session's, by id
		{Session: "nope"},
	} {
		if got, err := ids(c); err == nil {
			t.Errorf("%+v: chose %v", c, got)
		}
	}
	// Undone operations are skipped, and named by id they are refused.
	if _, err := tr.undo(Choice{}, Options{}); err != nil {
		t.Fatal(err)
	}
	list, _, _ = store.List()
	if got, _ := ids(Choice{}); !reflect.DeepEqual(got, []string{b2}) {
		t.Errorf("after an undo the newest is %v, want %v", got, b2)
	}
	if _, err := Choose(store, list, Choice{ID: a3}); result.As(err) == nil || result.As(err).Code != result.Stale {
		t.Errorf("an undone id: %v, want STALE", err)
	}
}

func TestCheckPath(t *testing.T) {
	tr := newTree(t, nil)
	for _, name := range []string{"", "..", "../x", "/etc/passwd", ".git/hooks/pre-commit", "a/.GIT/config"} {
		if err := CheckPath(tr.ws, name); err == nil {
			t.Errorf("%q was taken", name)
		}
	}
	if err := CheckPath(tr.ws, "src/a.go"); err != nil {
		t.Error(err)
	}
}

// TestUndoKeep: a rollback (Keep) takes exactly the operations it names
// back, oldest first, and leaves a file changed since as it is, named —
// the rest restored; without Keep the same undo is refused.
func TestUndoKeep(t *testing.T) {
	tr := newTree(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	first := tr.do(stage(func(txn workspace.Txn) error {
		if err := txn.Stage("a.txt", []byte("two\n"), workspace.WriteOptions{}); err != nil {
			return err
		}
		return txn.Stage("b.txt", []byte("bee two\n"), workspace.WriteOptions{})
	}))
	second := tr.do(stage(func(txn workspace.Txn) error {
		return txn.Stage("c/new.txt", []byte("new\n"), workspace.WriteOptions{})
	}))
	if err := os.WriteFile(filepath.Join(tr.dir, "b.txt"), []byte("a person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.undo(Choice{IDs: []string{first, second}}, Options{}); result.As(err) == nil || result.As(err).Code != result.Stale {
		t.Fatalf("without Keep: %v, want STALE", err)
	}
	res, err := tr.undo(Choice{IDs: []string{first, second}}, Options{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 1 || !strings.HasPrefix(res.Kept[0], "b.txt (") {
		t.Errorf("kept %v, want b.txt", res.Kept)
	}
	tr.same(map[string]string{"a.txt": "-rw-r--r-- one\n", "b.txt": "-rw-r--r-- a person's\n"})
}
