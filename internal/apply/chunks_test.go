package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
)

// TestFixtures runs testdata/apply/<case>.{src,patch,out}: the patch (an
// Update File body) applied to src gives out; a <case>.err instead holds the
// expected error code on its first line and a substring of the message on
// the second. <case>.codex.out / .codex.err, when present, are the result
// under --compat codex.
func TestFixtures(t *testing.T) {
	srcs, _ := filepath.Glob("testdata/apply/*.src")
	if len(srcs) == 0 {
		t.Fatal("no fixtures")
	}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".src")
		base := strings.TrimSuffix(src, ".src")
		for _, mode := range []string{"", "codex"} {
			suffix := ""
			if mode != "" {
				suffix = "." + mode
			}
			if _, err := os.Stat(base + suffix + ".out"); err != nil {
				if _, err := os.Stat(base + suffix + ".err"); err != nil {
					continue
				}
			}
			t.Run(name+suffix, func(t *testing.T) {
				in := read(t, src)
				patch := read(t, base+".patch")
				got, err := ApplyChunks(name, []byte(in), chunksOf(patch), Options{Compat: mode})
				if want, e := os.ReadFile(base + suffix + ".err"); e == nil {
					lines := strings.SplitN(string(want), "\n", 3)
					if err == nil {
						t.Fatalf("applied, want error %s; got\n%s", lines[0], got)
					}
					re := result.As(err)
					if string(re.Code) != lines[0] {
						t.Errorf("code %s, want %s (%v)", re.Code, lines[0], err)
					}
					if len(lines) > 1 && lines[1] != "" && !strings.Contains(re.Msg+"\n"+strings.Join(re.Hints, "\n"), lines[1]) {
						t.Errorf("message %q (hints %q) lacks %q", re.Msg, re.Hints, lines[1])
					}
					return
				}
				if err != nil {
					t.Fatalf("error: %v (hints %q)", err, result.As(err).Hints)
				}
				if want := read(t, base+suffix+".out"); string(got) != want {
					t.Errorf("got\n%q\nwant\n%q", got, want)
				}
			})
		}
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
