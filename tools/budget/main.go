// Command budget checks the size budget of hunk's source (make lint): no
// non-test Go file over 600 lines and no function over 100, but for the
// allow-list below, each entry with its reason; and the layering of
// docs/code.md (layers.go). It prints every breach and exits 1 when there
// is one.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

const (
	maxFileLines = 600
	maxFuncLines = 100
)

// doors are the packages held to a tighter budget: ops is the door from a
// request to an engine and back to an Output, and stays one (issue "the
// house": no engine grows in it again). 1,550 since verify: the change and
// its check are composed above ops (package verify), and ops holds only
// the seams it needs (Env.Recorded, UndoDetailed, the details' Check).
var doors = map[string]struct{ lines, funcLines int }{
	"internal/ops": {1550, 60},
}

// allowed are the functions and files that may be longer, and why: code
// whose length is its nature, which splitting would make harder to read.
var allowed = map[string]string{
	// The child between fork and exec runs with one thread and no Go
	// runtime to speak of (go:nosplit): every step is a raw system call in
	// one frame, in the order the kernel needs them; a call out of it
	// would need a stack check it must not make.
	"internal/sandbox/fork.go:childMain": "the post-fork child",
	// One BPF program: its jumps are counted in instructions, so the
	// table is built in one piece where each offset can be checked by eye.
	"internal/sandbox/seccomp.go:seccompProgram": "a generated BPF table",
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	var breaches []string
	doorLines := map[string]int{}
	imports := map[string]map[string]bool{} // package directory -> the module's packages it imports
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(p)
		pkg := path.Dir(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			if v := strings.Trim(im.Path.Value, `"`); strings.HasPrefix(v, module) {
				imports[pkg][strings.TrimPrefix(v, module)] = true
			}
		}
		door, isDoor := doors[path.Dir(rel)]
		funcBudget := maxFuncLines
		if isDoor {
			funcBudget = door.funcLines
			doorLines[path.Dir(rel)] += fset.Position(f.End()).Line
		}
		if n := fset.Position(f.End()).Line; n > maxFileLines && allowed[rel] == "" {
			breaches = append(breaches, fmt.Sprintf("%s: %d lines (budget %d)", rel, n, maxFileLines))
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) > 0 {
				t := fn.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if id, ok := t.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > funcBudget && allowed[rel+":"+name] == "" {
				breaches = append(breaches, fmt.Sprintf("%s:%d: %s is %d lines (budget %d)", rel, fset.Position(fn.Pos()).Line, name, n, funcBudget))
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "budget:", err)
		os.Exit(2)
	}
	for dir, n := range doorLines {
		if n > doors[dir].lines {
			breaches = append(breaches, fmt.Sprintf("%s: %d lines in all (budget %d: a door, not an engine)", dir, n, doors[dir].lines))
		}
	}
	breaches = append(breaches, layerBreaches(root, imports)...)
	sort.Strings(breaches)
	for _, b := range breaches {
		fmt.Println(b)
	}
	if len(breaches) > 0 {
		fmt.Printf("budget: %d over (files %d lines, functions %d; tools/budget/main.go says why any is allowed)\n", len(breaches), maxFileLines, maxFuncLines)
		os.Exit(1)
	}
}
