package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// corpus is a copy of a module from Go's module cache (real public
// repositories' trees), in a git repository with ignore files of its own,
// or the test is skipped.
func corpus(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("no go env")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), module)
	if _, err := os.Stat(src); err != nil {
		t.Skipf("%s is not in the module cache", module)
	}
	dst := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	exec.Command("chmod", "-R", "u+w", dst).Run()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(exec.Command("git", "-C", dst, "init", "-q").Run())
	must(os.WriteFile(filepath.Join(dst, ".gitignore"), []byte("*_test.go\n!flag_test.go\n/doc/\nzz*\n"), 0o644))
	must(os.WriteFile(filepath.Join(dst, ".ignore"), []byte("*.yml\n"), 0o644))
	must(os.MkdirAll(filepath.Join(dst, ".hidden"), 0o755))
	must(os.WriteFile(filepath.Join(dst, ".hidden", "h.go"), []byte("package hidden // Command\n"), 0o644))
	must(os.WriteFile(filepath.Join(dst, "crlf.txt"), []byte("one Command\r\ntwo\r\nCommand three\r\n"), 0o644))
	must(os.WriteFile(filepath.Join(dst, "bin.dat"), []byte("Command\x00\x01binary"), 0o644))
	must(os.MkdirAll(filepath.Join(dst, "doc"), 0o755))
	must(os.WriteFile(filepath.Join(dst, "doc", "extra.md"), []byte("an ignored Command, searched by name\n"), 0o644))
	must(os.WriteFile(filepath.Join(dst, "bad.txt"), []byte("Command \xff\xfe invalid\n"), 0o644))
	return dst
}

// rgLines runs ripgrep and returns its path:line set.
func rgLines(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	c := exec.Command("rg", append([]string{"--no-heading", "-n", "--no-config", "--sort", "path"}, args...)...)
	c.Dir = dir
	c.Env = append(os.Environ(), "HOME="+t.TempDir()) // no global gitignore
	out, err := c.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return nil
	} else if err != nil {
		t.Fatalf("rg %v: %v", args, err)
	}
	var set []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) == 3 {
			set = append(set, strings.TrimPrefix(parts[0], "./")+":"+parts[1])
		}
	}
	sort.Strings(set)
	return set
}

func ours(t *testing.T, dir string, o Options) []string {
	t.Helper()
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Search(context.Background(), ws, o)
	if err != nil {
		t.Fatalf("Search %+v: %v", o, err)
	}
	var set []string
	for _, m := range r.Matches {
		if !m.Context {
			set = append(set, fmt.Sprintf("%s:%d", m.Path, m.Line))
		}
	}
	sort.Strings(set)
	return set
}

// TestAgainstRipgrep: the same file:line matches as ripgrep 13 for a
// table of patterns, ignore rules, globs and types on two real trees.
func TestAgainstRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		if sandboxtest.Required("HUNK_REQUIRE_TOOLS", "rg") {
			t.Fatal("HUNK_REQUIRE_TOOLS names rg, and ripgrep is not installed (apt-get install ripgrep)")
		}
		sandboxtest.Skip(t, "the differential test against ripgrep needs rg (apt-get install ripgrep)")
	}
	for _, module := range []string{"github.com/spf13/cobra@v1.10.2", "github.com/spf13/pflag@v1.0.10"} {
		dir := corpus(t, module)
		for _, c := range []struct {
			args []string
			o    Options
		}{
			{[]string{"Command"}, Options{Pattern: "Command"}},
			{[]string{"-F", "c.Flags()"}, Options{Pattern: "c.Flags()", Fixed: true}},
			{[]string{"-i", "usage"}, Options{Pattern: "usage", IgnoreCase: true}},
			{[]string{"-S", "usage"}, Options{Pattern: "usage", SmartCase: true}},
			{[]string{"-S", "Usage"}, Options{Pattern: "Usage", SmartCase: true}},
			{[]string{"-w", "err"}, Options{Pattern: "err", Word: true}},
			{[]string{`func \(\w+ \*\w+\) [A-Z]\w*\(`}, Options{Pattern: `func \(\w+ \*\w+\) [A-Z]\w*\(`}},
			{[]string{`^\s*//`}, Options{Pattern: `^\s*//`}},
			{[]string{`[Ff]lag(s|Set)$`}, Options{Pattern: `[Ff]lag(s|Set)$`}},
			{[]string{"-t", "go", "return nil"}, Options{Pattern: "return nil", Types: []string{"go"}}},
			{[]string{"-T", "go", "Command"}, Options{Pattern: "Command", TypesNot: []string{"go"}}},
			{[]string{"-g", "*.md", "flag"}, Options{Pattern: "flag", Globs: []string{"*.md"}}},
			{[]string{"-g", "!*.go", "-g", "!*.md", "e"}, Options{Pattern: "e", Globs: []string{"!*.go", "!*.md"}}},
			{[]string{"--no-ignore", "Command"}, Options{Pattern: "Command", NoIgnore: true}},
			{[]string{"--hidden", "-g", "!.git", "Command"}, Options{Pattern: "Command", Hidden: true}},
			{[]string{"Command", "doc"}, Options{Pattern: "Command", Paths: []string{"doc"}}},
			{[]string{"-U", `Command\)\n\s*\}`}, Options{Pattern: `Command\)\n\s*\}`, Multiline: true}},
			{[]string{"zzz-no-such-thing"}, Options{Pattern: "zzz-no-such-thing"}},
		} {
			want := rgLines(t, dir, c.args...)
			got := ours(t, dir, c.o)
			t.Logf("%s %q: %d", module, c.args, len(want))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: rg %q: %d matches, hunk %d\n%s", module, c.args, len(want), len(got), diffSets(want, got))
			}
		}
	}
}

func diffSets(want, got []string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	for _, x := range got {
		g[x] = true
	}
	var b strings.Builder
	n := 0
	for _, x := range want {
		if !g[x] && n < 10 {
			fmt.Fprintf(&b, "  only rg:   %s\n", x)
			n++
		}
	}
	for _, x := range got {
		if !w[x] && n < 20 {
			fmt.Fprintf(&b, "  only hunk: %s\n", x)
			n++
		}
	}
	return b.String()
}

func TestWindowAndContext(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		if i%10 == 0 {
			fmt.Fprintf(&b, "match %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("match b\n"), 0o644)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	show := func(o Options) string {
		r, err := Search(context.Background(), ws, o)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, m := range r.Matches {
			sep := ":"
			if m.Context {
				sep = "-"
			}
			lines = append(lines, fmt.Sprintf("%s%s%d", m.Path, sep, m.Line))
		}
		return fmt.Sprintf("%s total=%d files=%d trunc=%v", strings.Join(lines, " "), r.TotalMatches, r.TotalFiles, r.Truncated)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Pattern: "match"}, "a.txt:10 a.txt:20 a.txt:30 b.txt:1 total=4 files=2 trunc=false"},
		{Options{Pattern: "match", Limit: 2}, "a.txt:10 a.txt:20 total=4 files=2 trunc=true"},
		{Options{Pattern: "match", Limit: 2, Offset: 2}, "a.txt:30 b.txt:1 total=4 files=2 trunc=false"},
		{Options{Pattern: "match", Before: 1, After: 1, Limit: 1, Offset: 1}, "a.txt-19 a.txt:20 a.txt-21 total=4 files=2 trunc=true"},
		{Options{Pattern: "match", Before: 2}, "a.txt-8 a.txt-9 a.txt:10 a.txt-18 a.txt-19 a.txt:20 a.txt-28 a.txt-29 a.txt:30 b.txt:1 total=4 files=2 trunc=false"},
		{Options{Pattern: "^line 2[89]$|^match 30$", After: 5}, "a.txt:28 a.txt:29 a.txt:30 total=3 files=1 trunc=false"},
	} {
		if got := show(c.o); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.o, got, c.want)
		}
	}
}

// TestPolicyAndLinks: a read-denied file with a match is never shown nor
// named, in any mode; a link loop ends; a link out of the workspace is
// not followed.
func TestPolicyAndLinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "o.txt"), []byte("secret outside\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("secret=1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "key.pem"), []byte("secret key\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "ok.txt"), []byte("no secret here\n"), 0o644)
	os.Symlink("..", filepath.Join(dir, "sub", "loop"))
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink("sub/key.pem", filepath.Join(dir, "alias.txt"))
	ws, err := workspace.Open(dir, workspace.Options{Rules: func(string) (*policy.Policy, error) {
		return policy.New([]policy.Rule{{Kind: policy.ReadDeny, Pattern: ".env"}, {Kind: policy.ReadDeny, Pattern: "*.pem"}}, false)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{Lines, Files, Count} {
		r, err := Search(context.Background(), ws, Options{Pattern: "secret", Mode: mode, Hidden: true, Follow: true, NoIgnore: true})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(r.Matches, r.Files, r.Skipped)
		for _, bad := range []string{".env", "key.pem", "alias", "outside"} {
			if strings.Contains(got, bad) {
				t.Errorf("mode %d shows %s: %s", mode, bad, got)
			}
		}
		if !strings.Contains(got, "sub/ok.txt") || strings.Count(got, "ok.txt") != 1 {
			t.Errorf("mode %d: want sub/ok.txt once (the loop followed once): %s", mode, got)
		}
	}
	// Named, a denied file is refused as every read refuses it.
	if _, err := Search(context.Background(), ws, Options{Pattern: "secret", Paths: []string{".env"}}); err == nil {
		t.Error("a read-denied file named by the search was searched")
	}
}

// TestBigFile: a file far larger than what a search holds is searched
// in bounded memory, its line numbers right.
func TestBigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	block := []byte(strings.Repeat(line, 10000)) // 1 MB, 10,000 lines
	const blocks = 1024                          // 1 GiB
	for i := 0; i < blocks; i++ {
		if i == blocks-1 {
			copy(block[len(block)-100:], "needle here"+strings.Repeat("x", 88)+"\n")
		}
		if _, err := f.Write(block); err != nil {
			t.Skipf("no room for a 1 GB file: %v", err)
		}
	}
	f.Close()
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := Search(context.Background(), ws, Options{Pattern: "needle"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 1 || r.Matches[0].Line != blocks*10000 {
		t.Errorf("matches %+v, want line %d", r.Matches, blocks*10000)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("searching 1 GiB allocated %d MiB", alloc>>20)
	}
}
