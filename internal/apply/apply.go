// Package apply applies a parsed patch (internal/patchparse) to a workspace:
// plan, check, commit. Every path is resolved through the workspace and
// every chunk located before anything is written; then all files are
// committed in one transaction (workspace.Txn), so a failure anywhere leaves
// every file as it was.
//
// Chunks are located the way OpenAI Codex's apply_patch does — a cursor that
// only moves forward, an "@@ context" line found first, four passes (exact,
// trailing whitespace, surrounding whitespace, Unicode punctuation) of which
// the first with a hit wins, a retry without a trailing empty line, "***
// End of File" anchored at the end, pure additions at the end — and, outside
// --compat codex, made safe (a chunk that fits several places is AMBIGUOUS
// unless a line number or the @@ line decides) and extended with recoveries
// from the usual model mistakes, used only when they give one answer.
package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hunk-dev/hunk/internal/merge"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Options tune Apply and ApplyChunks.
type Options struct {
	// Compat "codex" reproduces Codex exactly: the first match wins, the
	// cursor never goes back, none of the recoveries, an updated file always
	// ends with a newline, and Add File / Move to may overwrite an existing
	// file. "" is hunk's own, safer behaviour.
	Compat string
	// Strict recovers none of the model mistakes hunk otherwise recovers
	// (the recoveries of recover.go, added lines as given, a git prefix on
	// a Codex path); Codex's passes, the uniqueness rules and the line
	// hints stay.
	Strict bool
	// Diff asks for a unified diff per file in the result.
	Diff bool
	// Display maps a workspace name to how messages show it (default: the
	// name itself, relative to the root).
	Display func(name string) string
	// Workers bounds the files planned at once (default: GOMAXPROCS, at least 2).
	Workers int
	// IfMatch, by workspace name, is the SHA-256 (hex, as
	// textfile.ParseIfMatch gives it) a file must have when the patch is
	// applied, checked under the files' lock (STALE otherwise).
	IfMatch map[string]string
	// AllowPlaceholders lets a whole file's content (aider's whole format)
	// hold a placeholder where the file has lines (wholeFile).
	AllowPlaceholders bool
	// ThreeWay, when set, applies each text diff of a file as git apply
	// --3way does: to the blob its index line names, taken from
	// ThreeWay, then merged with the file as it is (conflicts between
	// markers, counted in FileResult.Conflicts); where there is no such
	// blob, directly (FileResult.Merge says why).
	ThreeWay Objects
	// Favor, under ThreeWay, resolves what would conflict (git apply's
	// --ours, --theirs, --union); merge.Conflict writes markers.
	Favor merge.Favor

	format patchparse.Format // the patch's syntax, for hints in its own terms (set by Apply)
	// crlf: a unified diff's new text file at a path gets CRLF endings (the
	// work tree's core.autocrlf or eol attribute; gitattr.go); nil: none.
	crlf func(path string) bool
	// held: a unified chunk git holds to an end of the file (no trailing
	// context, a header at line 1) is found there or not at all, as git
	// apply finds it (the "already applied" test: AlreadyApplied).
	held bool
}

func (o Options) codex() bool { return o.Compat == "codex" }

func (o Options) display(name string) string {
	if o.Display != nil {
		return o.Display(name)
	}
	return name
}

// Result is what a successful Apply did. Paths are workspace names (relative
// to the root), in patch order; a moved file is listed as modified under its
// new name.
type Result struct {
	Added    []string     `json:"added"`
	Modified []string     `json:"modified"`
	Deleted  []string     `json:"deleted"`
	Files    []FileResult `json:"files"`
	// Notes say what was recovered in resolving the patch's paths.
	Notes []string `json:"-"`
}

// FileResult is one file operation of the patch.
type FileResult struct {
	Action  string   `json:"action" jsonschema:"add, modify, delete, or unchanged (SEARCH/REPLACE blocks all in the file already)"` // "add", "modify", "delete" or "unchanged"
	Path    string   `json:"path" jsonschema:"the file, relative to the workspace"`
	OldPath string   `json:"oldPath,omitempty" jsonschema:"a move's source"`                                          // a move's source
	Diff    string   `json:"diff,omitempty" jsonschema:"the file's change as a unified diff"`                         // with Options.Diff
	Matches []string `json:"matches,omitempty" jsonschema:"how each chunk was located (exact, or the recovery used)"` // how each chunk was located
	// Merge, under --3way: MergeClean, MergeConflicts, or "direct: "
	// and why the diff was applied to the file directly.
	Merge     string `json:"merge,omitempty" jsonschema:"--3way: clean, conflicts, or why the change was applied directly"`
	Conflicts int    `json:"conflicts,omitempty" jsonschema:"--3way: the conflicts left between <<<<<<< ours and >>>>>>> theirs"`
}

// op is a file operation with resolved names.
type op struct {
	idx    int
	src    *patchparse.FileOp
	name   string // resolved path
	moveTo string // resolved destination ("" for none)
	copyOf string // resolved source of a copy ("" for none)
}

// Apply plans, checks and commits patch p on fsys. On error nothing was
// changed; the error is a *result.Error naming the file and chunk.
func Apply(fsys workspace.FS, p *patchparse.Patch, opt Options) (*Result, error) {
	if p == nil || len(p.Files) == 0 {
		return nil, result.Errorf(result.InvalidPatch, "No files were modified.")
	}
	opt.format = p.Format
	if p.Format == patchparse.Unified {
		opt.crlf = crlfNew(fsys)
	}
	ops, names, notes, err := resolveOps(fsys, p, opt)
	if err != nil {
		return nil, err
	}
	if err := beyondLinks(ops, opt); err != nil {
		return nil, err
	}
	defer fsys.Done()
	unlock, err := fsys.Lock(names...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkIfMatch(fsys, opt); err != nil {
		return nil, err
	}
	txn := fsys.Begin()
	if p.Format == patchparse.Unified {
		// As git apply and GNU patch: a file removed or moved out of its
		// directory leaves no empty directory behind (Codex leaves it).
		txn.PruneEmptyDirs()
	}
	files, fails := planAll(fsys, txn, ops, opt)
	if len(fails) > 0 {
		txn.Abort()
		if opt.codex() {
			return nil, fails[0] // Codex stops at the first, in its own words
		}
		return nil, Combine(fails)
	}
	if err := txn.Commit(); err != nil {
		return nil, err
	}
	res := &Result{Added: []string{}, Modified: []string{}, Deleted: []string{}, Files: files, Notes: notes}
	for _, f := range files {
		if why, ok := strings.CutPrefix(f.Merge, "direct: "); ok {
			// git apply --3way's "Falling back to direct application".
			res.Notes = append(res.Notes, fmt.Sprintf("%s: not merged (%s); applied directly", opt.display(f.Path), why))
		}
		if f.Action == "unchanged" && f.Merge == MergeClean {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: already there with the diff's content (git's clean add/add merge); nothing written", opt.display(f.Path)))
		}
		switch f.Action {
		case "add":
			res.Added = append(res.Added, f.Path)
		case "modify":
			res.Modified = append(res.Modified, f.Path)
		case "delete":
			res.Deleted = append(res.Deleted, f.Path)
		}
	}
	return res, nil
}

// resolveOps resolves every file operation's names (to lock: names), a
// plain diff's by GNU patch's rule and a Codex path's git prefix taken off
// where only the bare path exists (said in notes).
func resolveOps(fsys workspace.FS, p *patchparse.Patch, opt Options) (ops []*op, names, notes []string, err error) {
	ops = make([]*op, len(p.Files))
	for i, f := range p.Files {
		if f.AltPath != "" {
			c := *f
			c.Path = existingName(fsys, f.Path, f.AltPath)
			f = &c
		}
		if p.Format == patchparse.Codex && !opt.codex() && !opt.Strict && f.Kind != patchparse.Add {
			// git's a/ or b/ prefix written into a Codex path: the file is
			// taken without it only where it exists only without it.
			if bare, ok := gitPrefixed(fsys, f.Path); ok {
				notes = append(notes, fmt.Sprintf("%s: read as %s (git's prefix removed)", f.Path, bare))
				c := *f
				c.Path = bare
				f = &c
			}
		}
		o := &op{idx: i, src: f}
		if o.name, err = fsys.Resolve(f.Path); err != nil {
			return nil, nil, nil, err
		}
		names = append(names, o.name)
		if f.Kind == patchparse.Update && f.MoveTo != "" {
			d, err := fsys.Resolve(f.MoveTo)
			if err != nil {
				return nil, nil, nil, err
			}
			if d != o.name {
				o.moveTo = d
				names = append(names, d)
			}
		}
		if f.CopyFrom != "" {
			if o.copyOf, err = fsys.Resolve(f.CopyFrom); err != nil {
				return nil, nil, nil, err
			}
			names = append(names, o.copyOf)
		}
		if o.name == "." {
			return nil, nil, nil, result.Errorf(result.IsDirectory, "%s: is the workspace root, not a file", f.Path)
		}
		ops[i] = o
	}
	return ops, names, notes, nil
}

// checkIfMatch refuses (STALE) a file whose content is not the hash
// opt.IfMatch gives it.
func checkIfMatch(fsys workspace.FS, opt Options) error {
	for name, want := range opt.IfMatch {
		content, err := fsys.ReadFile(name)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) && result.As(err).Code != result.NotFound {
			return err
		}
		if err := textfile.CheckHash(opt.display(name), content, exists, want); err != nil {
			return err
		}
	}
	return nil
}

// planAll plans every group of operations (groupOps) on workers, staging
// into txn: each file's result, or every failure, each at its place in the
// patch (a file's failure at its header line).
func planAll(fsys workspace.FS, txn workspace.Txn, ops []*op, opt Options) ([]FileResult, []error) {
	groups := groupOps(ops)
	files := make([]FileResult, len(ops))
	errs := make([]error, len(ops))
	workers := opt.Workers
	if workers <= 0 {
		workers = max(runtime.GOMAXPROCS(0), 2)
	}
	workers = min(workers, len(groups))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				g := int(next.Add(1) - 1)
				if g >= len(groups) {
					return
				}
				if i, err := planGroup(fsys, txn, groups[g], files, opt); err != nil {
					errs[i] = err
				}
			}
		}()
	}
	wg.Wait()
	var fails []error
	for i, err := range errs {
		if err != nil {
			if re := result.As(err); re.PatchLine == 0 && ops[i] != nil && ops[i].src.Line > 0 {
				err = re.AtLine(ops[i].src.Line)
			}
			fails = append(fails, err)
		}
	}
	return files, fails
}

// groupOps splits the operations into groups that touch disjoint paths (a
// move joins its source and destination, a path the paths under it); each
// group is planned in patch order by one worker (deletionsFirst aside), so several operations on one path behave as if
// applied one after the other. Groups are ordered by their first operation.
func groupOps(ops []*op) [][]*op {
	parent := make([]int, len(ops))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		a, b := find(i), find(j)
		if a < b {
			a, b = b, a
		}
		parent[a] = b
	}
	owner := make(map[string]int, len(ops))
	claim := func(name string, i int) {
		if j, ok := owner[name]; ok {
			union(i, j)
			return
		}
		owner[name] = i
	}
	for i, o := range ops {
		claim(o.name, i)
		if o.moveTo != "" {
			claim(o.moveTo, i)
		}
	}
	// A path and one under it (d and d/f: a directory replaced by a file,
	// or the reverse) are one group: which of them the disk holds depends
	// on both.
	for i, o := range ops {
		for _, n := range []string{o.name, o.moveTo} {
			for d := parentOf(n); n != "" && d != "." && d != "/"; d = parentOf(d) {
				if j, ok := owner[d]; ok {
					union(i, j)
				}
			}
		}
	}
	byRoot := map[int]int{}
	var groups [][]*op
	for i, o := range ops {
		r := find(i)
		g, ok := byRoot[r]
		if !ok {
			g = len(groups)
			byRoot[r] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], o)
	}
	return groups
}

// Summary is Codex's summary text: "Success. Updated the following files:"
// then "A path", "M path", "D path" lines.
//
// Under --3way a file merged with conflicts is "U path", as git status
// lists it, under "Applied with conflicts." instead.
func (r *Result) Summary() string {
	var b bytes.Buffer
	conflicted := map[string]bool{}
	for _, f := range r.Files {
		if f.Conflicts > 0 {
			conflicted[f.Path] = true
		}
	}
	if len(conflicted) > 0 {
		b.WriteString("Applied with conflicts. Updated the following files:\n")
	} else {
		b.WriteString("Success. Updated the following files:\n")
	}
	for _, p := range r.Added {
		b.WriteString("A " + workspace.Quote(p) + "\n")
	}
	for _, p := range r.Modified {
		if conflicted[p] {
			b.WriteString("U " + workspace.Quote(p) + "\n")
			continue
		}
		b.WriteString("M " + workspace.Quote(p) + "\n")
	}
	for _, p := range r.Deleted {
		b.WriteString("D " + workspace.Quote(p) + "\n")
	}
	return b.String()
}

// Diff is every changed file's diff, one after the other (each is there
// when Options.Diff asked for it).
func (r *Result) Diff() string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}

// hint is a hint in the patch's own terms: codex for a Codex patch (and
// SEARCH/REPLACE blocks), unified for a unified diff.
func (o Options) hint(codex, unified string) string {
	if o.format == patchparse.Unified {
		return unified
	}
	return codex
}

// hint3 is hint with its own words for SEARCH/REPLACE blocks.
func (o Options) hint3(codex, unified, blocks string) string {
	if o.blocks() {
		return blocks
	}
	return o.hint(codex, unified)
}

// unit is what a message calls one chunk of the patch: a SEARCH/REPLACE
// block, or a chunk.
func (o Options) unit() string {
	if o.blocks() {
		return "block"
	}
	return "chunk"
}

// blocks reports whether the patch is SEARCH/REPLACE blocks (aider's,
// Cline's, Roo's).
func (o Options) blocks() bool {
	return o.format.Blocks()
}
