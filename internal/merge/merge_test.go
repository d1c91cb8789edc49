package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

func TestMergeCases(t *testing.T) {
	for _, c := range []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"theirs only", "a\nb\nc\n", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0},
		{"ours only", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		{"apart", "1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5\nY\n7\n", "1\nX\n3\n4\n5\nY\n7\n", 0},
		{"same change twice", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0},
		{"conflict", "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", "a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nc\n", 1},
		{"refined to the differing line", "a\nb\nc\nd\n", "a\nB\nC1\nd\n", "a\nB\nC2\nd\n",
			"a\nB\n<<<<<<< ours\nC1\n=======\nC2\n>>>>>>> theirs\nd\n", 1},
		{"crlf markers", "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n", "a\r\nY\r\nc\r\n",
			"a\r\n<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\nc\r\n", 1},
		{"no final newline", "a\nb", "a\nX", "a\nY", "a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Merge([]byte(c.base), []byte(c.ours), []byte(c.theirs), Options{Ours: "ours", Theirs: "theirs"})
			if string(r.Text) != c.want || r.Conflicts != c.conflicts {
				t.Errorf("got %d conflicts\n%q\nwant %d\n%q", r.Conflicts, r.Text, c.conflicts, c.want)
			}
		})
	}
}

// TestMergeAgainstGit merges generated files with git merge-file (xdiff at
// its zealous-alnum level, the only one it offers) and with Merge at that
// level: the same bytes and the same number of conflicts, over small
// alphabets (many equal lines: the pruning and the sliding), big files with
// many changes (the cost cut-offs), CRLF and missing final newlines.
func TestMergeAgainstGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if sandboxtest.Required("HUNK_REQUIRE_TOOLS", "git") {
			t.Fatal("HUNK_REQUIRE_TOOLS names git, and git is not installed")
		}
		sandboxtest.Skip(t, "the differential merge test needs git")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(seed()))
	n := 300
	conflicted := 0
	defer func() { t.Logf("%d of %d merges with conflicts", conflicted, n) }()
	if testing.Short() {
		n = 60
	}
	for k := 0; k < n; k++ {
		base, ours, theirs := generate(rng, k)
		files := map[string][]byte{"base": base, "ours": ours, "theirs": theirs}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		favor, flag := Favor(k%4), []string{}
		if favor != Conflict {
			flag = []string{"--" + [...]string{"", "ours", "theirs", "union"}[favor]}
		}
		args := append(append([]string{"merge-file", "-p"}, flag...), "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		// No user's merge.conflictStyle: git's default markers.
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		want, err := cmd.Output()
		wantConflicts := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			wantConflicts = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		got := Merge(base, ours, theirs, Options{Ours: "ours", Theirs: "theirs", Level: ZealousAlnum, Favor: favor})
		if got.Conflicts > 0 {
			conflicted++
		}
		if !bytes.Equal(got.Text, want) || min(got.Conflicts, 127) != wantConflicts {
			t.Fatalf("case %d (favor %d): %d conflicts, git %d\nbase %q\nours %q\ntheirs %q\ngot  %q\nwant %q",
				k, favor, got.Conflicts, wantConflicts, base, ours, theirs, got.Text, want)
		}
	}
}

// generate makes a base file and two edits of it; case k picks the size
// and the alphabet.
func generate(rng *rand.Rand, k int) (base, ours, theirs []byte) {
	lines, alphabet := 5+rng.Intn(30), 2+rng.Intn(6)
	switch k % 10 {
	case 7:
		lines, alphabet = 400+rng.Intn(400), 40
	case 8:
		lines, alphabet = 1500+rng.Intn(1500), 3000
	case 9:
		lines, alphabet = 200+rng.Intn(200), 3
	}
	eol := "\n"
	if k%13 == 5 {
		eol = "\r\n"
	}
	word := func() string {
		switch w := rng.Intn(alphabet); {
		case w == 0 && rng.Intn(3) == 0:
			return "}"
		case w == 1 && rng.Intn(3) == 0:
			return ""
		default:
			return fmt.Sprintf("line %d", w)
		}
	}
	b := make([]string, lines)
	for i := range b {
		b[i] = word()
	}
	edit := func() []string {
		out := append([]string(nil), b...)
		edits := 1 + rng.Intn(4)
		if lines > 300 {
			edits = lines / 5
		}
		for e := 0; e < edits && len(out) > 0; e++ {
			i := rng.Intn(len(out))
			switch rng.Intn(3) {
			case 0:
				out[i] = word()
			case 1:
				out = append(out[:i], out[i+1:]...)
			default:
				out = append(out[:i], append([]string{word(), word()}, out[i:]...)...)
			}
		}
		return out
	}
	join := func(ls []string) []byte {
		s := strings.Join(ls, eol)
		if len(ls) > 0 && rng.Intn(6) != 0 {
			s += eol
		}
		return []byte(s)
	}
	return join(b), join(edit()), join(edit())
}

// seed is HUNK_MERGE_SEED (to explore) or 1.
func seed() int64 {
	var s int64 = 1
	fmt.Sscan(os.Getenv("HUNK_MERGE_SEED"), &s)
	return s
}
