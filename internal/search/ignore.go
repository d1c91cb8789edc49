package search

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
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

// An ignore file is read within bounds, as ripgrep bounds what it reads:
// its first maxIgnoreBytes, its first maxIgnoreRules rules (a real one has
// hundreds; every file searched is matched against each). What is past
// them is not applied, and the search says so (skipped): a 3 GB sparse
// .gitignore no longer takes the search's memory, nor a million rules its
// time.
const (
	maxIgnoreBytes = 4 << 20
	maxIgnoreRules = 10000
)

// readIgnore reads the ignore file name through open (none there: no
// rules), within the bounds; note says what was left out.
func readIgnore(open func(string) (*os.File, error), name string) (rules []ignoreRule, note string) {
	f, err := open(name)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, ""
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
	if err != nil {
		return nil, "not read: " + err.Error()
	}
	if len(data) > maxIgnoreBytes {
		data = data[:bytes.LastIndexByte(data[:maxIgnoreBytes], '\n')+1]
		note = fmt.Sprintf("an ignore file over %d MiB: only its first %d MiB applied", maxIgnoreBytes>>20, maxIgnoreBytes>>20)
	}
	rules = parseIgnoreN(data, maxIgnoreRules+1)
	if len(rules) > maxIgnoreRules {
		rules = rules[:maxIgnoreRules]
		note = fmt.Sprintf("an ignore file of over %d rules: only its first %d applied", maxIgnoreRules, maxIgnoreRules)
	}
	return rules, note
}

// parseIgnore reads an ignore file's rules.
func parseIgnore(data []byte) []ignoreRule { return parseIgnoreN(data, -1) }

// parseIgnoreN reads at most max rules (-1: all).
func parseIgnoreN(data []byte, max int) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() && (max < 0 || len(rules) < max) {
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
