package apply

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestMistakeVectors runs testdata/mistakes/*.txtar: the mistakes real
// sessions make (issue 53), each a tree before (src/...), the model's
// patch as it sent it (patch), and the intended tree (want/...) or the
// refusal (err: the code on its first line, a piece of the message or a
// hint on each line after) with the tree unchanged. Each kind is there as
// a block and as a Codex patch, and beside a twin where the intent is not
// unique, which must be refused. A patch that applies, sent again to the
// tree it made, changes nothing.
func TestMistakeVectors(t *testing.T) {
	cases, _ := filepath.Glob("testdata/mistakes/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no vectors")
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			files, want := map[string]string{}, map[string]string{}
			var text, wantErr string
			for _, f := range ar.Files {
				switch {
				case f.Name == "patch":
					text = string(f.Data)
				case f.Name == "err":
					wantErr = string(f.Data)
				case strings.HasPrefix(f.Name, "src/"):
					files[strings.TrimPrefix(f.Name, "src/")] = string(f.Data)
				case strings.HasPrefix(f.Name, "want/"):
					want[strings.TrimPrefix(f.Name, "want/")] = string(f.Data)
				}
			}
			ws, dir := tree(t, files)
			before := snapshotTree(t, dir)
			p, err := patchparse.Parse(text, patchparse.Options{Strip: patchparse.DefaultStrip})
			if err == nil {
				_, err = Apply(workspace.Disk(ws), p, Options{})
			}
			after := snapshotTree(t, dir)
			if wantErr != "" {
				if err == nil {
					t.Fatalf("applied, want a refusal; got %v", after)
				}
				lines := strings.Split(strings.TrimSpace(wantErr), "\n")
				re := result.As(err)
				if string(re.Code) != lines[0] {
					t.Errorf("code %s, want %s: %v", re.Code, lines[0], err)
				}
				said := re.Msg + "\n" + strings.Join(re.Hints, "\n")
				for _, l := range lines[1:] {
					if !strings.Contains(said, l) {
						t.Errorf("the refusal does not say %q:\n%s", l, said)
					}
				}
				assertSame(t, after, before)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v (hints %q)", err, result.As(err).Hints)
			}
			for name, content := range before {
				if _, ok := want[name]; !ok {
					want[name] = content // (what the vector does not name is unchanged)
				}
			}
			assertSame(t, after, want)
			// Sent again to the tree it made (a model repeating itself, a
			// harness retrying), the patch changes nothing: already
			// applied, or refused — never made twice.
			p, err = patchparse.Parse(text, patchparse.Options{Strip: patchparse.DefaultStrip})
			if err == nil {
				_, err = Apply(workspace.Disk(ws), p, Options{})
			}
			if again := snapshotTree(t, dir); err == nil {
				assertSame(t, again, want)
			} else {
				assertSame(t, again, after)
			}
		})
	}
}
