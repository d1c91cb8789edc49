package patchparse

// A unified diff's file: its git extended header, its names and the
// operation they make (add, delete, update, move, copy, mode, binary).

import (
	"io/fs"
	"strings"
)

// extended reads git's extended header lines after "diff --git".
func (f *uFile) extended(L lines, i, hi int) int {
	for ; i < hi; i++ {
		l := L.at(i)
		switch {
		case strings.HasPrefix(l, "new file mode "), strings.HasPrefix(l, "deleted file mode "),
			strings.HasPrefix(l, "old mode "), strings.HasPrefix(l, "new mode "), strings.HasPrefix(l, "index "):
			f.noteType(l, i)
		}
		switch {
		case strings.HasPrefix(l, "new file mode "):
			f.isNew = true
			f.mode = gitMode(l[len("new file mode "):])
		case strings.HasPrefix(l, "new mode "):
			f.mode = gitMode(l[len("new mode "):])
		case strings.HasPrefix(l, "deleted file mode "):
			f.isDel = true
			f.oldMode = gitMode(l[len("deleted file mode "):])
		case strings.HasPrefix(l, "old mode "):
			f.oldMode = gitMode(l[len("old mode "):])
		case strings.HasPrefix(l, "rename from "):
			f.renFrom = unquote(l[len("rename from "):])
		case strings.HasPrefix(l, "rename to "):
			f.renTo = unquote(l[len("rename to "):])
		case strings.HasPrefix(l, "rename old "): // very old git
			f.renFrom = unquote(l[len("rename old "):])
		case strings.HasPrefix(l, "rename new "):
			f.renTo = unquote(l[len("rename new "):])
		case strings.HasPrefix(l, "copy from "):
			f.copy, f.copyFrom = i, unquote(l[len("copy from "):])
		case strings.HasPrefix(l, "copy to "):
			f.copyTo = unquote(l[len("copy to "):])
		case strings.HasPrefix(l, "index "):
			ids, _, _ := strings.Cut(l[len("index "):], " ")
			f.oldHash, f.newHash, _ = strings.Cut(ids, "..")
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
		case strings.HasPrefix(l, "Binary files "):
			f.binary = i
		default:
			return i
		}
	}
	return i
}

// noteType notes what a git mode on a header line says the file is on
// either side (its last word: "new file mode 120000", "index 1a2b..3c4d
// 160000").
func (f *uFile) noteType(l string, i int) {
	var t byte
	switch l[strings.LastIndexByte(l, ' ')+1:] {
	case "120000":
		t = 'l'
	case "160000":
		t = 'g'
	}
	switch {
	case strings.HasPrefix(l, "new file mode "), strings.HasPrefix(l, "new mode "):
		f.newType = t
	case strings.HasPrefix(l, "deleted file mode "), strings.HasPrefix(l, "old mode "):
		f.oldType = t
	case strings.Count(l, " ") >= 2: // "index a..b MODE": both sides
		f.oldType, f.newType = t, t
	}
	if f.oldType != f.newType {
		f.typeAt = i
	}
}

// op turns a file's headers and hunks into its operation.
func (f *uFile) op(L lines, opt Options) (*FileOp, error) {
	line := f.header
	oldName, newName := f.oldName, f.newName
	if !f.git {
		// GNU diff -N (diff -ruN, -Naur) writes a file absent on one side
		// as an empty one with the epoch for its time, and GNU patch reads
		// it so: created when the old side is empty with the epoch,
		// removed when the new side is.
		switch {
		case f.oldEpoch && !f.newEpoch && chunksAll(f.chunks, '+'):
			oldName = ""
		case f.newEpoch && !f.oldEpoch && chunksAll(f.chunks, '-'):
			newName = ""
		}
	}
	if !f.hasOld {
		oldName, newName = f.gitOld, f.gitNew
		if f.isNew {
			oldName = ""
		}
		if f.isDel {
			newName = ""
		}
	}
	strip := opt.Strip
	if strip < 0 {
		strip = 0
		if defaultStripsPrefix(oldName, newName) || (f.gnuTrees || f.git) && treesApart(oldName, newName) {
			strip = 1 // git's a/ b/; old/ new/ (GNU diff -ruN old new, git's --src-prefix=old/ --dst-prefix=new/), as git apply's -p1
		}
		if strip == 1 && f.gitOld != "" && (oldName == "" || newName == "") && !defaultStripsPrefix(f.gitOld, f.gitNew) {
			// A new or deleted file's one name says nothing of a prefix:
			// "+++ c/new.c" is b/-less. git's own header names both
			// sides: "diff --git c/new.c c/new.c" (the same first
			// component on both) is a --no-prefix diff of a directory c.
			return nil, hunkError(line, "say how many leading components to strip: -p0 for a --no-prefix diff, -p1 for git's a/ b/",
				"'%s': cannot tell whether '%s' is a prefix (diff --git names %s and %s)", newName+oldName, (newName + oldName)[:2], f.gitOld, f.gitNew)
		}
	}
	var err error
	if oldName, err = stripPath(oldName, strip, line); err != nil {
		return nil, err
	}
	if newName, err = stripPath(newName, strip, line); err != nil {
		return nil, err
	}
	// Git writes rename and copy paths without a/ b/; -p N strips N-1 of theirs.
	from, to := f.renFrom, f.renTo
	if f.copy >= 0 {
		from, to = f.copyFrom, f.copyTo
	}
	if from != "" || to != "" {
		rs := opt.Strip - 1
		if rs < 0 {
			rs = 0
		}
		if oldName, err = stripPath(from, rs, line); err != nil {
			return nil, err
		}
		if newName, err = stripPath(to, rs, line); err != nil {
			return nil, err
		}
	}
	name := newName
	if name == "" {
		name = oldName
	}

	if f.oldType != f.newType && !f.isNew && !f.isDel {
		// git writes a change of type as a deletion and an addition.
		return nil, hunkError(f.typeAt, "write the change of type as a deletion of the old file and an addition of the new one, as git diff does",
			"'%s' changes type in one header (old mode and new mode)", name)
	}
	if f.git && opt.Strip < 0 && from == "" && to == "" && oldName != "" && newName != "" && oldName != newName && f.bin == nil {
		// git writes a rename with "rename from"/"rename to"; two names
		// without them come from git diff --no-index of two trees, whose
		// meaning here (move old/ to new/, or patch the files below the
		// trees) the patch does not say. (git apply moves them.)
		return nil, hunkError(line, "apply it inside a copy of the tree with -p2 (the files by their names below the trees), or make it with git diff -M to move files",
			"diff --git names two paths, '%s' and '%s', with no 'rename from': a diff of two trees (git diff --no-index)?", oldName, newName)
	}
	op, err := f.fileOp(L, oldName, newName, line, name)
	if op != nil {
		t := f.newType
		if op.Kind == Delete {
			t = f.oldType
		}
		op.Link, op.Gitlink = t == 'l', t == 'g'
		if op.Gitlink && op.MoveTo != "" {
			return nil, hunkError(line, "move the submodule with git mv in its repository", "'%s' is a submodule: hunk does not move one", name)
		}
	}
	return op, err
}

// fileOp is op's operation once names and types are known.
func (f *uFile) fileOp(L lines, oldName, newName string, line int, name string) (*FileOp, error) {
	if f.binary >= 0 {
		// git diff without --binary: the new content is not there at all.
		return nil, hunkError(f.binary, "the diff holds no data for it: make the diff with git diff --binary and apply it with git apply, or leave the file out",
			"'%s' is a binary file whose change the diff does not hold ('%s')", name, L.at(f.binary))
	}
	if f.copy >= 0 {
		if oldName == "" || newName == "" {
			return nil, hunkError(f.copy, "a copy names both files: 'copy from OLD' and 'copy to NEW'", "copy of '%s' without both names", name)
		}
		// A new file that starts as the old one's content (as it was
		// before the patch, as git reads it) and takes the hunks.
		return &FileOp{Kind: Add, Path: newName, CopyFrom: oldName, Chunks: f.chunks, Binary: f.bin, Line: line + 1,
			Mode: f.mode, OldHash: f.oldHash, NewHash: f.newHash}, nil
	}
	if f.bin != nil {
		return f.binaryOp(oldName, newName, line)
	}
	switch {
	case oldName == "" && newName == "", f.isNew && newName == "", f.isDel && oldName == "":
		return nil, hunkError(line, "name the file in '--- a/PATH' and '+++ b/PATH' lines", "unified diff file header names no file")
	case oldName == "" || f.isNew:
		op := &FileOp{Kind: Add, Path: newName, Line: line + 1, Mode: f.mode, from: f.chunks, fromOp: '+'}
		for _, c := range f.chunks {
			for cl := range c.All() {
				if cl.Op != '+' {
					return nil, hunkError(int(cl.Line)-1, "every line of a new file's hunk starts with '+'",
						"new file '%s' has a hunk with context or removed lines", newName)
				}
			}
			op.NoFinalNewline = c.NewNoNewline
		}
		return op, nil
	case newName == "" || f.isDel:
		op := &FileOp{Kind: Delete, Path: oldName, Line: line + 1, OldMode: f.oldMode, OldHash: f.oldHash, NewHash: f.newHash, from: f.chunks, fromOp: '-'}
		for _, c := range f.chunks {
			for cl := range c.All() {
				if cl.Op == '-' {
					op.Removed++
				}
			}
			op.NoFinalNewline = c.OldNoNewline
		}
		// A deletion whose hunks hold only removed lines holds the file's
		// whole content (git diff, diff -ruN): -R can bring it back. A git
		// deletion with no hunk holds an empty file's — unless its index
		// line names another blob (git diff -D, --irreversible-delete: no
		// content, so no -R).
		op.Full = len(f.chunks) == 0 && f.git && emptyBlob(f.oldHash) || chunksAll(f.chunks, '-')
		if !op.Full {
			op.from, op.NoFinalNewline = nil, false
		}
		return op, nil
	}
	op := &FileOp{Kind: Update, Path: oldName, Chunks: f.chunks, Line: line + 1, Mode: f.mode, OldMode: f.oldMode, OldHash: f.oldHash, NewHash: f.newHash}
	switch {
	case !f.git:
		// A plain diff has no renames: "--- x.orig" / "+++ x" changes x,
		// "--- a.go" / "+++ a.go.new" changes a.go; which one is decided by
		// what exists (apply).
		op.Path = newName
		if oldName != newName {
			op.AltPath = oldName
		}
	case newName != oldName:
		op.MoveTo = newName
	}
	if len(op.Chunks) == 0 && op.MoveTo == "" && op.Mode == 0 {
		return nil, nil // a header without hunks
	}
	return op, nil
}

// defaultStripsPrefix reports whether git's a/ b/ prefixes are there: the old
// name starts with "a/" or the new name with "b/" (or another one-letter
// pair, as diff.mnemonicPrefix writes: c/ i/ w/ o/), the other side agreeing
// or being /dev/null.
func defaultStripsPrefix(oldName, newName string) bool {
	op, np := prefix1(oldName), prefix1(newName)
	switch {
	case oldName == "":
		return np != 0 && strings.IndexByte(gitPrefixes, np) >= 0
	case newName == "":
		return op != 0 && strings.IndexByte(gitPrefixes, op) >= 0
	}
	return op != 0 && np != 0 && op != np
}

// treesApart reports whether two names are one path in two trees: "old/x"
// and "new/x" (GNU diff -ruN old new), as git apply's -p1 strips them.
func treesApart(oldName, newName string) bool {
	oi, ni := strings.IndexByte(oldName, '/'), strings.IndexByte(newName, '/')
	return oi > 0 && ni > 0 && oldName[:oi] != newName[:ni] && oldName[oi+1:] == newName[ni+1:]
}

// gitPrefixes are the one-letter prefixes git writes: a/ b/, and c/ i/ w/ o/
// 1/ 2/ with diff.mnemonicPrefix.
const gitPrefixes = "abciwo12"

// prefix1 returns the one-character first component of name ("a" of "a/x"), or 0.
func prefix1(name string) byte {
	if len(name) >= 3 && name[1] == '/' {
		return name[0]
	}
	return 0
}

// stripPath removes n leading components from name ("" stays "").
func stripPath(name string, n int, line int) (string, error) {
	if name == "" || n <= 0 {
		return name, nil
	}
	s := name
	for k := 0; k < n; k++ {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", hunkError(line, "lower the -p strip count", "cannot strip %d leading components from path '%s'", n, name)
		}
		s = s[i+1:]
		for len(s) > 0 && s[0] == '/' {
			s = s[1:]
		}
	}
	if s == "" {
		return "", hunkError(line, "lower the -p strip count", "cannot strip %d leading components from path '%s'", n, name)
	}
	return s, nil
}

// gitMode reads a git file mode ("100755", "100644") as the permission it
// gives; 0 for anything else (a symlink 120000, a submodule 160000), which
// leaves the mode alone.
func gitMode(s string) fs.FileMode {
	switch strings.TrimSpace(s) {
	case "100755":
		return 0o755
	case "100644":
		return 0o644
	}
	return 0
}

// binaryOp is the operation of a file whose change is a GIT binary patch.
func (f *uFile) binaryOp(oldName, newName string, line int) (*FileOp, error) {
	op := &FileOp{Binary: f.bin, Line: line + 1, Mode: f.mode, OldMode: f.oldMode, OldHash: f.oldHash, NewHash: f.newHash}
	switch {
	case oldName == "" || f.isNew:
		op.Kind, op.Path = Add, newName
	case newName == "" || f.isDel:
		op.Kind, op.Path, op.Full = Delete, oldName, f.bin.Reverse != nil
	default:
		op.Kind, op.Path = Update, oldName
		if newName != oldName {
			op.MoveTo = newName
		}
	}
	if op.Path == "" {
		return nil, hunkError(line, "name the file in the 'diff --git a/PATH b/PATH' line", "binary patch header names no file")
	}
	return op, nil
}
