package search

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/hunk-dev/hunk/internal/glob"
)

// ignoreRule is one line of a .gitignore, .ignore or .git/info/exclude,
// as git reads it.
type ignoreRule struct {
	segs     []string // the pattern's segments ("**" for any number)
	negate   bool     // !pattern: re-include
	dirOnly  bool     // pattern/: directories only
	anchored bool     // has a slash before its end: relative to the file's directory
}

// parseIgnore reads an ignore file's rules.
func parseIgnore(data []byte) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		// Trailing spaces go unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if i := strings.Index(line, "/"); i >= 0 {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		r.segs = strings.Split(line, "/")
		if !r.anchored {
			r.segs = append([]string{"**"}, r.segs...)
		}
		rules = append(rules, r)
	}
	return rules
}

// segment matches one path segment against one pattern segment, as git's
// wildmatch does within a segment (*, ?, [...], backslash escapes).
func segment(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// ignoreSet are the rules that apply in a directory: its own files' and
// those of the directories above it, each with the directory it is
// relative to.
type ignoreSet struct {
	parent *ignoreSet
	dir    string // workspace-relative ("" the root)
	rules  []ignoreRule
}

// decide says whether rel (workspace-relative) is ignored: the last rule
// that matches decides, the deepest file's rules last (git's order);
// matched reports whether any did.
func (s *ignoreSet) decide(rel string, isDir bool) (ignored, matched bool) {
	for set := s; set != nil; set = set.parent {
		sub := rel
		if set.dir != "" {
			if !strings.HasPrefix(rel, set.dir+"/") {
				continue
			}
			sub = rel[len(set.dir)+1:]
		}
		segs := strings.Split(sub, "/")
		for i := len(set.rules) - 1; i >= 0; i-- {
			r := set.rules[i]
			if r.dirOnly && !isDir {
				continue
			}
			if glob.Segments(r.segs, segs, segment) {
				return !r.negate, true
			}
		}
	}
	return false, false
}
