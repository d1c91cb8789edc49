package verify

import (
	"slices"
	"testing"

	"github.com/hunk-dev/hunk/internal/execrun"
)

// TestDiagnostics: the findings of real checks' output — go vet, tsc,
// gcc, Python's traceback (its frames in Python itself passed over) —
// and none from lines that only look alike.
func TestDiagnostics(t *testing.T) {
	for name, c := range map[string]struct {
		out  string
		want []execrun.Diagnostic
	}{
		"go vet": {"# example.com/a\n./a.go:5:2: fmt.Printf format %d has arg s of wrong type string\n",
			[]execrun.Diagnostic{{File: "a.go", Line: 5, Column: 2, Message: "fmt.Printf format %d has arg s of wrong type string"}}},
		"tsc, not a terminal": {"src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
			[]execrun.Diagnostic{{File: "src/a.ts", Line: 1, Column: 7, Message: "error TS2322: Type 'string' is not assignable to type 'number'."}}},
		"tsc": {"src/index.ts:3:7: error TS2322: Type 'string' is not assignable to type 'number'.\n",
			[]execrun.Diagnostic{{File: "src/index.ts", Line: 3, Column: 7, Message: "error TS2322: Type 'string' is not assignable to type 'number'."}}},
		"python": {"Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/usr/lib/python3.11/ast.py\", line 50, in parse\n    return compile(source, filename, mode, flags,\n  File \"b.py\", line 2\n    def f(:\n          ^\nSyntaxError: invalid syntax\n",
			[]execrun.Diagnostic{{File: "b.py", Line: 2, Message: "SyntaxError: invalid syntax"}}},
		"not findings": {"ok: 3 passed\nhttp://example.com:80: up\n/usr/include/x.h:1: from a system header\n", nil},
	} {
		if got := diagnostics(c.out); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v, want %+v", name, got, c.want)
		}
	}
}

// TestConfiguredFor: {file} stands for every changed file the glob
// matches, one run; a command without it runs once; none matching, none.
func TestConfiguredFor(t *testing.T) {
	changed := []string{"a.go", "sub/b.go", "c.py"}
	argv, _, files := Configured{Glob: "**/*.go", Argv: []string{"gofmt", "-l", FileArg}}.For(changed)
	if !slices.Equal(argv, []string{"gofmt", "-l", "a.go", "sub/b.go"}) || len(files) != 2 {
		t.Errorf("argv %q files %q", argv, files)
	}
	// A name is an argument, never shell text nor an option.
	evil := []string{"$(touch pwned).py", "-rf.py"}
	if argv, sh, _ := (Configured{Glob: "*.py", Sh: "python3 -m py_compile {file}"}).For(evil); sh != "" ||
		!slices.Equal(argv, []string{"/bin/sh", "-c", `python3 -m py_compile "$@"`, "sh", "$(touch pwned).py", "./-rf.py"}) {
		t.Errorf("argv %q sh %q: the files as the line's arguments", argv, sh)
	}
	if argv, _, _ := (Configured{Glob: "**/*.ts", Argv: []string{"tsc"}}).For(changed); argv != nil {
		t.Errorf("no file matches, yet %q", argv)
	}
}

// FuzzDiagnostics: any output is read without a panic, into at most 50
// findings, each naming a relative file.
func FuzzDiagnostics(f *testing.F) {
	f.Add("a.go:1:2: x\n  File \"b.py\", line 3\nSyntaxError: y\n")
	f.Add(":1: x\n::\n a:b:c:\n")
	f.Fuzz(func(t *testing.T, out string) {
		ds := diagnostics(out)
		if len(ds) > 50 {
			t.Fatalf("%d findings", len(ds))
		}
		for _, d := range ds {
			if d.File == "" || d.File[0] == '/' || d.Line < 0 {
				t.Fatalf("finding %+v", d)
			}
		}
	})
}
