package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// fixture makes T/ws (the workspace) and T/outside/secret.txt, with symlinks
// inside the workspace that lead out.
func fixture(t *testing.T) (ws *Workspace, top string) {
	t.Helper()
	top = t.TempDir()
	top, _ = filepath.EvalSymlinks(top)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(top, "ws", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(top, "outside"), 0o755))
	must(os.WriteFile(filepath.Join(top, "outside", "secret.txt"), []byte("secret\n"), 0o644))
	must(os.WriteFile(filepath.Join(top, "ws", "in.txt"), []byte("inside\n"), 0o644))
	must(os.Symlink("../outside/secret.txt", filepath.Join(top, "ws", "linkfile")))
	must(os.Symlink("../outside", filepath.Join(top, "ws", "linkdir")))
	must(os.Symlink("in.txt", filepath.Join(top, "ws", "goodlink")))
	must(os.Symlink(filepath.Join(top, "ws", "in.txt"), filepath.Join(top, "ws", "abslink")))
	must(os.Symlink("loop2", filepath.Join(top, "ws", "loop1")))
	must(os.Symlink("loop1", filepath.Join(top, "ws", "loop2")))
	w, err := Open(filepath.Join(top, "ws"), Options{})
	must(err)
	t.Cleanup(func() { w.Close() })
	return w, top
}

func code(err error) result.Code {
	if err == nil {
		return ""
	}
	return result.As(err).Code
}

func TestResolve(t *testing.T) {
	w, top := fixture(t)
	cases := map[string]struct {
		in   string
		want string
		code result.Code
	}{
		"relative":             {"a/b.txt", "a/b.txt", ""},
		"dot segments":         {"./a/./b/../c.txt", "a/c.txt", ""},
		"double slash":         {"a//b", "a/b", ""},
		"root itself":          {".", ".", ""},
		"absolute inside":      {filepath.Join(top, "ws", "x", "y"), "x/y", ""},
		"absolute root":        {filepath.Join(top, "ws"), ".", ""},
		"dotdot":               {"..", "", result.OutsideWorkspace},
		"dotdot prefix":        {"../outside/secret.txt", "", result.OutsideWorkspace},
		"dotdot middle":        {"sub/../../outside", "", result.OutsideWorkspace},
		"absolute outside":     {"/etc/passwd", "", result.OutsideWorkspace},
		"absolute look-alike":  {filepath.Join(top, "ws-evil", "x"), "", result.OutsideWorkspace},
		"absolute dotdot":      {filepath.Join(top, "ws") + "/../outside/secret.txt", "", result.OutsideWorkspace},
		"leading double slash": {"//etc/passwd", "", result.OutsideWorkspace},
		"empty":                {"", "", result.InvalidArgument},
		"nul":                  {"a\x00b", "", result.InvalidArgument},
		"too long":             {strings.Repeat("a/", 3000), "", result.InvalidArgument},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := w.Resolve(c.in)
			if code(err) != c.code {
				t.Fatalf("Resolve(%q) error %v (code %q), want code %q", c.in, err, code(err), c.code)
			}
			if err == nil && got != c.want {
				t.Fatalf("Resolve(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestSymlinksOutsideAreRefused(t *testing.T) {
	w, top := fixture(t)
	for _, name := range []string{"linkfile", "linkdir/secret.txt", "linkdir/new.txt", "loop1", "loop1/x"} {
		t.Run(name, func(t *testing.T) {
			if _, err := w.ReadFile(name); code(err) != result.OutsideWorkspace {
				t.Errorf("ReadFile(%s): %v, want OUTSIDE_WORKSPACE", name, err)
			}
			if err := w.WriteFile(name, []byte("PWNED"), WriteOptions{}); code(err) != result.OutsideWorkspace {
				t.Errorf("WriteFile(%s): %v, want OUTSIDE_WORKSPACE", name, err)
			}
		})
	}
	b, _ := os.ReadFile(filepath.Join(top, "outside", "secret.txt"))
	if string(b) != "secret\n" {
		t.Fatalf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(top, "outside", "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was created outside: %v", err)
	}
	assertNoTemp(t, top)
}

func TestWriteFileFollowsLinksInside(t *testing.T) {
	w, top := fixture(t)
	for _, name := range []string{"goodlink", "abslink"} {
		if err := w.WriteFile(name, []byte("new "+name), WriteOptions{}); err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
		b, _ := os.ReadFile(filepath.Join(top, "ws", "in.txt"))
		if string(b) != "new "+name {
			t.Fatalf("target holds %q", b)
		}
		if fi, _ := os.Lstat(filepath.Join(top, "ws", name)); fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s was replaced by a regular file", name)
		}
	}
}

func TestWriteFileKeepsModeAndCreatesParents(t *testing.T) {
	w, top := fixture(t)
	p := filepath.Join(top, "ws", "x.sh")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("x.sh", []byte("new"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode %v, want 0751", fi.Mode().Perm())
	}
	if err := w.WriteFile("a/b/c.txt", []byte("deep"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("x.sh", []byte("again"), WriteOptions{CreateOnly: true}); code(err) != result.AlreadyExists {
		t.Fatalf("CreateOnly on existing: %v", err)
	}
	if err := w.WriteFile("sub", []byte("x"), WriteOptions{}); code(err) != result.IsDirectory {
		t.Fatalf("write over a directory: %v", err)
	}
	assertNoTemp(t, top)
}

func TestWriteFileNoTempOnError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	w, top := fixture(t)
	d := filepath.Join(top, "ws", "ro")
	_ = os.Mkdir(d, 0o755)
	_ = os.WriteFile(filepath.Join(d, "f"), []byte("old"), 0o644)
	_ = os.Chmod(d, 0o555)
	defer os.Chmod(d, 0o755)
	if err := w.WriteFile("ro/f", []byte("new"), WriteOptions{}); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	assertNoTemp(t, top)
}

// TestLockSerializesReadModifyWrite: many goroutines append through
// Lock+ReadFile+WriteFile; no update is lost.
func TestLockSerializesReadModifyWrite(t *testing.T) {
	w, top := fixture(t)
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := w.Lock("counter.txt")
			if err != nil {
				t.Error(err)
				return
			}
			defer unlock()
			b, _ := w.ReadFile("counter.txt")
			if err := w.WriteFile("counter.txt", append(b, 'x'), WriteOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(filepath.Join(top, "ws", "counter.txt"))
	if len(b) != n {
		t.Fatalf("%d updates survived, want %d", len(b), n)
	}
}

func TestHostMode(t *testing.T) {
	_, top := fixture(t)
	w, err := Open(filepath.Join(top, "ws"), Options{Host: true})
	if err != nil {
		t.Fatal(err)
	}
	name, err := w.Resolve("../outside/secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.ReadFile(name)
	if err != nil || string(b) != "secret\n" {
		t.Fatalf("host mode read: %q %v", b, err)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// TestNarrowKeepsOptions: a workspace narrowed to a subdirectory (a
// client's MCP root) keeps every option it was opened with — durability,
// the history's switch and limits, host mode — and its policy still decides
// names as they are in the whole workspace.
func TestNarrowKeepsOptions(t *testing.T) {
	top := t.TempDir()
	if err := os.MkdirAll(filepath.Join(top, "sub", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	limits := history.Limits{Count: 3, Bytes: 1000}
	rules := func(string) (*policy.Policy, error) {
		return policy.New([]policy.Rule{{Kind: policy.ReadDeny, Pattern: "/sub/deep/"}, {Kind: policy.WriteDeny, Pattern: "*.lock"}}, false)
	}
	for _, opt := range []Options{
		{Durable: true, History: HistoryOptions{Off: true}, Rules: rules},
		{History: HistoryOptions{Limits: &limits}, Rules: rules},
		{Host: true, Durable: true, Rules: rules},
	} {
		w, err := Open(top, opt)
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.Narrow("sub")
		if err != nil {
			t.Fatal(err)
		}
		got, want := n.Options(), opt
		got.Rules, want.Rules = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("narrowed options %+v, opened with %+v", got, want)
		}
		if n.Durable() != opt.Durable || n.Records() == opt.History.Off || n.HistoryLimit() != w.HistoryLimit() {
			t.Errorf("narrowed: durable %v, records %v, limits %+v; opened with %+v", n.Durable(), n.Records(), n.HistoryLimit(), opt)
		}
		if code(n.CheckRead("deep/x")) != result.Denied || code(n.CheckWrite("a.lock")) != result.Denied || n.CheckRead("x") != nil {
			t.Errorf("the narrowed policy does not decide as the whole workspace's: %v, %v, %v", n.CheckRead("deep/x"), n.CheckWrite("a.lock"), n.CheckRead("x"))
		}
		n.Close()
		w.Close()
	}
}
