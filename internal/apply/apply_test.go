package apply

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// tree writes files (name -> content; "->target" makes a symlink) under a
// fresh directory and opens it as a workspace.
func tree(t *testing.T, files map[string]string) (*workspace.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir
}

// state reads every file under dir (symlinks as "->target").
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			st[rel] = "->" + t
		case fi.IsDir():
			st[rel+"/"] = ""
		default:
			b, _ := os.ReadFile(p)
			st[rel] = string(b)
		}
		return nil
	})
	return st
}

func upd(path, body string) *patchparse.FileOp {
	return &patchparse.FileOp{Kind: patchparse.Update, Path: path, Chunks: chunksOf(body)}
}

func add(path string, lines ...string) *patchparse.FileOp {
	return &patchparse.FileOp{Kind: patchparse.Add, Path: path, Content: lines}
}

func del(path string) *patchparse.FileOp {
	return &patchparse.FileOp{Kind: patchparse.Delete, Path: path}
}

func mv(path, to, body string) *patchparse.FileOp {
	f := upd(path, body)
	f.MoveTo = to
	if body == "" {
		f.Chunks = nil
	}
	return f
}

func patch(ops ...*patchparse.FileOp) *patchparse.Patch {
	return &patchparse.Patch{Format: patchparse.Codex, Files: ops}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		patch   *patchparse.Patch
		opt     Options
		want    map[string]string // nil: unchanged
		code    result.Code       // expected error
		summary string
	}{
		{
			name:    "add update delete",
			files:   map[string]string{"m.txt": "a\nb\n", "d.txt": "x\n"},
			patch:   patch(add("n/new.txt", "hi"), del("d.txt"), upd("m.txt", "@@\n-b\n+B\n")),
			want:    map[string]string{"m.txt": "a\nB\n", "n/": "", "n/new.txt": "hi\n"},
			summary: "Success. Updated the following files:\nA n/new.txt\nM m.txt\nD d.txt\n",
		},
		{
			name:  "failure in a later file changes nothing",
			files: map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"},
			patch: patch(upd("a.txt", "@@\n-a\n+A\n"), add("new/x.txt", "x"), del("c.txt"), upd("b.txt", "@@\n-nope\n+B\n")),
			code:  result.NoMatch,
		},
		{
			name:  "add refuses an existing file",
			files: map[string]string{"a.txt": "a\n"},
			patch: patch(add("a.txt", "b")),
			code:  result.AlreadyExists,
		},
		{
			name:  "add overwrites under compat codex",
			files: map[string]string{"a.txt": "a\n"},
			patch: patch(add("a.txt", "b")),
			opt:   Options{Compat: "codex"},
			want:  map[string]string{"a.txt": "b\n"},
		},
		{
			name:  "move refuses an existing destination",
			files: map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
			patch: patch(mv("a.txt", "b.txt", "@@\n-a\n+A\n")),
			code:  result.AlreadyExists,
		},
		{
			name:    "move creates directories and removes the source",
			files:   map[string]string{"old/a.txt": "a\n"},
			patch:   patch(mv("old/a.txt", "new/dir/a.txt", "@@\n-a\n+A\n")),
			want:    map[string]string{"old/": "", "new/": "", "new/dir/": "", "new/dir/a.txt": "A\n"},
			summary: "Success. Updated the following files:\nM new/dir/a.txt\n",
		},
		{
			name:  "pure move",
			files: map[string]string{"a.txt": "a\n"},
			patch: patch(mv("a.txt", "b.txt", "")),
			want:  map[string]string{"b.txt": "a\n"},
		},
		{
			name:  "several operations on one path apply in order",
			files: map[string]string{"a.txt": "1\n"},
			patch: patch(upd("a.txt", "@@\n-1\n+2\n"), upd("a.txt", "@@\n-2\n+3\n"), mv("a.txt", "b.txt", ""), add("a.txt", "fresh"), upd("b.txt", "@@\n-3\n+4\n")),
			want:  map[string]string{"a.txt": "fresh\n", "b.txt": "4\n"},
		},
		{
			name:  "delete then add",
			files: map[string]string{"a.txt": "1\n"},
			patch: patch(del("a.txt"), add("a.txt", "2")),
			want:  map[string]string{"a.txt": "2\n"},
		},
		{
			name:  "delete removes a symlink, not its target",
			files: map[string]string{"t.txt": "t\n", "l": "->t.txt"},
			patch: patch(del("l")),
			want:  map[string]string{"t.txt": "t\n"},
		},
		{
			name:  "update through a symlink changes the target",
			files: map[string]string{"t.txt": "t\n", "l": "->t.txt"},
			patch: patch(upd("l", "@@\n-t\n+T\n")),
			want:  map[string]string{"t.txt": "T\n", "l": "->t.txt"},
		},
		{
			name:  "symlink out of the workspace",
			files: map[string]string{"l": "->/etc/hostname"},
			patch: patch(upd("l", "@@\n-x\n+y\n")),
			code:  result.OutsideWorkspace,
		},
		{
			name:  "dotdot",
			files: map[string]string{"a": "a\n"},
			patch: patch(add("../escape.txt", "x")),
			code:  result.OutsideWorkspace,
		},
		{
			name:  "absolute outside",
			files: map[string]string{"a": "a\n"},
			patch: patch(add("/tmp/escape-hunk.txt", "x")),
			code:  result.OutsideWorkspace,
		},
		{
			name:  "delete missing",
			files: map[string]string{"a": "a\n"},
			patch: patch(del("b")),
			code:  result.NotFound,
		},
		{
			name:  "delete directory",
			files: map[string]string{"d/a": "a\n"},
			patch: patch(del("d")),
			code:  result.IsDirectory,
		},
		{
			name:  "update missing",
			files: map[string]string{"a": "a\n"},
			patch: patch(upd("b", "@@\n-a\n+b\n")),
			code:  result.NotFound,
		},
		{
			name:  "binary refused",
			files: map[string]string{"b.bin": "a\x00b\n"},
			patch: patch(upd("b.bin", "@@\n-a\n+b\n")),
			code:  result.BinaryFile,
		},
		{
			name:  "not utf8: its bytes match only themselves",
			files: map[string]string{"l1.txt": "caf\xe9\n"},
			patch: patch(upd("l1.txt", "@@\n-caf\xe8\n+b\n")),
			code:  result.NoMatch,
		},
		{
			name:  "empty patch",
			files: map[string]string{"a": "a\n"},
			patch: patch(),
			code:  result.InvalidPatch,
		},
		{
			name:  "empty add",
			files: map[string]string{},
			patch: patch(add("e.txt")),
			want:  map[string]string{"e.txt": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, dir := tree(t, tt.files)
			before := snapshotTree(t, dir)
			res, err := Apply(workspace.Disk(ws), tt.patch, tt.opt)
			after := snapshotTree(t, dir)
			if tt.code != "" {
				if err == nil {
					t.Fatalf("applied, want %s", tt.code)
				}
				if c := result.As(err).Code; c != tt.code {
					t.Errorf("code %s, want %s: %v", c, tt.code, err)
				}
				assertSame(t, after, before)
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			assertSame(t, after, tt.want)
			if tt.summary != "" && res.Summary() != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary(), tt.summary)
			}
		})
	}
}

func assertSame(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s: %q", k, v)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	ws, dir := tree(t, map[string]string{"a.txt": "a\n", "d.txt": "d\n"})
	before := snapshotTree(t, dir)
	res, err := Apply(workspace.DryRun(workspace.Disk(ws)), patch(upd("a.txt", "@@\n-a\n+A\n"), add("n/b.txt", "b"), del("d.txt")), Options{Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, snapshotTree(t, dir), before)
	if len(res.Files) != 3 || !strings.Contains(res.Files[0].Diff, "+A") {
		t.Errorf("result %+v", res.Files)
	}
}

func TestManyFilesParallel(t *testing.T) {
	files := map[string]string{}
	var ops []*patchparse.FileOp
	want := map[string]string{}
	for i := 0; i < 200; i++ {
		name := filepath.Join("d"+string(rune('a'+i%5)), "f"+strings.Repeat("x", i%3)+string(rune('0'+i%10))+string(rune('a'+i/10))+".txt")
		files[name] = "one\ntwo\nthree\n"
		want[name] = "one\nTWO\nthree\n"
		want[filepath.Dir(name)+"/"] = ""
		ops = append(ops, upd(name, "@@\n one\n-two\n+TWO\n"))
	}
	ws, dir := tree(t, files)
	if _, err := Apply(workspace.Disk(ws), patch(ops...), Options{Workers: 4}); err != nil {
		t.Fatal(err)
	}
	assertSame(t, snapshotTree(t, dir), want)
}

// TestCommitTimeFailure makes a real commit step fail — the third of five
// files is immutable (chattr +i: even root cannot replace it), which only
// shows when the transaction renames over it — and checks that every other
// file is as it was and no temporary file is left.
func TestCommitTimeFailure(t *testing.T) {
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("no chattr")
	}
	files := map[string]string{}
	var ops []*patchparse.FileOp
	for i := 1; i <= 5; i++ {
		name := fmt.Sprintf("f%d.txt", i)
		files[name] = "old\n"
		ops = append(ops, upd(name, "@@\n-old\n+new\n"))
	}
	files["gone.txt"] = "gone\n"
	ops = append(ops, del("gone.txt"), add("sub/new.txt", "n"))
	ws, dir := tree(t, files)
	target := filepath.Join(dir, "f3.txt")
	if out, err := exec.Command("chattr", "+i", target).CombinedOutput(); err != nil {
		t.Skipf("chattr +i not supported here: %s", out)
	}
	defer exec.Command("chattr", "-i", target).Run()
	before := snapshotTree(t, dir)
	_, err := Apply(workspace.Disk(ws), patch(ops...), Options{})
	if err == nil {
		t.Fatal("applied over an immutable file")
	}
	t.Logf("error: %v", err)
	assertSame(t, snapshotTree(t, dir), before)
}
