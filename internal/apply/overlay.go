package apply

import (
	"bytes"
	"io/fs"
	"path"
	"slices"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// state is a path's content as the patch has left it so far.
type state struct {
	data    []byte
	parts   [][]byte // or, for a binary patch's result, the parts that make it (data nil)
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
	// replacesDir: the path is a directory on disk whose every file the
	// patch deletes, and a file is added in its place (git's order: the
	// new d before the deleted d/f; its removals are planned first).
	replacesDir bool
}

// overlay is one group's view of the paths it touches: each path's state
// as the group's operations have left it so far, over the disk's (read
// once, when an operation first touches the path). The operations are
// planned against it one after the other (add, delete, update), and its
// final state is staged in the transaction at the end (stage).
type overlay struct {
	fsys  workspace.FS
	opt   Options
	paths map[string]*state
	order []string // the paths in the order they were first touched
}

// planGroup plans one group's operations in order against an overlay of the
// paths they touch, then stages the final state of each path. It returns the
// index of the failing operation with the error.
func planGroup(fsys workspace.FS, txn workspace.Txn, grp []*op, files []FileResult, opt Options) (int, error) {
	v := &overlay{fsys: fsys, opt: opt, paths: map[string]*state{}}
	for _, o := range deletionsFirst(grp) {
		fr := FileResult{Path: o.name}
		var before, after []byte
		var noDiff bool // a submodule's change: nothing to show
		var err error
		switch o.src.Kind {
		case patchparse.Add:
			before, after, noDiff, err = v.add(o, &fr)
		case patchparse.Delete:
			before, noDiff, err = v.delete(o, &fr)
		case patchparse.Update:
			before, after, noDiff, err = v.update(o, &fr)
		}
		if err != nil {
			return o.idx, err
		}
		if opt.Diff && !noDiff {
			fr.Diff = fileDiff(o, fr.Path, before, after)
		}
		files[o.idx] = fr
	}
	if err := v.stage(txn); err != nil {
		return grp[0].idx, err
	}
	return 0, nil
}

// get is name's state, read from the disk the first time.
func (v *overlay) get(name string) (*state, error) {
	if s, ok := v.paths[name]; ok {
		return s, nil
	}
	s := &state{}
	fi, err := v.fsys.Lstat(name)
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
	v.paths[name] = s
	v.order = append(v.order, name)
	return s, nil
}

// read returns a path's current content: the overlay's, or the file's
// (through a symlink, which must stay inside the root).
func (v *overlay) read(name string, s *state) ([]byte, error) {
	if s.touched {
		if s.parts != nil {
			return bytes.Join(s.parts, nil), nil // a later operation on it: rare, and within the limit
		}
		return s.data, nil
	}
	t := name
	if s.link {
		var err error
		if t, err = v.fsys.FollowLinks(name); err != nil {
			return nil, err
		}
		fi, err := v.fsys.Lstat(t)
		if err != nil {
			return nil, result.Errorf(result.NotFound, "%s: dangling symlink (to %s)", v.opt.display(name), t).At(name)
		}
		if fi.IsDir() {
			return nil, result.Errorf(result.IsDirectory, "%s: is a symlink to a directory", v.opt.display(name)).At(name)
		}
		s.mode = fi.Mode()
	}
	return v.fsys.ReadFile(t)
}

// add plans an Add File (a new submodule, a copy, a binary or a text file).
func (v *overlay) add(o *op, fr *FileResult) (before, after []byte, noDiff bool, err error) {
	f, opt, disp := o.src, v.opt, v.opt.display(o.name)
	s, err := v.get(o.name)
	if err != nil {
		return nil, nil, false, err
	}
	fr.Action = "add"
	if f.Gitlink {
		// A new submodule is an empty directory in a plain work
		// tree, as git apply makes it.
		if s.exists && !s.dir {
			return nil, nil, false, result.Errorf(result.AlreadyExists, "%s: already exists; the new submodule needs an empty directory there", disp).At(o.name)
		}
		s.exists, s.touched, s.gitlink, s.asLink = true, true, true, false
		return nil, nil, true, nil
	}
	if s.exists && s.dir {
		if other := v.kept(o.name); other != "" {
			return nil, nil, false, result.Errorf(result.IsDirectory, "%s: is a directory; Add File cannot replace it", disp).
				WithHint(opt.display(other) + " is in it, and the patch does not delete it: a file takes a directory's place only when the patch deletes every file in it").At(o.name)
		}
		s.exists, s.dir, s.replacesDir = false, false, true
	}
	if d := v.blockedBy(o.name); d != "" {
		return nil, nil, false, result.Errorf(result.NotFound, "%s: a component of the path is not a directory (%s is a file)", disp, opt.display(d)).
			WithHint("a directory takes a file's place only when the patch deletes the file: delete " + opt.display(d) + " in the same patch").At(o.name)
	}
	if s.exists && !s.link && opt.ThreeWay != nil && o.copyOf == "" && f.Binary == nil && !f.Link {
		// --3way: a new file already there with the diff's very content is
		// git's clean add/add merge: nothing to write.
		if cur, err := v.read(o.name, s); err == nil && string(cur) == string(addContent(f)) {
			fr.Action, fr.Merge = "unchanged", MergeClean
			return cur, cur, true, nil
		}
	}
	if s.exists && f.Whole {
		return v.wholeFile(o, s, fr)
	}
	if s.exists && !opt.codex() {
		return nil, nil, false, result.Errorf(result.AlreadyExists, "%s: file already exists; Add File refuses to overwrite it", disp).
			WithHint(opt.hint("use '*** Update File:' to change an existing file (or --compat codex, where Add File overwrites)",
				"the file exists: make the diff against its current content, not as a new file (--- /dev/null)")).
			At(o.name)
	}
	if s.exists && opt.Diff {
		before, _ = v.read(o.name, s)
	}
	mode := f.Mode
	var parts [][]byte
	switch {
	case o.copyOf != "":
		src, srcMode, err := readSource(v.fsys, o.copyOf, opt)
		if err != nil {
			return nil, nil, false, err
		}
		if after, parts, fr.Matches, err = change(o.name, src, f, opt, fr); err != nil {
			return nil, nil, false, err
		}
		if mode == 0 {
			mode = srcMode
		}
	case f.Binary != nil:
		if _, parts, _, err = change(o.name, nil, f, opt, nil); err != nil {
			return nil, nil, false, err
		}
	default:
		after = addContent(f)
		if opt.crlf != nil && !f.Link && !s.exists && opt.crlf(o.name) {
			after = toCRLF(after) // as a checkout writes it (core.autocrlf, eol=crlf)
		}
	}
	s.whole = s.exists || s.replaced
	s.data, s.parts, s.exists, s.touched, s.asLink = after, parts, true, true, f.Link
	if !s.link || s.replaced {
		s.mode = 0
	}
	if mode != 0 && (!s.link || s.replaced) {
		s.mode, s.chmod = mode, true
	}
	return before, after, false, nil
}

// delete plans a Delete File (a submodule's directory, a link, a file).
func (v *overlay) delete(o *op, fr *FileResult) (before []byte, noDiff bool, err error) {
	f, opt, disp := o.src, v.opt, v.opt.display(o.name)
	s, err := v.get(o.name)
	if err != nil {
		return nil, false, codexIO(err, "Failed to delete file "+disp)
	}
	if !s.exists {
		return nil, false, result.Errorf(result.NotFound, "Failed to delete file %s", disp).
			WithHint(disp + " does not exist; nothing to delete").At(o.name)
	}
	fr.Action = "delete"
	if f.Gitlink {
		// git apply removes a submodule's directory when it is
		// empty, and leaves a checked-out one.
		if !s.dir {
			return nil, false, result.Errorf(result.NotFound, "%s: is not a submodule's directory", disp).At(o.name)
		}
		if ents, err := v.fsys.ReadDir(o.name); err == nil && len(ents) == 0 {
			s.exists, s.touched, s.gitlink = false, true, false
		}
		return nil, true, nil
	}
	if s.dir && !s.gitlink {
		return nil, false, result.Errorf(result.IsDirectory, "Failed to delete file %s", disp).
			WithHint(disp + " is a directory; Delete File removes files only").At(o.name)
	}
	if f.Link {
		target, err := linkTarget(v.fsys, o.name, s, opt)
		if err != nil {
			return nil, false, err
		}
		if f.Full && target != string(addContent(f)) {
			return nil, false, result.Errorf(result.NoMatch, "%s: the link points to %q, not to %q as the patch says", disp, target, addContent(f)).At(o.name)
		}
	} else if (opt.Diff || f.Binary != nil || deletesContent(f)) && !s.link {
		if before, err = v.read(o.name, s); err != nil {
			return nil, false, err
		}
	}
	if f.Binary != nil {
		if err := checkBlob(o.name, before, f.OldHash, "the file to delete", opt); err != nil {
			return nil, false, err
		}
	} else if deletesContent(f) && !s.link {
		if err := checkDeleted(o.name, before, f, opt); err != nil {
			return nil, false, err
		}
	}
	s.data, s.parts, s.exists, s.touched, s.asLink, s.replaced = nil, nil, false, true, false, true
	return before, false, nil
}

// update plans an Update File: a submodule's new commit, a link's new
// target, a file's new content, each maybe moved.
func (v *overlay) update(o *op, fr *FileResult) (before, after []byte, noDiff bool, err error) {
	f, opt, disp := o.src, v.opt, v.opt.display(o.name)
	s, err := v.get(o.name)
	if err != nil {
		return nil, nil, false, err
	}
	if !s.exists {
		return nil, nil, false, result.Errorf(result.NotFound, "Failed to read file to update %s: No such file or directory (os error 2)", disp).
			WithHint(opt.hint("use '*** Add File:' to create a file",
				"to create a file, the diff's old side is /dev/null: '--- /dev/null' then '+++ b/"+disp+"'")).At(o.name)
	}
	fr.Action = "modify"
	if o.moveTo != "" && (f.Gitlink || s.dir && len(f.Chunks) == 0 && f.Binary == nil && f.Mode == 0) {
		// A submodule moved (a pure rename of a directory can be
		// nothing else in a diff: git writes no mode line for it).
		return nil, nil, true, v.moveGitlink(o, s, fr)
	}
	if f.Gitlink {
		// A submodule's new commit changes nothing in a plain work tree.
		if !s.dir {
			return nil, nil, false, result.Errorf(result.NotFound, "%s: is not a submodule's directory", disp).At(o.name)
		}
		return nil, nil, true, nil
	}
	if s.dir {
		return nil, nil, false, result.Errorf(result.IsDirectory, "Failed to read file to update %s: Is a directory (os error 21)", disp).At(o.name)
	}
	// A link the patch changes (or moves unchanged) is the link
	// itself, its target the content; any other link is read
	// through, inside the workspace.
	keepLink := f.Link || s.link && !s.touched && o.moveTo != "" && len(f.Chunks) == 0 && f.Binary == nil || s.touched && s.asLink
	if !keepLink && s.link && !s.touched && opt.format == patchparse.Unified {
		// A diff's text change names the path's own content; a link's is
		// its target (GNU diff -ruN follows links, so a changed link reads
		// as a change of its path): git apply and GNU patch refuse to
		// write through it, and so does hunk. A link out of the workspace
		// (or nowhere) is refused as such first, as every reader refuses it.
		if _, err := v.read(o.name, s); err != nil {
			return nil, nil, false, err
		}
		return nil, nil, false, result.Errorf(result.NoMatch, "%s is a symbolic link, not a regular file: refusing to patch it (a diff's text change is the path's own content)", disp).
			WithHint("patch the file it points to by its own name, or make the diff with git diff, which writes a link's change as its target").At(o.name)
	}
	if keepLink {
		t, err := linkTarget(v.fsys, o.name, s, opt)
		if err != nil {
			return nil, nil, false, err
		}
		before = []byte(t)
	} else if before, err = v.read(o.name, s); err != nil {
		return nil, nil, false, err
	}
	var parts [][]byte
	if after, parts, fr.Matches, err = change(o.name, before, f, opt, fr); err != nil {
		return nil, nil, false, err
	}
	if opt.blocks() && o.moveTo == "" && f.Mode == 0 && !slices.ContainsFunc(fr.Matches, changes) {
		fr.Action = "unchanged" // every block is in the file already
		return before, before, true, nil
	}
	if o.moveTo == "" {
		s.data, s.parts, s.touched, s.asLink = after, parts, true, keepLink
		if f.Mode != 0 && !s.link {
			s.mode, s.chmod = f.Mode, true
		}
		return before, after, false, nil
	}
	if err := v.move(o, s, after, parts, keepLink); err != nil {
		return nil, nil, false, err
	}
	fr.Path, fr.OldPath = o.moveTo, o.name
	return before, after, false, nil
}

// moveGitlink plans a submodule's move as git apply makes it in a plain
// work tree: its directory made at the new path (empty), the old one
// removed when it is empty — a checked-out submodule's is left, with its
// files, as a Delete of it leaves it.
func (v *overlay) moveGitlink(o *op, s *state, fr *FileResult) error {
	disp := v.opt.display(o.name)
	if !s.dir {
		return result.Errorf(result.NotFound, "%s: is not a submodule's directory", disp).At(o.name)
	}
	d, err := v.get(o.moveTo)
	if err != nil {
		return err
	}
	if d.exists && !d.dir {
		return result.Errorf(result.AlreadyExists, "%s: already exists; the moved submodule %s needs an empty directory there", v.opt.display(o.moveTo), disp).At(o.moveTo)
	}
	d.exists, d.touched, d.gitlink, d.asLink = true, true, true, false
	if ents, err := v.fsys.ReadDir(o.name); err == nil && len(ents) == 0 {
		s.exists, s.touched, s.gitlink = false, true, false
	}
	fr.Path, fr.OldPath = o.moveTo, o.name
	return nil
}

// move plans an update's move: the source gone, the destination (which
// must not exist, but under Codex) holding after (or parts).
func (v *overlay) move(o *op, s *state, after []byte, parts [][]byte, keepLink bool) error {
	d, err := v.get(o.moveTo)
	if err != nil {
		return err
	}
	if d.exists && d.dir {
		// A directory the file leaves empty (git's rename of d/f to d)
		// takes the file in its place, as an Add's does.
		other := v.without(s, func() string { return v.kept(o.moveTo) })
		if other != "" {
			return result.Errorf(result.IsDirectory, "%s: is a directory; cannot move %s there", v.opt.display(o.moveTo), v.opt.display(o.name)).
				WithHint(v.opt.display(other) + " is in it, and the patch does not delete it").At(o.moveTo)
		}
		d.exists, d.dir, d.replacesDir = false, false, true
	}
	if dd := v.without(s, func() string { return v.blockedBy(o.moveTo) }); dd != "" {
		return result.Errorf(result.NotFound, "%s: a component of the path is not a directory (%s is a file)", v.opt.display(o.moveTo), v.opt.display(dd)).
			WithHint("a directory takes a file's place only when the patch deletes the file: delete " + v.opt.display(dd) + " in the same patch").At(o.moveTo)
	}
	if d.exists && !v.opt.codex() {
		return result.Errorf(result.AlreadyExists, "%s: file already exists; Move to refuses to overwrite it", v.opt.display(o.moveTo)).
			WithHint("delete it first in the same patch (or use --compat codex, where a move overwrites)").
			At(o.moveTo)
	}
	mode := s.mode
	s.data, s.parts, s.exists, s.touched, s.asLink, s.replaced = nil, nil, false, true, false, true
	d.whole = d.exists || d.replaced
	d.data, d.parts, d.exists, d.touched, d.asLink = after, parts, true, true, keepLink
	if !d.link && !keepLink {
		d.mode = mode & fs.ModePerm
		if o.src.Mode != 0 {
			d.mode, d.chmod = o.src.Mode, true
		}
	}
	return nil
}

// fileDiff is one planned file's diff (a binary file's "differ" line).
func fileDiff(o *op, path string, before, after []byte) string {
	f := o.src
	oldName, newName := "a/"+o.name, "b/"+path
	if f.Kind == patchparse.Add && before == nil {
		oldName = "/dev/null"
	}
	if f.Kind == patchparse.Delete {
		newName = "/dev/null"
	}
	if f.Binary != nil {
		return "Binary files " + oldName + " and " + newName + " differ\n"
	}
	return diff.Unified(oldName, newName, before, after)
}

// stage stages the final state of every path the group touched.
func (v *overlay) stage(txn workspace.Txn) error {
	for _, name := range v.order {
		s := v.paths[name]
		if !s.touched {
			continue
		}
		fi, lerr := v.fsys.Lstat(name)
		var err error
		switch {
		case !s.exists && lerr == nil && fi.IsDir():
			err = txn.RemoveDir(name)
		case !s.exists:
			if lerr == nil {
				err = txn.Remove(name)
			}
		case s.gitlink:
			if lerr != nil {
				err = txn.Mkdir(name)
			}
		case s.asLink:
			err = txn.StageLink(name, string(s.data))
			s.data = nil
		default:
			wo := workspace.WriteOptions{ForcePerm: s.chmod, ReplaceLink: s.replaced, Whole: s.whole, ReplaceDir: s.replacesDir}
			if s.mode&fs.ModeType == 0 {
				wo.Perm = s.mode & fs.ModePerm // a moved file keeps its mode; an existing one its own, unless the patch sets it
			}
			if s.parts != nil {
				err = txn.StageParts(name, s.parts, wo)
			} else {
				err = txn.Stage(name, s.data, wo)
			}
			s.data, s.parts = nil, nil // staged: free it
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// kept is a file under the directory dir that the group does not delete
// ("" when the patch deletes every file in it, at any depth), or dir
// itself when it holds more than the group could delete, or cannot be
// read.
func (v *overlay) kept(dir string) string {
	budget := len(v.paths) + 64 // each file deleted is a path of the group; the rest are directories
	var walk func(d string, depth int) string
	walk = func(d string, depth int) string {
		ents, err := v.fsys.ReadDir(d)
		if err != nil || depth > 64 {
			return d
		}
		for _, e := range ents {
			name := d + "/" + e.Name()
			if budget--; budget < 0 {
				return name
			}
			if e.IsDir() {
				if k := walk(name, depth+1); k != "" {
					return k
				}
				continue
			}
			if s, ok := v.paths[name]; !ok || !s.touched || s.exists {
				return name
			}
		}
		return ""
	}
	return walk(dir, 0)
}

// blockedBy is the directory above name that is a file, on disk and as the
// group leaves it ("" when there is none): a file can be added under it
// only where the group deletes it (git's diff of a file x replaced by a
// directory with x/y).
func (v *overlay) blockedBy(name string) string {
	for d := parentOf(name); d != "." && d != "/"; d = parentOf(d) {
		if s, ok := v.paths[d]; ok && s.touched {
			if !s.exists {
				continue // deleted: its directory is made at commit
			}
			if s.dir || s.gitlink {
				return ""
			}
			return d
		}
		fi, err := v.fsys.Stat(d)
		switch {
		case err != nil:
			continue // missing: made for the file
		case fi.IsDir():
			return ""
		}
		return d
	}
	return ""
}

// parentOf is the directory holding the local name p ("." at the top).
func parentOf(p string) string { return path.Dir(p) }

// deletionsFirst is grp with the deletions of a path above or below
// another of its paths moved to the front (git's diff adds a file d
// before it deletes d/f: git apply removes first), each where no other
// operation touches its path, so that one path's operations keep their
// order.
func deletionsFirst(grp []*op) []*op {
	if len(grp) < 2 {
		return grp
	}
	uses := map[string]int{}
	for _, o := range grp {
		uses[o.name]++
		if o.moveTo != "" {
			uses[o.moveTo]++
		}
	}
	related := func(n string) bool {
		for d := parentOf(n); d != "." && d != "/"; d = parentOf(d) {
			if uses[d] > 0 {
				return true
			}
		}
		for m := range uses {
			if len(m) > len(n) && m[len(n)] == '/' && m[:len(n)] == n {
				return true
			}
		}
		return false
	}
	first := func(o *op) bool { return o.src.Kind == patchparse.Delete && uses[o.name] == 1 && related(o.name) }
	out := make([]*op, 0, len(grp))
	for _, o := range grp {
		if first(o) {
			out = append(out, o)
		}
	}
	for _, o := range grp {
		if !first(o) {
			out = append(out, o)
		}
	}
	return out
}

// without is f's answer with the file s gone, as the move leaves it.
func (v *overlay) without(s *state, f func() string) string {
	was := *s
	s.exists, s.touched = false, true
	defer func() { *s = was }()
	return f()
}
