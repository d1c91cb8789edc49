package fsquery

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"

	"github.com/hunk-dev/hunk/internal/glob"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// treeNode is one node of Tree's JSON.
type treeNode struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Children *[]treeNode `json:"children,omitempty"`
}

// maxTreeEntries bounds a tree, so that a huge directory cannot exhaust memory.
const maxTreeEntries = 20000

// Tree is a directory's name and its tree as JSON; entries matching an exclude
// pattern (a glob on the name or the path below p) are left out.
func Tree(ws *workspace.Workspace, p string, exclude []string) (string, string, error) {
	name, err := ws.Resolve(p)
	if err != nil {
		return "", "", err
	}
	count := 0
	var walk func(dir, rel string) ([]treeNode, error)
	walk = func(dir, rel string) ([]treeNode, error) {
		_, ents, err := List(ws, dir)
		if err != nil {
			return nil, err
		}
		nodes := []treeNode{}
		for _, e := range ents {
			r := path.Join(rel, e.Name)
			if treeExcluded(exclude, r) {
				continue
			}
			if count++; count > maxTreeEntries {
				return nil, result.Errorf(result.TooLarge, "%s: more than %d entries", p, maxTreeEntries).
					WithHint("list a smaller directory, or leave some out with excludePatterns")
			}
			n := treeNode{Name: e.Name, Type: e.Type}
			if e.Type == "directory" {
				fi, lerr := ws.Lstat(path.Join(dir, e.Name))
				kids := []treeNode{}
				if lerr == nil && fi.Mode()&fs.ModeSymlink == 0 { // never follow a link into a loop
					if kids, err = walk(path.Join(dir, e.Name), r); err != nil {
						return nil, err
					}
				}
				n.Children = &kids
			}
			nodes = append(nodes, n)
		}
		return nodes, nil
	}
	nodes, err := walk(name, "")
	if err != nil {
		return "", "", err
	}
	b, _ := json.MarshalIndent(nodes, "", "  ")
	return name, string(b), nil
}

// treeExcluded is directory_tree's excludePatterns, as the reference
// server applies them: a pattern with a * is matched against rel (the path
// below the tree's root); any other names a file or directory anywhere
// (rel itself, **/PATTERN or anything below **/PATTERN/).
func treeExcluded(patterns []string, rel string) bool {
	for _, p := range patterns {
		if strings.Contains(p, "*") {
			if glob.Minimatch(p, rel) {
				return true
			}
			continue
		}
		if glob.Minimatch(p, rel) || glob.Minimatch("**/"+p, rel) || glob.Minimatch("**/"+p+"/**", rel) {
			return true
		}
	}
	return false
}

// searchExcluded is search_files' excludePatterns: rel matches one.
func searchExcluded(patterns []string, rel string) bool {
	for _, p := range patterns {
		if glob.Minimatch(p, rel) {
			return true
		}
	}
	return false
}

// maxSearchResults bounds a search.
const maxSearchResults = 10000

// Search finds the files and directories under p whose path (relative to
// p) matches a glob pattern (Glob: "*.go" the ones directly in p, "**/*.go"
// at any depth), leaving out excluded ones and what is below them; the
// matches are absolute paths, as the reference server returns them.
func Search(ws *workspace.Workspace, p, pattern string, exclude []string) ([]string, error) {
	if pattern == "" {
		return nil, result.Usagef("empty pattern")
	}
	name, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	var matches []string
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		_, ents, err := List(ws, dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			r := path.Join(rel, e.Name)
			if searchExcluded(exclude, r) {
				continue
			}
			if glob.Minimatch(pattern, r) {
				if len(matches) >= maxSearchResults {
					return nil
				}
				matches = append(matches, ws.Abs(path.Join(dir, e.Name)))
			}
			if e.Type == "directory" {
				if fi, err := ws.Lstat(path.Join(dir, e.Name)); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
					if err := walk(path.Join(dir, e.Name), r); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(name, ""); err != nil {
		return nil, err
	}
	if matches == nil {
		matches = []string{}
	}
	return matches, nil
}

// SearchText is search_files' text: a path a line, a name with a newline
// or an escape quoted (it forges no line; the matches keep names as they
// are), or "No matches found".
func SearchText(matches []string) string {
	if len(matches) == 0 {
		return "No matches found"
	}
	shown := make([]string, len(matches))
	for i, m := range matches {
		shown[i] = workspace.Quote(m)
	}
	return strings.Join(shown, "\n")
}
