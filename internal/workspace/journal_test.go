package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A journal left by a dead process is recovered when the workspace is
// opened.
func TestRecoverJournal(t *testing.T) {
	dir := t.TempDir()
	// An exchanged update: a.txt holds the new content, the temporary file
	// the old one.
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new\n"), 0o644))
	tmp := ".hunk-a.txt.0123456789ab.tmp"
	must(t, os.WriteFile(filepath.Join(dir, tmp), []byte("old\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, journalDir), 0o755))
	journal := `{"op":"stage","target":"a.txt","tmp":"` + tmp + `","existed":true,"hash":"` + contentHash([]byte("new\n")) + `"}` + "\n"
	// pid 0 is never a live hunk.
	must(t, os.WriteFile(filepath.Join(dir, journalDir, "0-abc.tmp"), []byte(journal), 0o600))
	w, err := Open(dir, Options{})
	must(t, err)
	defer w.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt = %q, want the old content back", b)
	}
	for _, p := range []string{tmp, journalDir} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if len(w.Refused) > 0 {
		t.Errorf("refused: %v", w.Refused)
	}
}

// A journal a sandboxed command planted in the workspace (which it may
// write) is left alone and reported, in confined and in host mode: it
// cannot make the next hunk move a file into .git, over a file outside the
// workspace, through a symbolic link, or read a huge journal.
func TestPlantedJournalsAreLeftAlone(t *testing.T) {
	hash := contentHash([]byte("evil\n"))
	cases := map[string]struct {
		setup   func(t *testing.T, dir, outside string)
		journal string // {OUT} is the outside directory
		refused string
	}{
		"git hook": {
			setup: func(t *testing.T, dir, _ string) {
				must(t, os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, ".git", "hooks", ".hunk-pre-commit.0123456789ab.tmp"), []byte("evil\n"), 0o755))
			},
			journal: `{"op":"remove","target":".git/hooks/pre-commit"}` + "\n" + `{"op":"backup","target":".git/hooks/pre-commit","backup":".git/hooks/.hunk-pre-commit.0123456789ab.tmp"}`,
			refused: "inside a repository's .git",
		},
		"script moved to a hook": {
			setup: func(t *testing.T, dir, _ string) {
				must(t, os.WriteFile(filepath.Join(dir, "evil.sh"), []byte("evil\n"), 0o755))
			},
			journal: `{"op":"remove","target":".git/hooks/pre-commit"}` + "\n" + `{"op":"backup","target":".git/hooks/pre-commit","backup":"evil.sh"}`,
			refused: "inside a repository's .git",
		},
		"a file moved over another": {
			setup: func(t *testing.T, dir, _ string) {
				must(t, os.WriteFile(filepath.Join(dir, "evil.sh"), []byte("evil\n"), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n"), 0o644))
			},
			journal: `{"op":"stage","target":"Makefile","tmp":"evil.sh","existed":true,"hash":"` + contentHash([]byte("all:\n")) + `"}`,
			refused: "not a temporary name hunk makes",
		},
		"a deletion": {
			setup: func(t *testing.T, dir, _ string) {
				must(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("keep\n"), 0o644))
			},
			journal: `{"op":"stage","target":"keep.txt","hash":"` + contentHash([]byte("other\n")) + `"}` + "\n" + `{"op":"stage","target":"keep2.txt","tmp":"../x"}`,
			refused: "outside the workspace",
		},
		"outside, absolute": {
			journal: `{"op":"stage","target":"{OUT}/victim.txt","hash":"` + hash + `"}`,
			refused: "outside the workspace",
		},
		"symlinked directory": {
			setup: func(t *testing.T, dir, outside string) {
				must(t, os.Symlink(outside, filepath.Join(dir, "lnk")))
				must(t, os.WriteFile(filepath.Join(outside, ".hunk-victim.txt.0123456789ab.tmp"), []byte("evil\n"), 0o644))
			},
			journal: `{"op":"stage","target":"lnk/victim.txt","tmp":"lnk/.hunk-victim.txt.0123456789ab.tmp","existed":true,"hash":"` + contentHash([]byte("keep")) + `"}`,
			refused: "symbolic link",
		},
		"a waiting file moved over an existing one": {
			// A new file's temporary file may wait in a directory above
			// its own (phases.go), never one that replaces a file.
			setup: func(t *testing.T, dir, _ string) {
				must(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("keep\n"), 0o644))
				must(t, os.WriteFile(filepath.Join(dir, ".hunk-main.go.0123456789ab.tmp"), []byte("evil\n"), 0o644))
			},
			journal: `{"op":"stage","target":"src/main.go","tmp":".hunk-main.go.0123456789ab.tmp","existed":true,"hash":"` + contentHash([]byte("keep\n")) + `"}`,
			refused: "not a temporary name hunk makes",
		},
		"huge": {
			setup: func(t *testing.T, dir, _ string) {
				f, err := os.Create(filepath.Join(dir, journalDir, "0-huge.tmp"))
				must(t, err)
				must(t, f.Truncate(maxJournal+1))
				f.Close()
			},
			refused: "larger than any transaction",
		},
	}
	for name, c := range cases {
		for _, confined := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/confined", false: "/host"}[confined], func(t *testing.T) {
				dir, outside := t.TempDir(), t.TempDir()
				must(t, os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("keep"), 0o644))
				must(t, os.MkdirAll(filepath.Join(dir, journalDir), 0o755))
				if c.setup != nil {
					c.setup(t, dir, outside)
				}
				if c.journal != "" {
					j := strings.ReplaceAll(c.journal, "{OUT}", outside) + "\n"
					must(t, os.WriteFile(filepath.Join(dir, journalDir, "0-planted.tmp"), []byte(j), 0o600))
				}
				before, out0 := snapshotTree(t, dir), snapshotTree(t, outside)
				w, err := Open(dir, Options{Host: !confined})
				must(t, err)
				defer w.Close()
				if after := snapshotTree(t, dir); after != before {
					t.Errorf("the workspace changed:\n%s\nwas\n%s", after, before)
				}
				if after := snapshotTree(t, outside); after != out0 {
					t.Errorf("outside the workspace changed:\n%s\nwas\n%s", after, out0)
				}
				if len(w.Refused) != 1 || !strings.Contains(w.Refused[0], c.refused) {
					t.Errorf("refused %q, want one saying %q", w.Refused, c.refused)
				}
			})
		}
	}
}

// snapshotTree lists every entry below dir with its type, mode and content.
func snapshotTree(t *testing.T, dir string) string {
	var b strings.Builder
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() && fi.Size() < 1<<20 {
			c, _ := os.ReadFile(p)
			b.WriteString(" " + string(c))
		}
		b.WriteString("\n")
		return nil
	}))
	return b.String()
}

// A journal lives in hunk's state directory, not in the workspace, and one
// left there by a dead process is recovered when the workspace is opened.
func TestRecoverJournalInStateDir(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	real, _ := filepath.EvalSymlinks(dir)
	base, rel := stateJournalDir(real)
	jdir, err := PrivateDir(base, rel...)
	must(t, err)
	if !strings.HasPrefix(jdir, state+"/hunk/journal/") {
		t.Fatalf("journal directory %s, want it under %s/hunk/journal", jdir, state)
	}
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new\n"), 0o644))
	tmp := ".hunk-a.txt.0123456789ab.tmp"
	must(t, os.WriteFile(filepath.Join(dir, tmp), []byte("old\n"), 0o644))
	journal := `{"op":"stage","target":"a.txt","tmp":"` + tmp + `","existed":true,"hash":"` + contentHash([]byte("new\n")) + `"}` + "\n"
	must(t, os.WriteFile(filepath.Join(jdir, "0-abc.tmp"), []byte(journal), 0o600))
	w, err := Open(dir, Options{})
	must(t, err)
	defer w.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt = %q, want the old content back", b)
	}
	if _, err := os.Lstat(jdir); err == nil {
		t.Errorf("%s is still there", jdir)
	}

	// A transaction writes its journal there, and removes it when done.
	txn := w.begin(nil, nil)
	must(t, txn.Stage("b.txt", []byte("b\n"), WriteOptions{}))
	must(t, txn.Stage("c.txt", []byte("c\n"), WriteOptions{}))
	ents, _ := os.ReadDir(jdir)
	if len(ents) != 1 {
		t.Errorf("the state directory holds %d journals during the transaction, want 1", len(ents))
	}
	if _, err := os.Lstat(filepath.Join(dir, journalDir)); err == nil {
		t.Errorf("a journal was written in the workspace")
	}
	must(t, txn.Commit())
	if _, err := os.Lstat(jdir); err == nil {
		t.Errorf("%s is still there after the commit", jdir)
	}
}
