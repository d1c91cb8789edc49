package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// NewRepoRisks names the hooks and the settings git would run, and nothing
// of a plain repository.
func TestNewRepoRisks(t *testing.T) {
	git := filepath.Join(t.TempDir(), ".git")
	os.MkdirAll(filepath.Join(git, "hooks"), 0o755)
	os.WriteFile(filepath.Join(git, "hooks", "pre-commit.sample"), nil, 0o755)
	os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tbare = false\n[user]\n\tname = x\n[remote \"origin\"]\n\turl = x\n"), 0o644)
	if r := NewRepoRisks(git); r != nil {
		t.Errorf("a plain repository: %v", r)
	}
	os.WriteFile(filepath.Join(git, "hooks", "post-checkout"), nil, 0o755)
	os.WriteFile(filepath.Join(git, "config"), []byte(`[core]
	fsmonitor = ./x
[Alias]
	st = !sh
[filter "lfs"]
	clean = x
	required = true
[diff "bin"] textconv = hexdump
[credential "https://example.com"]
	helper = store
[includeIf "gitdir:/x/"]
	path = ../evil
[gpg "ssh"]
	program = x
[merge "ours"]
	name = keep
`), 0o644)
	want := []string{"hook .git/hooks/post-checkout",
		"setting core.fsmonitor in .git/config", "setting alias.st in .git/config", "setting filter.lfs.clean in .git/config",
		"setting diff.bin.textconv in .git/config", "setting credential.https://example.com.helper in .git/config",
		"setting includeif.gitdir:/x/.path in .git/config", "setting gpg.ssh.program in .git/config"}
	if r := NewRepoRisks(git); !reflect.DeepEqual(r, want) {
		t.Errorf("got %q\nwant %q", r, want)
	}
}

// A config hunk cannot read safely is a risk itself, not a clean bill: a
// link could lead to settings elsewhere, a FIFO would hang the reader, and a
// setting could hide past any size limit.
func TestNewRepoRisksUnreadableConfig(t *testing.T) {
	dir := t.TempDir()
	git := filepath.Join(dir, ".git")
	os.Mkdir(git, 0o755)
	os.WriteFile(filepath.Join(dir, "notes"), []byte("[core]\n\tfsmonitor = ./x\n"), 0o644)
	os.Symlink("../notes", filepath.Join(git, "config"))
	if r := NewRepoRisks(git); !reflect.DeepEqual(r, []string{".git/config is a symbolic link (not examined)"}) {
		t.Errorf("a linked config: %q", r)
	}
	os.Remove(filepath.Join(git, "config"))
	if err := syscall.Mkfifo(filepath.Join(git, "config"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := NewRepoRisks(git); !reflect.DeepEqual(r, []string{".git/config is not a regular file (not examined)"}) {
		t.Errorf("a FIFO config: %q", r)
	}
	os.Remove(filepath.Join(git, "config"))
	big := append(bytes.Repeat([]byte("# pad\n"), maxGitConfig/6+1), "[core]\n\tfsmonitor = ./x\n"...)
	os.WriteFile(filepath.Join(git, "config"), big, 0o644)
	if r := NewRepoRisks(git); !reflect.DeepEqual(r, []string{".git/config is larger than 1 MiB (not examined)"}) {
		t.Errorf("a padded config: %q", r)
	}
	os.RemoveAll(git)
	os.Symlink(dir, git)
	if r := NewRepoRisks(git); !reflect.DeepEqual(r, []string{".git is a symbolic link to " + dir}) {
		t.Errorf("a linked .git: %q", r)
	}
}
