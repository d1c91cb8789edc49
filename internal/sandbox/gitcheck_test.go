package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
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
