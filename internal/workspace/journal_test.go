package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// A journal left by a dead process is recovered when the workspace is
// opened, and one that names paths outside the workspace (planted by a
// command that could write the workspace) is not acted on for those.
func TestRecoverJournal(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An exchanged update: a.txt holds the new content, the temporary file
	// the old one.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new\n"), 0o644))
	tmp := ".hunk-a.txt.0123456789ab.tmp"
	must(os.WriteFile(filepath.Join(dir, tmp), []byte("old\n"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, journalDir), 0o755))
	journal := `{"op":"stage","target":"a.txt","tmp":"` + tmp + `","existed":true,"hash":"` + contentHash([]byte("new\n")) + `"}
{"op":"stage","target":"` + outside + `","tmp":"x","hash":"` + contentHash([]byte("keep")) + `"}
{"op":"stage","target":"../victim.txt","hash":"` + contentHash([]byte("keep")) + `"}
`
	// pid 0 is never a live hunk.
	must(os.WriteFile(filepath.Join(dir, journalDir, "0-abc.tmp"), []byte(journal), 0o600))
	w, err := Open(dir, true)
	must(err)
	defer w.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt = %q, want the old content back", b)
	}
	for _, p := range []string{tmp, journalDir} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a path outside the workspace named by the journal was touched: %v", err)
	}
}
