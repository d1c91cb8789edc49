package patchparse

import (
	"fmt"
	"strings"
	"testing"
)

// bigPatch builds a patch shaped like ../shared/bench/gen_bigpatch.py's:
// files Update sections of hunks chunks each (an "@@ def" header, 3 context
// lines, 2 removed, 3 added, 2 context), adds Add sections of addLines
// lines and deletes Delete sections; unified writes the same change as a
// git diff instead.
func bigPatch(files, hunks, adds, addLines, deletes int, unified bool) string {
	var b strings.Builder
	line := func(i, j int) string {
		return fmt.Sprintf("    x_%d = compute('gamma', %d, %d, %d)", j, i, j, (i*7919+j*104729)%1000003)
	}
	if !unified {
		b.WriteString("*** Begin Patch\n")
	}
	for i := 0; i < files; i++ {
		path := fmt.Sprintf("src/d%02d/file_%05d.py", i%50, i)
		if unified {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n", path, path, path, path)
		} else {
			fmt.Fprintf(&b, "*** Update File: %s\n", path)
		}
		for h := 0; h < hunks; h++ {
			s := h*150 + 8
			if unified {
				fmt.Fprintf(&b, "@@ -%d,7 +%d,8 @@ def func_%d():\n", s-2, s-2+h, h*6)
			} else {
				fmt.Fprintf(&b, "@@ def func_%d():\n", h*6)
			}
			for j := s - 3; j < s; j++ {
				b.WriteString(" " + line(i, j) + "\n")
			}
			for j := s; j < s+2; j++ {
				b.WriteString("-" + line(i, j) + "\n")
			}
			for k := 0; k < 3; k++ {
				fmt.Fprintf(&b, "+    y_%d_%d_%d = patched(%d)  # hunk %d\n", i, h, k, k, h)
			}
			for j := s + 2; j < s+4; j++ {
				b.WriteString(" " + line(i, j) + "\n")
			}
		}
	}
	for k := 0; k < deletes; k++ {
		if unified {
			fmt.Fprintf(&b, "diff --git a/del/gone_%04d.txt b/del/gone_%04d.txt\ndeleted file mode 100644\n--- a/del/gone_%04d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-obsolete\n-lines\n", k, k, k)
		} else {
			fmt.Fprintf(&b, "*** Delete File: del/gone_%04d.txt\n", k)
		}
	}
	for k := 0; k < adds; k++ {
		path := fmt.Sprintf("new/d%02d/added_%04d.txt", k%10, k)
		if unified {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, addLines)
		} else {
			fmt.Fprintf(&b, "*** Add File: %s\n", path)
		}
		for j := 0; j < addLines; j++ {
			fmt.Fprintf(&b, "+added file %d line %d theta\n", k, j)
		}
	}
	if !unified {
		b.WriteString("*** End Patch\n")
	}
	return b.String()
}

// BenchmarkParse parses 2,000-file patches: the shape of the apply-patch
// benchmark (3 chunks a file, ~3 MB), and a 10 MB one (10 chunks a file,
// bigger added files), as a Codex patch and as a git diff.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct {
		name                                  string
		files, hunks, adds, addLines, deletes int
	}{
		{"2000files-3MB", 2000, 3, 100, 50, 100},
		{"2000files-10MB", 2000, 10, 100, 500, 100},
	} {
		for _, unified := range []bool{false, true} {
			text := bigPatch(bc.files, bc.hunks, bc.adds, bc.addLines, bc.deletes, unified)
			name := bc.name + "/codex"
			if unified {
				name = bc.name + "/unified"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					p, err := Parse(text, Options{Strip: DefaultStrip})
					if err != nil {
						b.Fatal(err)
					}
					if len(p.Files) != bc.files+bc.adds+bc.deletes {
						b.Fatalf("%d files", len(p.Files))
					}
				}
			})
		}
	}
}

// TestBigPatch checks that the benchmark's patches parse as intended.
func TestBigPatch(t *testing.T) {
	for _, unified := range []bool{false, true} {
		p, err := Parse(bigPatch(20, 3, 2, 5, 2, unified), Options{Strip: DefaultStrip})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Files) != 24 {
			t.Fatalf("%d files", len(p.Files))
		}
		u := p.Files[3]
		if u.Kind != Update || u.Path != "src/d03/file_00003.py" || len(u.Chunks) != 3 || u.Chunks[1].Len() != 10 {
			t.Errorf("unified=%v: update = %+v", unified, u)
		}
		if a := p.Files[23]; a.Kind != Add || a.NumLines() != 5 {
			t.Errorf("unified=%v: add = %+v", unified, a)
		}
		if d := p.Files[20]; d.Kind != Delete || d.Path != "del/gone_0000.txt" {
			t.Errorf("unified=%v: delete = %+v", unified, d)
		}
	}
}
