package gitobj

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// dirFS is a plain directory as the store's FS (the tests' stand-in for
// the workspace's door).
type dirFS string

func (d dirFS) p(n string) string                       { return filepath.Join(string(d), n) }
func (d dirFS) Lstat(n string) (fs.FileInfo, error)     { return os.Lstat(d.p(n)) }
func (d dirFS) ReadDir(n string) ([]fs.DirEntry, error) { return os.ReadDir(d.p(n)) }
func (d dirFS) ReadFile(n string) ([]byte, error)       { return os.ReadFile(d.p(n)) }
func (d dirFS) Open(n string) (*os.File, error)         { return os.Open(d.p(n)) }

func gitBin(t *testing.T) string {
	git, err := exec.LookPath("git")
	if err != nil {
		if sandboxtest.Required("HUNK_REQUIRE_TOOLS", "git") {
			t.Fatal("HUNK_REQUIRE_TOOLS names git, and git is not installed")
		}
		sandboxtest.Skip(t, "the object store test builds repositories with git")
	}
	return git
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestBlobsAsGitReadsThem: every blob of a history git wrote — loose, then
// packed with deltas (git gc), in SHA-1 and SHA-256 repositories — read by
// full and abbreviated id is git cat-file's.
func TestBlobsAsGitReadsThem(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, "init", "-q", "--object-format="+format)
			var body strings.Builder
			for i := 0; i < 40; i++ {
				fmt.Fprintf(&body, "line %d of a file that grows\n", i)
				os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body.String()), 0o644)
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("g%d.txt", i%3)), bytes.Repeat([]byte{byte('a' + i)}, 5000+i), 0o644)
				run(t, dir, "add", "-A")
				run(t, dir, "commit", "-q", "-m", fmt.Sprint(i))
			}
			var ids []string
			for _, l := range strings.Split(run(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)"), "\n") {
				if id, ok := strings.CutPrefix(l, "blob "); ok {
					ids = append(ids, id)
				}
			}
			check := func(stage string) {
				s, err := Open(dirFS(dir), 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for _, id := range ids {
					want := run(t, dir, "cat-file", "blob", id)
					for _, n := range []int{len(id), 12} {
						got, err := s.Blob(id[:n])
						if err != nil || strings.TrimSpace(string(got)) != want {
							t.Fatalf("%s: blob %s: %v\n%.80q\nwant %.80q", stage, id[:n], err, got, want)
						}
					}
				}
				if _, err := s.Blob(strings.Repeat("e", 12)); !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: an id no object has: %v", stage, err)
				}
			}
			check("loose")
			run(t, dir, "gc", "-q", "--aggressive")
			if m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack")); len(m) == 0 {
				t.Fatal("git gc made no pack")
			}
			check("packed")
		})
	}
}

// TestNoRepositoryOutside: a .git file (a worktree's) is not followed out of
// the workspace, and no .git is ErrNoRepository.
func TestNoRepositoryOutside(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dirFS(dir), 0); !errors.Is(err, ErrNoRepository) {
		t.Fatalf("no .git: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/x\n"), 0o644)
	if _, err := Open(dirFS(dir), 0); err == nil || !strings.Contains(err.Error(), "a .git directory inside the workspace") {
		t.Fatalf(".git file: %v", err)
	}
}

// TestInHistory: a blob of any commit of HEAD's history (an old one, in a
// subdirectory, on a merged branch) is found, loose and after git gc
// (packs, packed-refs); a blob written but never committed (planted) is
// not; a repository with no commit says so.
func TestInHistory(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, "init", "-q", "-b", "main", "--object-format="+format)
			s, _ := Open(dirFS(dir), 1<<20)
			if _, err := s.InHistory(strings.Repeat("0", 2*s.hashLen())); err == nil {
				t.Errorf("a repository with no commit: no error")
			}
			s.Close()
			os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
			os.WriteFile(filepath.Join(dir, "sub", "old.txt"), []byte("old\n"), 0o644)
			run(t, dir, "add", ".")
			run(t, dir, "commit", "-qm", "one")
			old := run(t, dir, "rev-parse", "HEAD:sub/old.txt")
			run(t, dir, "checkout", "-qb", "side")
			os.WriteFile(filepath.Join(dir, "side.txt"), []byte("side\n"), 0o644)
			run(t, dir, "add", ".")
			run(t, dir, "commit", "-qm", "side")
			side := run(t, dir, "rev-parse", "HEAD:side.txt")
			run(t, dir, "checkout", "-q", "main")
			os.WriteFile(filepath.Join(dir, "sub", "old.txt"), []byte("new\n"), 0o644)
			run(t, dir, "commit", "-qam", "two")
			run(t, dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
			os.WriteFile(filepath.Join(dir, "p.txt"), []byte("planted\n"), 0o644)
			planted := run(t, dir, "hash-object", "-w", "p.txt") // written, never committed
			for _, gc := range []bool{false, true} {
				if gc {
					run(t, dir, "gc", "-q")
				}
				s, err := Open(dirFS(dir), 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				for id, want := range map[string]bool{old: true, side: true, planted: false} {
					if got, err := s.InHistory(id); got != want || err != nil {
						t.Errorf("gc %v: InHistory(%s) = %v %v, want %v", gc, id, got, err, want)
					}
				}
				s.Close()
			}
		})
	}
}
