package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
)

// TestEditFlags checks how `hunk edit` parses its flags, without running the engine.
func TestEditFlags(t *testing.T) {
	dir := t.TempDir()
	oldFile := filepath.Join(dir, "old.txt")
	if err := os.WriteFile(oldFile, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	cases := map[string]struct {
		args  []string
		stdin string
		want  EditOptions
		usage string // expected usage error substring
	}{
		"old and new": {
			args: []string{"edit", "f.go", "--old", "x", "--new", "", "--replace-all", "--exact", "--diff", "--dry-run", "--if-match", "abc"},
			want: EditOptions{Path: "f.go", Old: str("x"), New: str(""), ReplaceAll: true, Exact: true, Diff: true, DryRun: true, IfMatch: "abc"},
		},
		"old file and new from stdin": {
			args: []string{"edit", "f.go", "--old-file", oldFile, "--new-file", "-"}, stdin: "c\n",
			want: EditOptions{Path: "f.go", Old: str("a\nb\n"), New: str("c\n")},
		},
		"edits": {
			args: []string{"edit", "f.go", "--edits", "-"},
			want: EditOptions{Path: "f.go", EditsFile: "-"},
		},
		"missing new":           {args: []string{"edit", "f.go", "--old", "x"}, usage: "missing the new text"},
		"missing old":           {args: []string{"edit", "f.go", "--new", "x"}, usage: "missing the old text"},
		"edits with old":        {args: []string{"edit", "f.go", "--edits", "e.json", "--old", "x"}, usage: "--edits cannot be combined"},
		"edits with replaceAll": {args: []string{"edit", "f.go", "--edits", "e.json", "--replace-all"}, usage: "--replace-all applies to --old/--new"},
		"old twice":             {args: []string{"edit", "f.go", "--old", "x", "--old-file", oldFile, "--new", "y"}, usage: "cannot be combined"},
		"two stdins":            {args: []string{"edit", "f.go", "--old-file", "-", "--new-file", "-"}, usage: "only one of --edits"},
		"no path":               {args: []string{"edit", "--old", "x", "--new", "y"}, usage: "takes 1 argument, got 0"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got *EditOptions
			var out bytes.Buffer
			app := &App{Stdin: strings.NewReader(c.stdin), Stdout: &out, Stderr: &out}
			t.Setenv("XDG_CONFIG_HOME", dir)
			root := rootWith(app, newEditCmd(app, func(_ *App, o *EditOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"-C", dir}, c.args...))
			err := root.Execute()
			if c.usage != "" {
				if err == nil || !strings.Contains(err.Error(), c.usage) || result.ExitCode(err) != 2 {
					t.Fatalf("got %v (exit %d), want usage error %q", err, result.ExitCode(err), c.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("run not called")
			}
			deref := func(p *string) string {
				if p == nil {
					return "<nil>"
				}
				return *p
			}
			if deref(got.Old) != deref(c.want.Old) || deref(got.New) != deref(c.want.New) {
				t.Fatalf("old/new = %q/%q, want %q/%q", deref(got.Old), deref(got.New), deref(c.want.Old), deref(c.want.New))
			}
			g, w := *got, c.want
			g.Old, g.New, w.Old, w.New = nil, nil, nil, nil
			if w.InsertLine == 0 && !strings.Contains(strings.Join(c.args, " "), "--insert-line") {
				w.InsertLine = -1 // not inserting
			}
			if g != w {
				t.Fatalf("got %+v, want %+v", g, w)
			}
		})
	}
}
