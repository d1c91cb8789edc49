package placeholder

import (
	"strings"
	"testing"
)

// TestFind: a placeholder comment in the new text, standing for lines the
// old text has and the new one leaves out, in the file's comment syntax.
func TestFind(t *testing.T) {
	for _, c := range []struct {
		name, file, old, new string
		want                 int
	}{
		{"go existing code", "a.go", "func a() {\n\tx()\n\ty()\n}", "func a() {\n\t// ... existing code ...\n\tz()\n}", 1},
		{"python rest of file", "a.py", "import os\nimport sys\n\ndef f():\n    pass", "import os\n# ... rest of the file ...", 1},
		{"bare dots", "a.js", "a()\nb()\nc()", "a()\n// ...\nd()", 1},
		{"unicode ellipsis", "a.rs", "a();\nb();", "// …\nc();", 0},
		{"html", "a.html", "<p>a</p>\n<p>b</p>", "<!-- ... existing markup ... -->\n<p>c</p>", 0},
		{"sql dashes", "q.sql", "select 1;\nselect 2;", "-- ... rest of the queries unchanged\nselect 3;", 0},
		{"block comment", "a.c", "int a;\nint b;", "/* ... existing code ... */\nint c;", 0},
		{"phrase without dots", "a.ts", "a();\nb();", "// rest of the code remains the same\nc();", 0},
		{"nothing left out", "a.go", "a()", "a()\n// ...", -1},
		{"the comment was there", "a.go", "a()\n// ...\nb()", "// ...\nc()", -1},
		{"python Ellipsis is code", "a.py", "def f():\n    return 1", "def f():\n    ...", -1},
		{"a hash in Go is not a comment", "a.go", "a()\nb()", "# ...\nc()", -1},
		{"a real comment", "a.go", "a()\nb()", "// call c instead: b was slow\nc()", -1},
		{"a real comment naming the rest", "a.go", "a()\nb()", "// the rest of the loop retries on error\nc()", -1},
		{"unknown language: any syntax", "notes.txt", "a\nb", "# ... existing text ...\nc", 0},
	} {
		if got := Find(c.file, strings.Split(c.old, "\n"), strings.Split(c.new, "\n")); got != c.want {
			t.Errorf("%s: Find = %d, want %d", c.name, got, c.want)
		}
	}
}

func FuzzFind(f *testing.F) {
	f.Add("a.go", "a\nb", "// ...\nc")
	f.Fuzz(func(t *testing.T, name, old, new string) {
		n := strings.Split(new, "\n")
		if i := Find(name, strings.Split(old, "\n"), n); i < -1 || i >= len(n) {
			t.Fatalf("Find = %d of %d lines", i, len(n))
		}
	})
}

// elisionLowered is elision as it was written first: the whole comment
// lowered, then read.
func elisionLowered(body string) bool {
	b := strings.ToLower(body)
	lead := strings.HasPrefix(b, "...") || strings.HasPrefix(b, "…")
	trail := strings.HasSuffix(b, "...") || strings.HasSuffix(b, "…")
	dots := lead || trail
	b = strings.Trim(b, ".… \t[]()")
	if b == "" {
		return dots
	}
	if lead && trail && len(b) <= 60 {
		return true
	}
	lead3 := strings.TrimPrefix(strings.TrimPrefix(b, "the "), "all ")
	for _, phrase := range phrases {
		if dots && strings.Contains(b, phrase) || strings.HasPrefix(lead3, phrase) && len(lead3) <= len(phrase)+30 && !strings.HasPrefix(b, "the rest") {
			return true
		}
	}
	return false
}

// FuzzElision: elision, which lowers no copy of an ASCII comment without
// dots, reads every comment as lowering the whole of it does.
func FuzzElision(f *testing.F) {
	for _, s := range []string{"...", "Rest of the code", "The REST of the loop", "all existing code here", "existing code ...", "…",
		"Unchanged", "the unchanged part of a rather long comment that goes on and on", "[...]", "keep existing ()", "ALL Other Code"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := elision(s), elisionLowered(s); got != want {
			t.Fatalf("elision(%q) = %v, lowered whole: %v", s, got, want)
		}
	})
}
