package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The layering check: docs/code.md lists every package, each above the
// packages it imports (its first code block, one package per line that
// begins with its directory). A package missing from the list, or one
// that imports a package listed above it, is a breach: the map a newcomer
// reads first stays true.

const module = "github.com/hunk-dev/hunk/"

// layerOrder reads the packages' order from docs/code.md under root.
func layerOrder(root string) ([]string, error) {
	f, err := os.Open(filepath.Join(root, "docs", "code.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var order []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if !in || l == "" || l[0] == ' ' {
			continue
		}
		dir := strings.TrimSuffix(strings.Fields(l)[0], "/")
		if strings.HasPrefix(dir, "internal/") || dir == "cmd" {
			order = append(order, dir)
		}
	}
	return order, sc.Err()
}

// layerBreaches checks imports (package directory -> the module's
// packages it imports) against the order of docs/code.md.
func layerBreaches(root string, imports map[string]map[string]bool) []string {
	order, err := layerOrder(root)
	if err != nil {
		return []string{"docs/code.md: " + err.Error()}
	}
	rank := map[string]int{}
	for i, d := range order {
		rank[d] = i
	}
	var out []string
	for dir, imps := range imports {
		if !strings.HasPrefix(dir, "internal/") && dir != "cmd" {
			continue
		}
		r, ok := rank[dir]
		if !ok {
			out = append(out, fmt.Sprintf("docs/code.md: package %s is not in the list of packages", dir))
			continue
		}
		for imp := range imps {
			if ri, ok := rank[imp]; ok && ri <= r {
				out = append(out, fmt.Sprintf("%s imports %s, listed above it in docs/code.md (a back-edge, or the list is out of order)", dir, imp))
			}
		}
	}
	for _, d := range order {
		if _, ok := imports[d]; !ok {
			out = append(out, fmt.Sprintf("docs/code.md: package %s is listed but has no Go files", d))
		}
	}
	return out
}
