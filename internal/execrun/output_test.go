package execrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/result"
)

func TestShorten(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	s := b.String()
	if sh := Shorten([]byte(s), len(s)); sh.Omitted != 0 || sh.Head != s {
		t.Fatalf("a stream within the budget was cut: %+v", sh.Omitted)
	}
	sh := Shorten([]byte(s), 200)
	head, tail := sh.Head, sh.Tail
	if !strings.HasPrefix(head, "line 1\n") || !strings.HasSuffix(head, "\n") || len(head) > 100 {
		t.Errorf("head %q", head)
	}
	if !strings.HasSuffix(tail, "line 1000\n") || strings.HasPrefix(tail, "ine") || len(tail) > 100 {
		t.Errorf("tail %q", tail)
	}
	if int(sh.Omitted) != len(s)-len(head)-len(tail) {
		t.Errorf("omitted %d, want %d", sh.Omitted, len(s)-len(head)-len(tail))
	}
	// The omitted lines are numbered as a reader of the whole stream sees them.
	lines := strings.Split(s, "\n")
	if lines[sh.HeadLines] != fmt.Sprintf("line %d", sh.HeadLines+1) || !strings.HasPrefix(tail, lines[sh.TailLine-1]+"\n") {
		t.Errorf("head %d lines, tail from line %d: %q", sh.HeadLines, sh.TailLine, tail[:20])
	}
	// One long line: cut inside it, both halves within the budget.
	long := strings.Repeat("x", 10000)
	if sh := Shorten([]byte(long), 100); sh.Omitted != 9900 || len(sh.Head)+len(sh.Tail) != 100 || sh.HeadLines != 0 || sh.TailLine != 1 {
		t.Errorf("a long line: %+v", sh)
	}
}

// TestStreamsTextNUL: output holding NUL bytes gets its marker between its
// head and tail, its own bytes untouched.
func TestStreamsTextNUL(t *testing.T) {
	out := "a\x00b\n" + strings.Repeat("x\n", 1000) + "end\x00\n"
	text := StreamsText(&Details{Stdout: out}, 100, "", nil)
	if !strings.HasPrefix(text, "a\x00b\n") || !strings.HasSuffix(text, "end\x00\n") || strings.Count(text, "\x00") != 2 || !strings.Contains(text, "left out") {
		t.Errorf("%q", text)
	}
}

func TestModelText(t *testing.T) {
	d := &Details{ExitCode: 2, Stdout: strings.Repeat("out\n", 5000), Stderr: "boom\n"}
	r := Reported{Details: d, Note: "Command timed out after 5 seconds", Hint: "raise it"}
	refer := func(id, stream string, offset int) string { return fmt.Sprintf("read %s/%s @%d", id, stream, offset) }
	text := ModelText(r, 1000, "abcd0123", refer)
	if !strings.HasPrefix(text, "Exit code: 2\nout\n") || !strings.HasSuffix(text, "out\nboom\nCommand timed out after 5 seconds\nhint: raise it\nExit code: 2") {
		t.Errorf("text:\n%s", text)
	}
	if !strings.Contains(text, "[... 19.0 KB of stdout left out, lines 126-4875; read abcd0123/stdout @126 ...]") {
		t.Errorf("marker:\n%s", text)
	}
	if len(text) > 1000+200 {
		t.Errorf("%d bytes shown for a budget of 1000", len(text))
	}
	if all := ModelText(r, -1, "", nil); strings.Contains(all, "left out") || strings.Count(all, "out\n") != 5000 {
		t.Errorf("negative: all of it; got %d bytes", len(all))
	}
	if !Cut(d, 0) || Cut(d, -1) || Cut(d, 1<<20) {
		t.Errorf("Cut")
	}
	empty := ModelText(Reported{Details: &Details{}}, 0, "", nil)
	if empty != "Exit code: 0" {
		t.Errorf("no output: %q", empty)
	}
	shell := StreamsText(d, 1000, "", ShellRefer)
	if !strings.Contains(shell, "; to see them, run the command again piped through head, tail or grep ...]") {
		t.Errorf("shell marker: %s", shell)
	}
}

func TestOutputStore(t *testing.T) {
	dir := t.TempDir()
	id, err := SaveOutput(dir, []byte("o\n"), []byte("e\n"))
	if err != nil {
		t.Fatal(err)
	}
	for stream, want := range map[string]string{"stdout": "o\n", "stderr": "e\n"} {
		f, size, err := OpenOutput(dir, id+"/"+stream)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 10)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) != want || size != int64(len(want)) {
			t.Errorf("%s: %q (%d)", stream, b[:n], size)
		}
	}
	for _, bad := range []string{"../x", id, id + "/stdin", id + "/../" + id + "/stdout", "/etc/passwd", "ABCDEF01/stdout", ""} {
		if _, _, err := OpenOutput(dir, bad); !result.As(err).Usage {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	if _, _, err := OpenOutput(dir, "00000000/stdout"); result.As(err).Code != result.NotFound {
		t.Errorf("unknown id: %v", err)
	}
	// A link planted in place of a stream is refused, never followed.
	planted := filepath.Join(dir, "0000000a")
	os.Mkdir(planted, 0o700)
	os.Symlink("/etc/passwd", filepath.Join(planted, "stdout"))
	if f, _, err := OpenOutput(dir, "0000000a/stdout"); err == nil {
		f.Close()
		t.Errorf("a planted link was followed")
	}
}

func TestOutputRetention(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i := 0; i < keepOutputs+5; i++ {
		id, err := SaveOutput(dir, []byte("x"), nil)
		if err != nil {
			t.Fatal(err)
		}
		// Older runs look older (mtime), as they are on a real machine.
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		os.Chtimes(filepath.Join(dir, id), old, old)
		ids = append(ids, id)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != keepOutputs {
		t.Errorf("%d outputs kept, want %d", len(ents), keepOutputs)
	}
	if _, err := os.Stat(filepath.Join(dir, ids[0])); err == nil {
		t.Errorf("the oldest output is still kept")
	}
	if _, err := os.Stat(filepath.Join(dir, ids[len(ids)-1])); err != nil {
		t.Errorf("the newest output is gone")
	}
	// Past the byte bound, older ones go too.
	big := make([]byte, keepOutputBytes/2+1)
	if _, err := SaveOutput(dir, big, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveOutput(dir, big, nil); err != nil {
		t.Fatal(err)
	}
	ents, _ = os.ReadDir(dir)
	var total int64
	for _, e := range ents {
		fi, _ := os.Stat(filepath.Join(dir, e.Name(), "stdout"))
		total += fi.Size()
	}
	if total > keepOutputBytes+int64(len(big)) {
		t.Errorf("%d bytes kept", total)
	}
}

// FuzzShorten: any stream, any budget: no panic, and what is shown plus
// what is left out is the stream, within the budget.
func FuzzShorten(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), 4)
	f.Add([]byte(strings.Repeat("x", 100)), 10)
	f.Add([]byte("\n\n\n\n"), 2)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		sh := Shorten(b, n)
		if sh.Omitted == 0 {
			if sh.Head != string(b) || sh.Tail != "" {
				t.Fatalf("nothing omitted but the text differs")
			}
			return
		}
		head, tail := sh.Head, sh.Tail
		if !strings.HasPrefix(string(b), head) || !strings.HasSuffix(string(b), tail) {
			t.Fatalf("head/tail not the stream's")
		}
		if int64(len(head)+len(tail))+sh.Omitted != int64(len(b)) || len(head)+len(tail) > n {
			t.Fatalf("%d + %d + %d != %d (budget %d)", len(head), len(tail), sh.Omitted, len(b), n)
		}
		if sh.HeadLines+sh.Lines+1 != sh.TailLine {
			t.Fatalf("lines: head %d, left out %d, tail from %d", sh.HeadLines, sh.Lines, sh.TailLine)
		}
	})
}

// TestOutputStoreLinkedRun: a run directory replaced by a link (to a
// directory holding a stdout) is refused, never read through.
func TestOutputStoreLinkedRun(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "stdout"), []byte("secret\n"), 0o600)
	os.Symlink(elsewhere, filepath.Join(dir, "0000000b"))
	if f, _, err := OpenOutput(dir, "0000000b/stdout"); err == nil {
		f.Close()
		t.Errorf("a linked run directory was followed")
	}
}
