package apply

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/gitobj"
	"github.com/hunk-dev/hunk/internal/merge"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Objects are the blobs a three-way merge starts from: the workspace's
// repository (gitobj.Store).
type Objects interface {
	Blob(id string) ([]byte, error)
	Has(id string) bool
}

// What FileResult.Merge says of a three-way merge.
const (
	MergeClean     = "clean"     // merged with no conflict
	MergeConflicts = "conflicts" // merged; FileResult.Conflicts regions between markers
)

// threeWay applies f's chunks as git apply --3way does: to the blob its
// index line names (the preimage the diff was made from), which gives
// theirs, then merges theirs with cur (ours) from that preimage, with
// git's merge and its conflict markers. ok is false when no merge could
// be made — no index line, a blob the repository lacks, chunks that do not
// apply to it, a binary side — and why says which; the caller then applies
// the chunks to cur directly, as git falls back to.
func threeWay(name string, cur []byte, f *patchparse.FileOp, opt Options) (out []byte, conflicts int, why string, ok bool) {
	id, named := indexID(f.OldHash)
	if !named {
		return nil, 0, "no index line names the blob the diff was made from", false
	}
	base, err := opt.ThreeWay.Blob(id)
	switch {
	case errors.Is(err, gitobj.ErrNotFound):
		return nil, 0, fmt.Sprintf("the repository lacks blob %s, which the diff was made from", id), false
	case err != nil:
		return nil, 0, fmt.Sprintf("blob %s: %v", id, err), false
	}
	strict := opt
	strict.Strict = true
	theirs, _, err := applyChunks(name, base, f.Chunks, strict)
	if err != nil {
		return nil, 0, fmt.Sprintf("the diff does not apply to blob %s, which it names", id), false
	}
	if textfile.IsBinary(base) || textfile.IsBinary(cur) || textfile.IsBinary(theirs) {
		return nil, 0, "binary content is not merged", false
	}
	// git's trivial cases first (three_way_merge): a side that is the
	// base gives the other.
	switch {
	case bytes.Equal(base, cur):
		return theirs, 0, "", true
	case bytes.Equal(base, theirs), bytes.Equal(cur, theirs):
		return cur, 0, "", true
	}
	r := merge.Merge(base, cur, theirs, merge.Options{Ours: "ours", Theirs: "theirs", Level: merge.Zealous, Favor: opt.Favor})
	return r.Text, r.Conflicts, "", true
}

// RepositoryObjects opens the objects of the repository at the workspace's
// root for --3way (objects over max bytes refused); done closes them.
// Without one it is a usage error, as git apply --3way's outside a
// repository. inHistory: the repository is writable by commands
// (exec.git-write), so a blob is taken only when HEAD's history holds it
// — one a command planted is not a base (historyObjects).
func RepositoryObjects(fsys workspace.FS, max int64, inHistory bool) (Objects, func(), error) {
	store, err := gitobj.Open(fsys, max)
	if err != nil {
		return nil, nil, result.Usagef("--3way needs the git repository the diff was made in: %v", err).
			WithHint("run hunk in the repository's top directory (-C DIR), or apply the diff without --3way")
	}
	if inHistory {
		return &historyObjects{s: store, in: map[string]bool{}}, store.Close, nil
	}
	return store, store.Close, nil
}

// historyObjects are a store's blobs that HEAD's history holds: any other
// is as one the repository lacks (the diff then applies to the file
// directly, as git falls back to).
// Each blob's answer is kept: the placeholder look (Has) and the merge
// (Blob) ask of the same blobs, and one walk of the history answers both.
// A patch's files are planned on several workers at once: mu guards in
// (and lets one walk answer a blob asked for twice at once).
type historyObjects struct {
	s  *gitobj.Store
	mu sync.Mutex
	in map[string]bool // full id -> HEAD's history holds it
}

func (h *historyObjects) Blob(id string) ([]byte, error) {
	data, err := h.s.Blob(id)
	if err != nil {
		return nil, err
	}
	full := gitobj.BlobID(data, h.s.SHA256())
	h.mu.Lock()
	in, known := h.in[full]
	if !known {
		if in, err = h.s.InHistory(full); err == nil {
			h.in[full] = in
		}
	}
	h.mu.Unlock()
	switch {
	case err != nil:
		return nil, fmt.Errorf("not taken as a base: whether HEAD's history holds it is not known (%v), and commands may write this repository (exec.git-write)", err)
	case !in:
		return nil, errors.New("not taken as a base: no commit of HEAD's history holds it, and commands may write this repository (exec.git-write): a command may have planted it")
	}
	return data, nil
}

func (h *historyObjects) Has(id string) bool {
	_, err := h.Blob(id)
	return err == nil
}

// GitsText is placeholder.InPatch's question for a patch applied with opt:
// a git diff made from the very file (its index line names the file's
// content), or under --3way from a blob the repository has, is git's
// text, not a model's elision.
func GitsText(fsys workspace.FS, opt Options) func(*patchparse.FileOp) bool {
	return func(f *patchparse.FileOp) bool {
		return MadeFrom(fsys, f) || opt.ThreeWay != nil && hasPreimage(opt.ThreeWay, f)
	}
}

// Conflict is --3way's error when it wrote conflicts (CONFLICT, exit 1,
// naming each file and its count), nil otherwise.
func (r *Result) Conflict() *result.Error {
	var names []string
	for _, f := range r.Files {
		if f.Conflicts > 0 {
			names = append(names, fmt.Sprintf("%s (%s)", workspace.Quote(f.Path), result.Count(f.Conflicts, "conflict")))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return result.Errorf(result.Conflict, "applied with conflicts: %s", strings.Join(names, ", ")).
		WithHint("resolve each conflict between <<<<<<< ours and >>>>>>> theirs, or take the whole change back with hunk undo")
}

// hasPreimage reports whether objects hold the blob f's index line names
// (found, not read: the merge reads and checks it).
func hasPreimage(objects Objects, f *patchparse.FileOp) bool {
	id, ok := indexID(f.OldHash)
	return ok && objects.Has(id)
}

// FavorOf reads git apply's --ours, --theirs and --union ("" for none),
// which only --3way takes.
func FavorOf(name string, threeWay bool) (merge.Favor, error) {
	f, ok := map[string]merge.Favor{"": merge.Conflict, "ours": merge.Ours, "theirs": merge.Theirs, "union": merge.Union}[name]
	switch {
	case !ok:
		return 0, result.Usagef("favor must be ours, theirs or union, not %q", name)
	case f != merge.Conflict && !threeWay:
		return 0, result.Usagef("--%s needs --3way: it resolves what a three-way merge would leave as a conflict", name)
	}
	return f, nil
}
