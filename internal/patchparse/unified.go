package patchparse

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Unified diffs are read by this package rather than by go-gitdiff: hunk
// must accept the mistakes models make in them (wrong line counts, "@@"
// without numbers, blank context lines that lost their space), which a
// strict parser refuses, and must read 10 MB diffs without copying lines.
// The rules:
//
//   - A file starts at "diff --git a/x b/y" or at a "--- x" line followed by
//     "+++ y". Git's extended headers (new/deleted file mode, rename from/to,
//     similarity index, index, mode changes, copies) are read, and so are
//     GIT binary patches (binary.go) and the modes of links and submodules.
//     Other lines between files (commit messages,
//     "Index:" lines, "diff -u a b" commands) are skipped.
//   - A hunk starts at a line beginning with "@@". Its "-a,b +c,d" numbers
//     become line hints. Its body is read by its counts when they fit: once
//     the counts are used up the hunk ends, unless more hunk lines follow, in
//     which case the counts were wrong and the body runs on to the next
//     header or non-diff line. A header without numbers reads that way too.
//     An empty line inside a body is an empty context line.
//   - "\ No newline at end of file" marks the line before it.
//
// The AST: a changed file is an Update whose chunks carry the hunk's lines
// and hints; a new file an Add whose Content is the added lines; a deleted
// file a Delete; a rename an Update with MoveTo (without chunks when the
// content is unchanged). A mode change (new mode 100755) is applied.

type uFile struct {
	header  int // line index of the first header line
	git     bool
	gitOld  string // names from "diff --git" (unstripped)
	gitNew  string
	oldName string // names from ---/+++ (unstripped; "" for /dev/null)
	newName string
	// oldEpoch, newEpoch: the ---/+++ line's timestamp is the epoch, GNU
	// diff -N's mark of a file absent on that side.
	oldEpoch, newEpoch bool
	hasOld             bool // a "---" line was read
	closed             bool // a mail signature or header followed the hunks
	renFrom            string
	renTo              string
	isNew              bool
	isDel              bool
	binary             int     // line index of "Binary files ... differ" (no data), or -1
	bin                *Binary // a GIT binary patch
	binAt              int     // its line index
	oldHash, newHash   string  // from the "index" line
	// oldType, newType: what git's modes say each side is — 'l' a
	// symbolic link (120000), 'g' a submodule's gitlink (160000), 0 a
	// regular file or not said; typeAt: the line of a change of type.
	oldType, newType byte
	typeAt           int
	copy             int // line index of "copy from", or -1
	copyFrom, copyTo string
	mode             fs.FileMode // from "new file mode" / "new mode"; 0: none
	oldMode          fs.FileMode // from "old mode" / "deleted file mode"; 0: none
	chunks           []*Chunk
}

// isUnified recognises a unified diff (formats): a git header, or a "--- "
// line followed by a "+++ " line — unless the first line looks like
// Codex's ("*** ..."), which keeps Codex's errors even when the text holds
// diff-like lines.
func isUnified(in *input) bool {
	return in.tlo < in.thi && !strings.HasPrefix(strings.TrimSpace(in.L[in.tlo]), "***") && looksUnified(in.L, in.tlo, in.thi)
}

// looksUnified reports whether the window holds a unified diff: a git
// header, or a "--- " line followed by a "+++ " line.
func looksUnified(L []string, lo, hi int) bool {
	for i := lo; i < hi; i++ {
		l := L[i]
		if strings.HasPrefix(l, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l, "--- ") && i+1 < hi && strings.HasPrefix(L[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// parseUnifiedInput parses in as a unified diff (formats).
func parseUnifiedInput(in *input) (*Patch, error) {
	return parseUnified(in.L, lineEndings(in.cr), in.tlo, in.hi, in.opt)
}

func parseUnified(L []string, eol func(int) Ending, lo, hi int, opt Options) (*Patch, error) {
	p := &Patch{Format: Unified}
	var cur *uFile
	flush := func() error {
		if cur == nil {
			return nil
		}
		if eol != nil {
			for _, c := range cur.chunks {
				for k := range c.Lines {
					c.Lines[k].EOL = eol(c.Lines[k].Line - 1)
				}
			}
		}
		op, err := cur.op(L, opt)
		cur = nil
		if err != nil {
			return err
		}
		if op != nil {
			p.Files = append(p.Files, op)
		}
		return nil
	}
	i := lo
	for i < hi {
		l := L[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &uFile{header: i, git: true, binary: -1, copy: -1}
			cur.gitOld, cur.gitNew = splitGitHeader(l[len("diff --git "):])
			i++
			i = cur.extended(L, i, hi)
		case strings.HasPrefix(l, "--- ") && i+1 < hi && strings.HasPrefix(L[i+1], "+++ "):
			if cur == nil || cur.hasOld || len(cur.chunks) > 0 || !cur.git {
				if err := flush(); err != nil {
					return nil, err
				}
				cur = &uFile{header: i, binary: -1, copy: -1}
			}
			cur.hasOld = true
			cur.oldName = headerName(l[4:])
			cur.newName = headerName(L[i+1][4:])
			cur.oldEpoch, cur.newEpoch = epochStamp(l[4:]), epochStamp(L[i+1][4:])
			i += 2
			if i < hi && (L[i] == "" && moreHunkLines(L, i, hi) || L[i] != "" && strings.IndexByte(" +-", L[i][0]) >= 0 && isHunkLine(L, i, hi)) {
				// The first hunk without its "@@" line.
				c, next := readHunk(L, i, hi, true)
				cur.chunks = append(cur.chunks, c)
				if err := checkHunkEnd(L, next, hi); err != nil {
					return nil, err
				}
				i = next
			}
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				return nil, hunkError(i, "start each file of a unified diff with '--- a/PATH' and '+++ b/PATH' lines",
					"unified diff hunk '%s' has no file header", l)
			}
			c, next := readHunk(L, i, hi, false)
			if len(c.Lines) == 0 {
				if j := i + 1; j < hi && L[j] != "" && !isDiffMarker(L[j]) && !strings.HasPrefix(L[j], "@@") && !strings.HasPrefix(L[j], "diff ") {
					return nil, unprefixed(L, j)
				}
				return nil, hunkError(i, "put the hunk's ' ', '-' and '+' lines after its '@@' line", "Update hunk does not contain any lines")
			}
			cur.chunks = append(cur.chunks, c)
			if err := checkHunkEnd(L, next, hi); err != nil {
				return nil, err
			}
			i = next
		case l == "GIT binary patch" && cur != nil && cur.git:
			b, next, err := readBinary(L, i+1, hi, opt.maxBinary())
			if err != nil {
				return nil, err
			}
			cur.bin, cur.binAt = b, i
			i = next
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			if cur == nil || !cur.git {
				// GNU diff's "Binary files A and B differ", with no header.
				name := strings.TrimPrefix(l, "Binary files ")
				if j := strings.Index(name, " and "); j >= 0 {
					name = name[:j]
				}
				return nil, hunkError(i, "the diff holds no data for it: apply this file's change another way (git diff --binary and git apply), or leave it out",
					"'%s' is a binary file whose change the diff does not hold ('%s')", name, l)
			}
			cur.binary = i
			i++
		default:
			// Other lines are skipped, but hunk lines cannot be: skipping
			// them would apply part of the change. A git format-patch
			// signature ("-- ") or the next mail ("From ") ends the file.
			if cur != nil && cur.hasOld && !cur.closed {
				if l == "-- " || strings.HasPrefix(l, "From ") {
					cur.closed = true
				} else if l != "" && strings.IndexByte(" +-", l[0]) >= 0 && isHunkLine(L, i, hi) {
					return nil, hunkError(i, "start every hunk with an '@@ -a,b +c,d @@' line, and prefix its context lines with a space",
						"line '%s' is not inside a hunk", l)
				}
			}
			i++
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		return nil, noFiles("the diff changes no file content")
	}
	return p, nil
}

// extended reads git's extended header lines after "diff --git".
func (f *uFile) extended(L []string, i, hi int) int {
	for ; i < hi; i++ {
		l := L[i]
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
func (f *uFile) op(L []string, opt Options) (*FileOp, error) {
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
		if defaultStripsPrefix(oldName, newName) {
			strip = 1
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
func (f *uFile) fileOp(L []string, oldName, newName string, line int, name string) (*FileOp, error) {
	if f.binary >= 0 {
		// git diff without --binary: the new content is not there at all.
		return nil, hunkError(f.binary, "the diff holds no data for it: make the diff with git diff --binary and apply it with git apply, or leave the file out",
			"'%s' is a binary file whose change the diff does not hold ('%s')", name, L[f.binary])
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
	case oldName == "" && newName == "":
		return nil, hunkError(line, "name the file in '--- a/PATH' and '+++ b/PATH' lines", "unified diff file header names no file")
	case oldName == "" || f.isNew:
		op := &FileOp{Kind: Add, Path: newName, Line: line + 1, Mode: f.mode}
		n := 0
		for _, c := range f.chunks {
			n += len(c.Lines)
		}
		if n > 0 {
			op.Content = make([]string, 0, n)
		}
		for _, c := range f.chunks {
			for _, cl := range c.Lines {
				if cl.Op != '+' {
					return nil, hunkError(cl.Line-1, "every line of a new file's hunk starts with '+'",
						"new file '%s' has a hunk with context or removed lines", newName)
				}
				op.Content = append(op.Content, cl.Text)
				if cl.EOL != Unknown {
					op.ContentEOL = append(op.ContentEOL, cl.EOL)
				}
			}
			op.NoFinalNewline = c.NewNoNewline
		}
		if len(op.ContentEOL) != len(op.Content) {
			op.ContentEOL = nil
		}
		return op, nil
	case newName == "" || f.isDel:
		op := &FileOp{Kind: Delete, Path: oldName, Line: line + 1, OldMode: f.oldMode}
		for _, c := range f.chunks {
			for _, cl := range c.Lines {
				if cl.Op == '-' {
					op.Removed++
					op.Content = append(op.Content, cl.Text)
					if cl.EOL != Unknown {
						op.ContentEOL = append(op.ContentEOL, cl.EOL)
					}
				}
			}
			op.NoFinalNewline = c.OldNoNewline
		}
		// A deletion whose hunks hold only removed lines holds the file's
		// whole content (git diff, diff -ruN): -R can bring it back.
		op.Full = len(f.chunks) == 0 && f.git || chunksAll(f.chunks, '-')
		if !op.Full {
			op.Content, op.NoFinalNewline = nil, false
		}
		if len(op.ContentEOL) != len(op.Content) {
			op.ContentEOL = nil
		}
		return op, nil
	}
	op := &FileOp{Kind: Update, Path: oldName, Chunks: f.chunks, Line: line + 1, Mode: f.mode, OldMode: f.oldMode}
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

// chunksAll reports whether every line of chunks is op: a side of the
// file is empty. At least one chunk is needed (an empty file on both sides
// has none, and is no creation or removal).
func chunksAll(chunks []*Chunk, op byte) bool {
	for _, c := range chunks {
		for _, l := range c.Lines {
			if l.Op != op {
				return false
			}
		}
	}
	return len(chunks) > 0
}

// epochStamp reports whether a "--- "/"+++ " line's timestamp (after a tab)
// is the Unix epoch in any time zone, as GNU diff -N writes for an absent
// file: "1970-01-01 00:00:00.000000000 +0000", "1970-01-01 01:00:00 +0100",
// or the traditional "Thu Jan  1 00:00:00 1970".
func epochStamp(s string) bool {
	i := strings.IndexByte(s, '\t')
	if i < 0 {
		return false
	}
	stamp := strings.TrimSpace(s[i+1:])
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05 -0700"} {
		if t, err := time.Parse(layout, stamp); err == nil {
			return t.Unix() == 0
		}
	}
	if t, err := time.Parse("Mon Jan _2 15:04:05 2006", stamp); err == nil {
		return t.Unix() == 0
	}
	return false
}

// headerName reads the file name of a "--- " or "+++ " line: quoted C-style
// or up to a tab (diff -u puts the timestamp after one); /dev/null is "".
func headerName(s string) string {
	if len(s) > 0 && s[0] == '"' {
		if q, _, ok := cutQuoted(s); ok {
			return devNull(q)
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return devNull(strings.TrimRight(s, " "))
}

func devNull(s string) string {
	if s == "/dev/null" {
		return ""
	}
	return s
}

// splitGitHeader splits the two names of "diff --git a/x b/y": quoted
// names, or two halves with equal paths, or at " b/".
func splitGitHeader(s string) (string, string) {
	if len(s) > 0 && s[0] == '"' {
		if a, rest, ok := cutQuoted(s); ok {
			rest = strings.TrimLeft(rest, " ")
			if b, _, ok := cutQuoted(rest); ok {
				return a, b
			}
			return a, rest
		}
	}
	if i := strings.LastIndex(s, " \""); i >= 0 {
		if b, _, ok := cutQuoted(s[i+1:]); ok {
			return s[:i], b
		}
	}
	// Same name on both sides: "P/x Q/x" splits in the middle.
	if len(s)%2 == 1 {
		m := len(s) / 2
		if s[m] == ' ' {
			a, b := s[:m], s[m+1:]
			if ia, ib := strings.IndexByte(a, '/'), strings.IndexByte(b, '/'); ia >= 0 && ib >= 0 && a[ia:] == b[ib:] {
				return a, b
			}
			if a == b {
				return a, b
			}
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, s
}

// cutQuoted reads a C-style quoted string at the start of s (git quotes
// names with unusual bytes so) and returns it unquoted and the rest.
func cutQuoted(s string) (string, string, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			u, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", s, false
			}
			return u, s[i+1:], true
		}
	}
	return "", s, false
}

func unquote(s string) string {
	if len(s) > 0 && s[0] == '"' {
		if q, _, ok := cutQuoted(s); ok {
			return q
		}
	}
	return s
}

// checkHunkEnd refuses a hunk cut in two by a line that is no hunk line (a
// context line that lost its leading space, say): reading on would apply
// half of it. j is the line after the hunk.
func checkHunkEnd(L []string, j, hi int) error {
	if j+1 >= hi || L[j] == "" || isDiffMarker(L[j]) || strings.HasPrefix(L[j], "@@") || strings.HasPrefix(L[j], "diff ") {
		return nil
	}
	if n := L[j+1]; n != "" && strings.IndexByte(" +-", n[0]) >= 0 && isHunkLine(L, j+1, hi) {
		return unprefixed(L, j)
	}
	return nil
}

// unprefixed is the error for hunk line j that starts with none of ' ', '-'
// and '+' (Codex's wording), with a hint naming the line: most often a
// context line that lost its leading space.
func unprefixed(L []string, j int) error {
	return hunkError(j, fmt.Sprintf("if line %d is context, prefix it with a space: ' %s' (removed lines start with '-', added ones with '+')", j+1, L[j]),
		"Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", L[j])
}

// readHunk reads the hunk whose "@@" header is line i (headerless: whose
// first line is line i) and returns it and the index of the line after it.
func readHunk(L []string, i, hi int, headerless bool) (*Chunk, int) {
	c := &Chunk{Line: i + 1, NoHeader: headerless}
	hasCounts := false
	start := i + 1
	if headerless {
		start = i
	} else if h := L[i]; strings.HasPrefix(h, "@@ ") {
		if os, ol, ns, nl, _, ok := parseRange(h[3:]); ok {
			c.OldStart, c.OldLines, c.NewStart, c.NewLines = os, ol, ns, nl
			hasCounts = true
		}
	}
	j := start
	if hasCounts {
		// Read by the counts while the lines agree with them.
		remOld, remNew := c.OldLines, c.NewLines
		for j < hi && (remOld > 0 || remNew > 0) {
			l := L[j]
			var op byte = ' '
			if l != "" {
				op = l[0]
			}
			switch op {
			case ' ':
				remOld--
				remNew--
			case '-':
				remOld--
			case '+':
				remNew--
			case '\\':
			default:
				remOld, remNew = -1, -1 // a non-hunk line: the counts were too big
				continue
			}
			if remOld < 0 || remNew < 0 {
				break // the counts were too small
			}
			j++
		}
		for j < hi && len(L[j]) > 0 && L[j][0] == '\\' {
			j++
		}
		if remOld == 0 && remNew == 0 && !moreHunkLines(L, j, hi) {
			return c.fill(L, start, j), j
		}
		j = start
	}
	// No counts, or counts that do not fit: read up to the next header or
	// non-diff line; empty lines count only when hunk lines follow them.
	for j < hi {
		if !isHunkLine(L, j, hi) {
			break
		}
		if L[j] == "" && !moreHunkLines(L, j, hi) {
			break
		}
		j++
	}
	return c.fill(L, start, j), j
}

// isHunkLine reports whether line j continues a hunk body read without counts.
func isHunkLine(L []string, j, hi int) bool {
	l := L[j]
	if l == "" {
		return true
	}
	switch l[0] {
	case ' ', '+', '\\':
		return true
	case '-':
		if strings.HasPrefix(l, "--- ") && j+1 < hi && strings.HasPrefix(L[j+1], "+++ ") {
			return false // the next file
		}
		if l == "-- " && (j+1 >= hi || !isDiffMarker(L[j+1])) {
			return false // git format-patch's signature separator
		}
		return true
	}
	return false
}

func isDiffMarker(l string) bool {
	return l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\'
}

// moreHunkLines reports whether, after any empty lines from j, a line
// follows that continues the hunk (not the next file's header).
func moreHunkLines(L []string, j, hi int) bool {
	for j < hi && L[j] == "" {
		j++
	}
	if j >= hi || L[j] == "" {
		return false
	}
	switch L[j][0] {
	case ' ', '+', '-':
		return isHunkLine(L, j, hi)
	}
	return false
}

// fill sets c's lines from L[start:end] ("\" lines mark the line before).
func (c *Chunk) fill(L []string, start, end int) *Chunk {
	n := 0
	for _, l := range L[start:end] {
		if l == "" || l[0] != '\\' {
			n++
		}
	}
	c.Lines = make([]ChunkLine, 0, n)
	for k := start; k < end; k++ {
		l := L[k]
		switch {
		case l == "":
			c.Lines = append(c.Lines, ChunkLine{Op: ' ', Line: k + 1})
		case l[0] == '\\':
			if len(c.Lines) == 0 {
				continue
			}
			switch c.Lines[len(c.Lines)-1].Op {
			case '-':
				c.OldNoNewline = true
			case '+':
				c.NewNoNewline = true
			default:
				c.OldNoNewline, c.NewNoNewline = true, true
			}
		default:
			c.Lines = append(c.Lines, ChunkLine{Op: l[0], Text: l[1:], Line: k + 1})
		}
	}
	return c
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
