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
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hunk-dev/hunk/internal/diff"
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

	format patchparse.Format // the patch's syntax, for hints in its own terms (set by Apply)
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
	Action  string   `json:"action" jsonschema:"add, modify or delete"` // "add", "modify" or "delete"
	Path    string   `json:"path" jsonschema:"the file, relative to the workspace"`
	OldPath string   `json:"oldPath,omitempty" jsonschema:"a move's source"`                                          // a move's source
	Diff    string   `json:"diff,omitempty" jsonschema:"the file's change as a unified diff"`                         // with Options.Diff
	Matches []string `json:"matches,omitempty" jsonschema:"how each chunk was located (exact, or the recovery used)"` // how each chunk was located
}

// op is a file operation with resolved names.
type op struct {
	idx    int
	src    *patchparse.FileOp
	name   string // resolved path
	moveTo string // resolved destination ("" for none)
	copyOf string // resolved source of a copy ("" for none)
}

// state is a path's content as the patch has left it so far.
type state struct {
	data    []byte
	exists  bool
	dir     bool        // a directory (on disk)
	link    bool        // a symlink (on disk; reads follow it)
	mode    fs.FileMode // the file's mode; a move gives it to the new file
	touched bool        // data/exists are the patch's, not the disk's
	chmod   bool        // the patch sets mode (git's "new mode"), even on an existing file
	// What the patch makes of the path, when touched: asLink, a symbolic
	// link whose target is data; gitlink, a submodule's empty directory;
	// replaced, the path was deleted first (a link there is replaced,
	// not written through).
	asLink, gitlink, replaced bool
	// whole: the new content stands in the place of the file's, derived
	// from none of it (an Add over a file the patch deleted, or one Codex's
	// Add or Move overwrites).
	whole bool
}

// Apply plans, checks and commits patch p on fsys. On error nothing was
// changed; the error is a *result.Error naming the file and chunk.
func Apply(fsys workspace.FS, p *patchparse.Patch, opt Options) (*Result, error) {
	if p == nil || len(p.Files) == 0 {
		return nil, result.Errorf(result.InvalidPatch, "No files were modified.")
	}
	opt.format = p.Format
	ops := make([]*op, len(p.Files))
	var names, notes []string
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
		n, err := fsys.Resolve(f.Path)
		if err != nil {
			return nil, err
		}
		o.name = n
		names = append(names, n)
		if f.Kind == patchparse.Update && f.MoveTo != "" {
			d, err := fsys.Resolve(f.MoveTo)
			if err != nil {
				return nil, err
			}
			if d != n {
				o.moveTo = d
				names = append(names, d)
			}
		}
		if f.CopyFrom != "" {
			if o.copyOf, err = fsys.Resolve(f.CopyFrom); err != nil {
				return nil, err
			}
			names = append(names, o.copyOf)
		}
		if n == "." {
			return nil, result.Errorf(result.IsDirectory, "%s: is the workspace root, not a file", f.Path)
		}
		ops[i] = o
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
	for name, want := range opt.IfMatch {
		content, err := fsys.ReadFile(name)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) && result.As(err).Code != result.NotFound {
			return nil, err
		}
		if err := textfile.CheckHash(opt.display(name), content, exists, want); err != nil {
			return nil, err
		}
	}

	groups := groupOps(ops)
	txn := fsys.Begin()
	if p.Format == patchparse.Unified {
		// As git apply and GNU patch: a file removed or moved out of its
		// directory leaves no empty directory behind (Codex leaves it).
		txn.PruneEmptyDirs()
	}
	files := make([]FileResult, len(ops))
	errs := make([]error, len(ops))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
		if workers < 2 {
			workers = 2
		}
	}
	if workers > len(groups) {
		workers = len(groups)
	}
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
				grp := groups[g]
				if i, err := planGroup(fsys, txn, grp, files, opt); err != nil {
					errs[i] = err
				}
			}
		}()
	}
	wg.Wait()
	// Every file was planned: a failure names them all, each at its place
	// in the patch (a file's failure at its header line).
	var fails []error
	for i, err := range errs {
		if err != nil {
			if re := result.As(err); re.PatchLine == 0 && ops[i] != nil && ops[i].src.Line > 0 {
				err = re.AtLine(ops[i].src.Line)
			}
			fails = append(fails, err)
		}
	}
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

// groupOps splits the operations into groups that touch disjoint paths (a
// move joins its source and destination); each group is planned in patch
// order by one worker, so several operations on one path behave as if
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
	owner := make(map[string]int, len(ops))
	claim := func(name string, i int) {
		if j, ok := owner[name]; ok {
			a, b := find(i), find(j)
			if a < b {
				a, b = b, a
			}
			parent[a] = b
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

// planGroup plans one group's operations in order against an overlay of the
// paths they touch, then stages the final state of each path. It returns the
// index of the failing operation with the error.
func planGroup(fsys workspace.FS, txn workspace.Txn, grp []*op, files []FileResult, opt Options) (int, error) {
	overlay := map[string]*state{}
	var order []string
	get := func(name string) (*state, error) {
		if s, ok := overlay[name]; ok {
			return s, nil
		}
		s := &state{}
		fi, err := fsys.Lstat(name)
		switch {
		case err == nil:
			s.exists = true
			s.dir = fi.IsDir()
			s.link = fi.Mode()&fs.ModeSymlink != 0
			s.mode = fi.Mode()
		case result.As(err).Code == result.NotFound:
		default:
			return nil, err
		}
		overlay[name] = s
		order = append(order, name)
		return s, nil
	}
	// read returns a path's current content: the overlay's, or the file's
	// (through a symlink, which must stay inside the root).
	read := func(name string, s *state) ([]byte, error) {
		if s.touched {
			return s.data, nil
		}
		t := name
		if s.link {
			var err error
			if t, err = fsys.FollowLinks(name); err != nil {
				return nil, err
			}
			fi, err := fsys.Lstat(t)
			if err != nil {
				return nil, result.Errorf(result.NotFound, "%s: dangling symlink (to %s)", opt.display(name), t).At(name)
			}
			if fi.IsDir() {
				return nil, result.Errorf(result.IsDirectory, "%s: is a symlink to a directory", opt.display(name)).At(name)
			}
			s.mode = fi.Mode()
		}
		return fsys.ReadFile(t)
	}
	for _, o := range grp {
		f := o.src
		disp := opt.display(o.name)
		fr := FileResult{Path: o.name}
		var before []byte
		var after []byte
		switch f.Kind {
		case patchparse.Add:
			s, err := get(o.name)
			if err != nil {
				return o.idx, err
			}
			if f.Gitlink {
				// A new submodule is an empty directory in a plain work
				// tree, as git apply makes it.
				if s.exists && !s.dir {
					return o.idx, result.Errorf(result.AlreadyExists, "%s: already exists; the new submodule needs an empty directory there", disp).At(o.name)
				}
				s.exists, s.touched, s.gitlink, s.asLink = true, true, true, false
				fr.Action = "add"
				files[o.idx] = fr
				continue
			}
			if s.exists && s.dir {
				return o.idx, result.Errorf(result.IsDirectory, "%s: is a directory; Add File cannot replace it", disp).At(o.name)
			}
			if s.exists && !opt.codex() {
				return o.idx, result.Errorf(result.AlreadyExists, "%s: file already exists; Add File refuses to overwrite it", disp).
					WithHint(opt.hint("use '*** Update File:' to change an existing file (or --compat codex, where Add File overwrites)",
						"the file exists: make the diff against its current content, not as a new file (--- /dev/null)")).
					At(o.name)
			}
			if s.exists && opt.Diff {
				before, _ = read(o.name, s)
			}
			switch {
			case o.copyOf != "":
				src, mode, err := readSource(fsys, o.copyOf, opt)
				if err != nil {
					return o.idx, err
				}
				if after, fr.Matches, err = changeContent(o.name, src, f, opt); err != nil {
					return o.idx, err
				}
				if f.Mode == 0 {
					f2 := *f
					f2.Mode = mode
					f = &f2
				}
			case f.Binary != nil:
				if after, _, err = changeContent(o.name, nil, f, opt); err != nil {
					return o.idx, err
				}
			default:
				after = addContent(f)
			}
			s.whole = s.exists || s.replaced
			s.data, s.exists, s.touched, s.asLink = after, true, true, f.Link
			if !s.link || s.replaced {
				s.mode = 0
			}
			if f.Mode != 0 && (!s.link || s.replaced) {
				s.mode, s.chmod = f.Mode, true
			}
			fr.Action = "add"
		case patchparse.Delete:
			s, err := get(o.name)
			if err != nil {
				return o.idx, codexIO(err, "Failed to delete file "+disp)
			}
			if !s.exists {
				return o.idx, result.Errorf(result.NotFound, "Failed to delete file %s", disp).
					WithHint(disp + " does not exist; nothing to delete").At(o.name)
			}
			if f.Gitlink {
				// git apply removes a submodule's directory when it is
				// empty, and leaves a checked-out one.
				if !s.dir {
					return o.idx, result.Errorf(result.NotFound, "%s: is not a submodule's directory", disp).At(o.name)
				}
				if ents, err := fsys.ReadDir(o.name); err == nil && len(ents) == 0 {
					s.exists, s.touched, s.gitlink = false, true, false
				}
				fr.Action = "delete"
				files[o.idx] = fr
				continue
			}
			if s.dir && !s.gitlink {
				return o.idx, result.Errorf(result.IsDirectory, "Failed to delete file %s", disp).
					WithHint(disp + " is a directory; Delete File removes files only").At(o.name)
			}
			if f.Link {
				target, err := linkTarget(fsys, o.name, s, opt)
				if err != nil {
					return o.idx, err
				}
				if f.Full && target != string(addContent(f)) {
					return o.idx, result.Errorf(result.NoMatch, "%s: the link points to %q, not to %q as the patch says", disp, target, addContent(f)).At(o.name)
				}
			} else if (opt.Diff || f.Binary != nil) && !s.link {
				if before, err = read(o.name, s); err != nil {
					return o.idx, err
				}
			}
			if f.Binary != nil {
				if err := checkBlob(o.name, before, f.OldHash, "the file to delete", opt); err != nil {
					return o.idx, err
				}
			}
			s.data, s.exists, s.touched, s.asLink, s.replaced = nil, false, true, false, true
			fr.Action = "delete"
		case patchparse.Update:
			s, err := get(o.name)
			if err != nil {
				return o.idx, err
			}
			if !s.exists {
				return o.idx, result.Errorf(result.NotFound, "Failed to read file to update %s: No such file or directory (os error 2)", disp).
					WithHint(opt.hint("use '*** Add File:' to create a file",
						"to create a file, the diff's old side is /dev/null: '--- /dev/null' then '+++ b/"+disp+"'")).At(o.name)
			}
			if f.Gitlink {
				// A submodule's new commit changes nothing in a plain work tree.
				if !s.dir {
					return o.idx, result.Errorf(result.NotFound, "%s: is not a submodule's directory", disp).At(o.name)
				}
				fr.Action = "modify"
				files[o.idx] = fr
				continue
			}
			if s.dir {
				return o.idx, result.Errorf(result.IsDirectory, "Failed to read file to update %s: Is a directory (os error 21)", disp).At(o.name)
			}
			// A link the patch changes (or moves unchanged) is the link
			// itself, its target the content; any other link is read
			// through, inside the workspace.
			keepLink := f.Link || s.link && !s.touched && o.moveTo != "" && len(f.Chunks) == 0 && f.Binary == nil || s.touched && s.asLink
			var cur []byte
			if keepLink {
				t, err := linkTarget(fsys, o.name, s, opt)
				if err != nil {
					return o.idx, err
				}
				cur = []byte(t)
			} else if cur, err = read(o.name, s); err != nil {
				return o.idx, err
			}
			before = cur
			if after, fr.Matches, err = changeContent(o.name, cur, f, opt); err != nil {
				return o.idx, err
			}
			fr.Action = "modify"
			if o.moveTo != "" {
				d, err := get(o.moveTo)
				if err != nil {
					return o.idx, err
				}
				if d.exists && d.dir {
					return o.idx, result.Errorf(result.IsDirectory, "%s: is a directory; cannot move %s there", opt.display(o.moveTo), disp).At(o.moveTo)
				}
				if d.exists && !opt.codex() {
					return o.idx, result.Errorf(result.AlreadyExists, "%s: file already exists; Move to refuses to overwrite it", opt.display(o.moveTo)).
						WithHint("delete it first in the same patch (or use --compat codex, where a move overwrites)").
						At(o.moveTo)
				}
				mode := s.mode
				s.data, s.exists, s.touched, s.asLink, s.replaced = nil, false, true, false, true
				d.whole = d.exists || d.replaced
				d.data, d.exists, d.touched, d.asLink = after, true, true, keepLink
				if !d.link && !keepLink {
					d.mode = mode & fs.ModePerm
					if f.Mode != 0 {
						d.mode, d.chmod = f.Mode, true
					}
				}
				fr.Path, fr.OldPath = o.moveTo, o.name
			} else {
				s.data, s.touched, s.asLink = after, true, keepLink
				if f.Mode != 0 && !s.link {
					s.mode, s.chmod = f.Mode, true
				}
			}
		}
		if opt.Diff {
			oldName, newName := "a/"+o.name, "b/"+fr.Path
			if f.Kind == patchparse.Add && before == nil {
				oldName = "/dev/null"
			}
			if f.Kind == patchparse.Delete {
				newName = "/dev/null"
			}
			if f.Binary != nil {
				fr.Diff = "Binary files " + oldName + " and " + newName + " differ\n"
			} else {
				fr.Diff = diff.Unified(oldName, newName, before, after)
			}
		}
		files[o.idx] = fr
	}
	// Stage the final state of every path the group touched.
	for _, name := range order {
		s := overlay[name]
		if !s.touched {
			continue
		}
		fi, lerr := fsys.Lstat(name)
		switch {
		case !s.exists && lerr == nil && fi.IsDir():
			if err := txn.RemoveDir(name); err != nil {
				return grp[0].idx, err
			}
			continue
		case !s.exists:
			if lerr == nil {
				if err := txn.Remove(name); err != nil {
					return grp[0].idx, err
				}
			}
			continue
		case s.gitlink:
			if lerr != nil {
				if err := txn.Mkdir(name); err != nil {
					return grp[0].idx, err
				}
			}
			continue
		case s.asLink:
			if err := txn.StageLink(name, string(s.data)); err != nil {
				return grp[0].idx, err
			}
			s.data = nil
			continue
		}
		wo := workspace.WriteOptions{ForcePerm: s.chmod, ReplaceLink: s.replaced, Whole: s.whole}
		if s.mode&fs.ModeType == 0 {
			wo.Perm = s.mode & fs.ModePerm // a moved file keeps its mode; an existing one its own, unless the patch sets it
		}
		if err := txn.Stage(name, s.data, wo); err != nil {
			return grp[0].idx, err
		}
		s.data = nil // staged: free it
	}
	return 0, nil
}

// addContent is an Add File's content: its lines, each ending in a newline
// (none after the last when a unified diff says "\ No newline at end of file").
func addContent(f *patchparse.FileOp) []byte {
	n := 0
	for _, l := range f.Content {
		n += len(l) + 1
	}
	b := make([]byte, 0, n+len(f.ContentEOL))
	for i, l := range f.Content {
		if f.ContentEOL != nil {
			// The endings the patch gives (a new CRLF file stays CRLF); a
			// last line without one keeps its "\r" as text, as git does.
			b = append(append(b, l...), f.ContentEOL[i].String()...)
			continue
		}
		b = append(b, strings.TrimSuffix(l, "\r")...)
		b = append(b, '\n')
	}
	if f.NoFinalNewline && len(b) > 0 {
		b = b[:len(b)-1]
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// codexIO wraps a filesystem error with Codex's context wording.
func codexIO(err error, context string) error {
	re := result.As(err)
	if re.Code == result.OutsideWorkspace {
		return err
	}
	e := *re
	e.Msg = context + ": " + re.Msg
	return &e
}

// Summary is Codex's summary text: "Success. Updated the following files:"
// then "A path", "M path", "D path" lines.
func (r *Result) Summary() string {
	var b bytes.Buffer
	b.WriteString("Success. Updated the following files:\n")
	for _, p := range r.Added {
		b.WriteString("A " + workspace.Quote(p) + "\n")
	}
	for _, p := range r.Modified {
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

// existingName picks the file a plain unified diff patches from its two
// names, by GNU patch's rule: the one that exists; when both do, the one
// with the fewest path components, then the shortest base name, then the
// shortest name. When neither exists, the new name (the error names it).
func existingName(fsys workspace.FS, newName, oldName string) string {
	ne, oe := nameExists(fsys, newName), nameExists(fsys, oldName)
	switch {
	case ne && !oe:
		return newName
	case oe && !ne:
		return oldName
	case !ne && !oe:
		return newName
	}
	parts := func(p string) int { return strings.Count(p, "/") }
	switch {
	case parts(oldName) != parts(newName):
		if parts(oldName) < parts(newName) {
			return oldName
		}
		return newName
	case len(path.Base(oldName)) != len(path.Base(newName)):
		if len(path.Base(oldName)) < len(path.Base(newName)) {
			return oldName
		}
		return newName
	case len(oldName) < len(newName):
		return oldName
	}
	return newName
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
	return o.format == patchparse.SearchReplace || o.format == patchparse.Cline || o.format == patchparse.Roo
}

// AlreadyApplied reports whether every change of p is in fsys already: each
// added file is there with the patch's content, each deleted file is gone,
// and the updates undone (patchparse.Reverse) apply — every chunk found as
// the patch leaves it. The caller asks only after p itself failed to apply,
// so its chunks were not found as the patch expects them: applying it again
// is a no-op, not an error. fsys is not written.
func AlreadyApplied(fsys workspace.FS, p *patchparse.Patch, opt Options) bool {
	var updates []*patchparse.FileOp
	for _, f := range p.Files {
		n, err := fsys.Resolve(f.Path)
		if err != nil {
			return false
		}
		switch f.Kind {
		case patchparse.Add:
			want := addContent(f)
			switch {
			case f.Gitlink:
				if fi, err := fsys.Lstat(n); err != nil || !fi.IsDir() {
					return false
				}
				continue
			case f.Link:
				if t, err := fsys.Readlink(n); err != nil || t != string(want) {
					return false
				}
				continue
			}
			data, err := fsys.ReadFile(n)
			if err != nil {
				return false
			}
			switch {
			case f.Binary != nil && f.CopyFrom == "":
				want, err = f.Binary.Forward.Apply(nil)
			case f.CopyFrom != "":
				var src []byte
				if src, err = fsys.ReadFile(f.CopyFrom); err == nil {
					want, _, err = changeContent(n, src, f, opt)
				}
			}
			if err != nil || !bytes.Equal(data, want) {
				return false
			}
		case patchparse.Delete:
			if _, err := fsys.Lstat(n); err == nil {
				return false
			}
		case patchparse.Update:
			if f.Gitlink {
				continue
			}
			if f.Binary != nil {
				data, err := fsys.ReadFile(n)
				if err != nil || f.NewHash == "" || checkBlob(n, data, f.NewHash, "", opt) != nil {
					return false
				}
				continue
			}
			if len(f.Chunks) == 0 {
				return false // a move or a mode change: nothing to find
			}
			updates = append(updates, f)
		}
	}
	if len(updates) == 0 {
		return true
	}
	rp, err := patchparse.Reverse(&patchparse.Patch{Format: p.Format, Files: updates})
	if err != nil {
		return false
	}
	res, err := Apply(workspace.DryRun(fsys), rp, opt)
	if err != nil {
		return false
	}
	// Only where the patch left them, byte for byte: a chunk found by a
	// lenient pass or a recovery is in the file in another form, and the
	// patch is not what made it so.
	for _, f := range res.Files {
		for _, r := range f.Matches {
			first, _, _ := strings.Cut(r, ",")
			if first != "exact" && first != "addition" && first != "binary" || strings.Contains(r, "reindent") || strings.Contains(r, "line-endings") {
				return false
			}
		}
	}
	return true
}

// changeContent is what f's hunks make of cur: its binary patch (checked
// against the index line's blob ids, as git does), its chunks, or cur
// itself when it has neither (a rename or a mode change).
func changeContent(name string, cur []byte, f *patchparse.FileOp, opt Options) ([]byte, []string, error) {
	switch {
	case f.Binary != nil:
		if err := checkBlob(name, cur, f.OldHash, "the file", opt); err != nil {
			return nil, nil, err
		}
		out, err := f.Binary.Forward.Apply(cur)
		if err != nil {
			return nil, nil, result.Errorf(result.NoMatch, "%s: the binary patch does not apply: %v", opt.display(name), err).
				WithHint("the file is not the one the patch was made from").At(name)
		}
		if err := checkBlob(name, out, f.NewHash, "the binary patch's result", opt); err != nil {
			return nil, nil, err
		}
		return out, []string{"binary"}, nil
	case len(f.Chunks) > 0:
		return applyChunks(name, cur, f.Chunks, opt)
	}
	return cur, nil, nil
}

// checkBlob checks data against a git blob id from an "index" line (a
// full or abbreviated SHA-1 or SHA-256; "" or all zeros for an absent
// file): a binary patch applies only to the content it was made from.
func checkBlob(name string, data []byte, id, what string, opt Options) error {
	if id == "" || strings.Trim(id, "0") == "" {
		return nil
	}
	if got := gitBlobID(data, len(id) > 40); strings.HasPrefix(got, strings.ToLower(id)) {
		return nil
	}
	return result.Errorf(result.NoMatch, "%s: %s is not the content the binary patch expects (blob %s)", opt.display(name), what, id).
		WithHint("the patch was made from another version of the file: make it again against this one").At(name)
}

// gitBlobID is the id git gives a blob of data (SHA-256 for a repository
// in that format).
func gitBlobID(data []byte, sha256Repo bool) string {
	h := sha1.New()
	if sha256Repo {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// readSource reads the source of a copy as it is on disk (as git reads it:
// before the patch), through a link that stays inside the workspace.
func readSource(fsys workspace.FS, name string, opt Options) ([]byte, fs.FileMode, error) {
	t, err := fsys.FollowLinks(name)
	if err != nil {
		return nil, 0, err
	}
	fi, err := fsys.Lstat(t)
	if err != nil {
		return nil, 0, result.Errorf(result.NotFound, "%s: the file to copy does not exist", opt.display(name)).At(name)
	}
	if fi.IsDir() {
		return nil, 0, result.Errorf(result.IsDirectory, "%s: the file to copy is a directory", opt.display(name)).At(name)
	}
	data, err := fsys.ReadFile(t)
	return data, fi.Mode() & fs.ModePerm, err
}

// linkTarget is the target of the symbolic link at name as the patch has
// left it so far (the overlay's, or the disk's, read and never followed).
func linkTarget(fsys workspace.FS, name string, s *state, opt Options) (string, error) {
	if s.touched {
		if !s.asLink {
			return "", result.Errorf(result.NoMatch, "%s: is not a symbolic link", opt.display(name)).At(name)
		}
		return string(s.data), nil
	}
	if !s.link {
		return "", result.Errorf(result.NoMatch, "%s: is not a symbolic link, but the patch changes one there", opt.display(name)).
			WithHint("the patch was made where this path is a symbolic link (mode 120000)").At(name)
	}
	return fsys.Readlink(name)
}

// beyondLinks refuses a patch that makes a path a symbolic link and also
// changes a path under it, as git apply refuses it ("beyond a symbolic
// link"): the second change would be written through the new link.
func beyondLinks(ops []*op, opt Options) error {
	links := map[string]bool{}
	for _, o := range ops {
		if o.src.Link && o.src.Kind != patchparse.Delete {
			links[o.name] = true
			if o.moveTo != "" {
				links[o.moveTo] = true
			}
		}
	}
	if len(links) == 0 {
		return nil
	}
	for _, o := range ops {
		for _, n := range []string{o.name, o.moveTo, o.copyOf} {
			for d := path.Dir(n); n != "" && d != "." && d != "/"; d = path.Dir(d) {
				if links[d] {
					return result.Errorf(result.InvalidPatch, "%s: is beyond a symbolic link (%s) the patch makes", opt.display(n), opt.display(d)).
						WithHint("git apply refuses it too: change the file where the link points, in a patch of its own").At(n)
				}
			}
		}
	}
	return nil
}

// gitPrefixed returns name without a leading "a/" or "b/" when name does not
// exist and the rest does.
func gitPrefixed(fsys workspace.FS, name string) (string, bool) {
	if !strings.HasPrefix(name, "a/") && !strings.HasPrefix(name, "b/") {
		return "", false
	}
	if bare := name[2:]; !nameExists(fsys, name) && nameExists(fsys, bare) {
		return bare, true
	}
	return "", false
}

// nameExists reports whether the patch's name p names something in the
// workspace (a link itself counts).
func nameExists(fsys workspace.FS, p string) bool {
	n, err := fsys.Resolve(p)
	if err != nil {
		return false
	}
	_, err = fsys.Lstat(n)
	return err == nil
}
