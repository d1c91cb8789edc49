package gitobj

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// A blob's id names content, not where it came from: a command that may
// write .git (exec.git-write) can plant a blob of its choosing under any
// diff's index line, and --3way would merge from it — a line neither the
// patch nor the file has. InHistory tells a blob of HEAD's history from
// one no commit holds. (A command that may write .git can also write a
// commit and move HEAD; this closes the planted blob, not that.)

// Bounds of a walk of the history: commits, and tree entries read.
const (
	maxHistoryCommits = 20000
	maxHistoryEntries = 2000000
)

// ErrHistoryTooLong: the walk stopped at its bounds before it found the
// blob; whether HEAD's history holds it is not known.
var ErrHistoryTooLong = fmt.Errorf("HEAD's history is longer than hunk walks (%d commits, %d tree entries)", maxHistoryCommits, maxHistoryEntries)

// InHistory reports whether a tree of a commit reachable from HEAD holds
// the blob whose full id is id.
func (s *Store) InHistory(id string) (bool, error) {
	want, err := hex.DecodeString(strings.ToLower(id))
	if err != nil || len(want) != s.hashLen() {
		return false, fmt.Errorf("%q is not a full object id", id)
	}
	head, err := s.head()
	if err != nil {
		return false, err
	}
	w := &historyWalk{s: s, want: want, trees: map[string]bool{}}
	commits, seen := [][]byte{head}, map[string]bool{string(head): true}
	for n := 0; len(commits) > 0; n++ {
		if n >= maxHistoryCommits {
			return false, ErrHistoryTooLong
		}
		c := commits[0]
		commits = commits[1:]
		tree, parents, err := s.commit(c)
		if err != nil {
			return false, err
		}
		if found, err := w.tree(tree); found || err != nil {
			return found, err
		}
		for _, p := range parents {
			if !seen[string(p)] {
				seen[string(p)] = true
				commits = append(commits, p)
			}
		}
	}
	return false, nil
}

// historyWalk is one InHistory's look through trees (each read once).
type historyWalk struct {
	s       *Store
	want    []byte
	trees   map[string]bool
	entries int
}

// maxTreeDepth bounds how deep trees nest (a command that may write .git
// can make them nest as deep as it likes).
const maxTreeDepth = 4096

// tree reports whether the tree id, or a tree below it, holds w.want.
func (w *historyWalk) tree(id []byte) (bool, error) {
	return w.treeAt(id, 0)
}

func (w *historyWalk) treeAt(id []byte, depth int) (bool, error) {
	if depth > maxTreeDepth {
		return false, ErrHistoryTooLong
	}
	if w.trees[string(id)] {
		return false, nil
	}
	w.trees[string(id)] = true
	typ, data, err := w.s.read(id, 0)
	if err != nil {
		return false, fmt.Errorf("tree %x: %w", id, err)
	}
	if typ != objTree {
		return false, fmt.Errorf("object %x is a %s, not a tree", id, typeName(typ))
	}
	n := w.s.hashLen()
	var subtrees [][]byte
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+n {
			return false, fmt.Errorf("tree %x is damaged", id)
		}
		mode, oid := string(data[:sp]), data[nul+1:nul+1+n]
		data = data[nul+1+n:]
		if w.entries++; w.entries > maxHistoryEntries {
			return false, ErrHistoryTooLong
		}
		switch mode {
		case "40000":
			subtrees = append(subtrees, oid)
		case "160000": // a submodule's commit: another repository's
		default:
			if bytes.Equal(oid, w.want) {
				return true, nil
			}
		}
	}
	for _, t := range subtrees {
		if found, err := w.treeAt(t, depth+1); found || err != nil {
			return found, err
		}
	}
	return false, nil
}

// commit reads a commit's tree and parents.
func (s *Store) commit(id []byte) (tree []byte, parents [][]byte, err error) {
	typ, data, err := s.read(id, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("commit %x: %w", id, err)
	}
	if typ != objCommit {
		return nil, nil, fmt.Errorf("object %x is a %s, not a commit", id, typeName(typ))
	}
	head, _, _ := bytes.Cut(data, []byte("\n\n"))
	for _, line := range bytes.Split(head, []byte("\n")) {
		k, v, _ := bytes.Cut(line, []byte(" "))
		switch string(k) {
		case "tree":
			tree, err = hex.DecodeString(string(v))
		case "parent":
			var p []byte
			if p, err = hex.DecodeString(string(v)); err == nil {
				parents = append(parents, p)
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("commit %x is damaged", id)
		}
	}
	if len(tree) != s.hashLen() {
		return nil, nil, fmt.Errorf("commit %x names no tree", id)
	}
	return tree, parents, nil
}

// head is the commit HEAD names: directly, or through its ref (a loose
// ref file, else packed-refs).
func (s *Store) head() ([]byte, error) {
	ref := "HEAD"
	for range 5 { // symbolic refs on symbolic refs
		b, err := s.fsys.ReadFile(".git/" + ref)
		if err != nil {
			if ref == "HEAD" {
				return nil, fmt.Errorf("no HEAD: %w", err)
			}
			return s.packedRef(ref)
		}
		line := strings.TrimSpace(string(b))
		if r, ok := strings.CutPrefix(line, "ref: "); ok {
			if strings.Contains(r, "..") {
				return nil, fmt.Errorf("HEAD names %q", r)
			}
			ref = r
			continue
		}
		id, err := hex.DecodeString(line)
		if err != nil || len(id) != s.hashLen() {
			return nil, fmt.Errorf("%s holds %q, not a commit id", ref, line)
		}
		return id, nil
	}
	return nil, errors.New("HEAD's symbolic refs go round")
}

// packedRef is ref's id in .git/packed-refs.
func (s *Store) packedRef(ref string) ([]byte, error) {
	b, err := s.fsys.ReadFile(".git/packed-refs")
	if err != nil {
		return nil, fmt.Errorf("HEAD's branch %s has no commit yet", ref)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			if raw, err := hex.DecodeString(id); err == nil && len(raw) == s.hashLen() {
				return raw, nil
			}
		}
	}
	return nil, fmt.Errorf("HEAD's branch %s has no commit yet", ref)
}
