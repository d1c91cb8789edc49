package diff

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\n", "a\n", ""},
		{"change", "a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"create", "", "a\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"},
		{"delete", "a\nb\n", "", "--- x\n+++ y\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"no final newline", "a\n", "a", "--- x\n+++ y\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unified("x", "y", []byte(tt.old), []byte(tt.new)); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// applyUnified applies diff text produced by Unified to old (test helper).
func applyUnified(t *testing.T, old, d string) string {
	t.Helper()
	a := splitLines(old)
	var out []string
	lines := strings.Split(d, "\n")
	ai := 0
	last := byte(0)
	for k := 2; k < len(lines); k++ {
		l := lines[k]
		if l != "" && l[0] != '\\' {
			last = l[0]
		}
		switch {
		case strings.HasPrefix(l, "@@"):
			var from int
			f := strings.Fields(l)[1][1:]
			fmt.Sscanf(strings.Split(f, ",")[0], "%d", &from)
			if strings.HasSuffix(f, ",0") {
				from++ // an empty range names the line before
			}
			for ai < from-1 {
				out = append(out, a[ai])
				ai++
			}
		case l == `\ No newline at end of file`:
			if last != '-' {
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
		case strings.HasPrefix(l, "-"):
			ai++
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, " "):
			out = append(out, l[1:]+"\n")
			if l[0] == ' ' {
				ai++
			}
		}
	}
	out = append(out, a[ai:]...)
	return strings.Join(out, "")
}

func TestUnifiedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "}\n", "\n", "x\n", "y\n"}
	gen := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			if r.Intn(3) == 0 {
				fmt.Fprintf(&sb, "line %d\n", r.Intn(50))
			} else {
				sb.WriteString(words[r.Intn(len(words))])
			}
		}
		s := sb.String()
		if r.Intn(4) == 0 {
			s = strings.TrimSuffix(s, "\n")
		}
		return s
	}
	for it := 0; it < 3000; it++ {
		a := gen(r.Intn(60))
		b := a
		switch r.Intn(3) {
		case 0:
			b = gen(r.Intn(60))
		default:
			// a few local edits
			ls := splitLines(a)
			for e := 0; e < 1+r.Intn(3) && len(ls) > 0; e++ {
				p := r.Intn(len(ls))
				switch r.Intn(3) {
				case 0:
					ls = append(ls[:p], ls[p+1:]...)
				case 1:
					ls = append(ls[:p], append([]string{"new\n"}, ls[p:]...)...)
				default:
					ls[p] = "changed\n"
				}
			}
			b = strings.Join(ls, "")
		}
		d := Unified("a", "b", []byte(a), []byte(b))
		if a == b {
			if d != "" {
				t.Fatalf("equal texts gave a diff")
			}
			continue
		}
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("round trip failed\na=%q\nb=%q\ndiff:\n%s\ngot=%q", a, b, d, got)
		}
	}
}

func BenchmarkUnifiedLongFile(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "    line %d of a long file\n", i)
	}
	old := sb.String()
	nw := strings.Replace(strings.Replace(old, "line 100 ", "LINE 100 ", 1), "line 400 ", "LINE 400 ", 1)
	for i := 0; i < b.N; i++ {
		Unified("a", "b", []byte(old), []byte(nw))
	}
}

// BenchmarkRewrite diffs a block rewritten whole, of 1,000 to 5,000
// lines: past the LCS table's bound it is git's Myers with its cut-offs,
// so the cost grows with the block, not with its square (hunk write
// --diff of a 5,000-line rewrite took 6.5-8.6 s with gotextdiff's).
func BenchmarkRewrite(b *testing.B) {
	for _, n := range []int{1000, 1100, 3000, 5000} {
		var old, nw strings.Builder
		for i := range n {
			fmt.Fprintf(&old, "old line %d of the block\n", i)
			fmt.Fprintf(&nw, "new line %d, rewritten\n", i)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				if Unified("a", "b", []byte(old.String()), []byte(nw.String())) == "" {
					b.Fatal("no diff")
				}
			}
		})
	}
}

// TestRewriteRoundTrip: the diff of a large rewrite (git's Myers, past the
// LCS bound) removes every old line and adds every new one, and git apply
// takes it.
func TestRewriteRoundTrip(t *testing.T) {
	var old, nw strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&old, "old %d\n", i)
		if i%7 == 0 {
			fmt.Fprintf(&nw, "old %d\n", i) // some lines kept
		} else {
			fmt.Fprintf(&nw, "new %d\n", i)
		}
	}
	d := Unified("a/f", "b/f", []byte(old.String()), []byte(nw.String()))
	minus, plus := 0, 0
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			minus++
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			plus++
		}
	}
	if minus != plus || minus < 3000*6/7-1 || minus > 3000 {
		t.Fatalf("the rewrite's diff removes %d and adds %d lines", minus, plus)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git: the round trip through git apply is not tried")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte(old.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "p.diff"), []byte(d), 0o644)
	cmd := exec.Command(git, "apply", "p.diff")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != nw.String() {
		t.Fatal("git apply of the diff did not give the new content")
	}
}
