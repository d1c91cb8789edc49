//go:build linux

package main

// The corpus of real failures (issue 53): edits real models sent that
// failed in their harness, each as it was sent (from a public issue
// thread, named in the case), the file before (the thread's own text of
// it, or, where the thread shows only a line of it, that line in a file
// rebuilt around it — the case says so), and the intended file after, or
// "must refuse" where the intent is not to be told from the edit. Each
// runs through the real binary, as the model's harness would run it:
// hunk apply-patch for a block or a patch, hunk call for a tool call.
// Right: the intended file, exit 0; refused: an error with nothing
// changed; WRONG (a failure): exit 0 with a tree other than intended, or a
// change made where the case must refuse. A right edit sent again must
// change nothing. The figures are bench/README.md's.

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

func TestRealCorpus(t *testing.T) {
	bin := buildHunk(t)
	cases, _ := filepath.Glob("testdata/realcorpus/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	right, refused, wrong, mustRefuse := 0, 0, 0, 0
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".txtar")
		ar, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		want := map[string]string{}
		var edit, call string
		refuse := false
		for _, f := range ar.Files {
			switch {
			case f.Name == "edit":
				edit = string(f.Data)
			case f.Name == "call.json":
				call = string(f.Data)
			case f.Name == "must-refuse":
				refuse = true
			case strings.HasPrefix(f.Name, "before/"):
				p := filepath.Join(dir, strings.TrimPrefix(f.Name, "before/"))
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, f.Data, 0o644))
			case strings.HasPrefix(f.Name, "after/"):
				want[strings.TrimPrefix(f.Name, "after/")] = string(f.Data)
			}
		}
		if !strings.Contains(string(ar.Comment), "source: https://") {
			t.Errorf("%s: no source: line naming where it came from", name)
		}
		before := treeContents(dir)
		run := func() ([]byte, error) {
			var cmd *exec.Cmd
			if call != "" {
				cmd = exec.Command(bin, "call", call)
			} else {
				cmd = exec.Command(bin, "apply-patch", "-")
				cmd.Stdin = strings.NewReader(edit)
			}
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "HUNK_HISTORY=false")
			return cmd.CombinedOutput()
		}
		out, err := run()
		after := treeContents(dir)
		same := func(want map[string]string) bool {
			for name, content := range want {
				if after[name] != content {
					return false
				}
			}
			for name, content := range before {
				if _, ok := want[name]; !ok && after[name] != content {
					return false
				}
			}
			return true
		}
		switch {
		case refuse && err == nil && !same(before):
			wrong++
			t.Errorf("%s: must refuse, and changed the tree:\n%s", name, out)
		case refuse:
			mustRefuse++
			if !same(before) {
				t.Errorf("%s: refused, and changed the tree", name)
			}
		case err == nil && same(want):
			right++
			// Sent again (a retry), the edit changes nothing: already
			// applied, or refused — never made twice.
			if out, _ := run(); !maps.Equal(treeContents(dir), after) {
				t.Errorf("%s: sent again, the edit changed the tree it made:\n%s", name, out)
			}
		case err == nil:
			wrong++
			t.Errorf("%s: WRONG: exit 0 with a tree other than intended:\n%s\ngot %q", name, out, after)
		default:
			refused++
			if !same(before) {
				t.Errorf("%s: refused, and changed the tree:\n%s", name, out)
			}
			t.Logf("%s: refused: %s", name, strings.TrimSpace(string(out)))
		}
	}
	t.Logf("real corpus: %d cases with an intended result: %d right, %d refused, %d wrong; %d that must be refused, refused", right+refused+wrong, right, refused, wrong, mustRefuse)
}
