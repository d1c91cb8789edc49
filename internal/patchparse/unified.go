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
	// gnuTrees: GNU diff -r's own line ("diff -ruN old/x new/x") names
	// the same two paths: two trees compared, whatever their names.
	gnuTrees         bool
	hasOld           bool // a "---" line was read
	closed           bool // a mail signature or header followed the hunks
	renFrom          string
	renTo            string
	isNew            bool
	isDel            bool
	binary           int     // line index of "Binary files ... differ" (no data), or -1
	bin              *Binary // a GIT binary patch
	binAt            int     // its line index
	oldHash, newHash string  // from the "index" line
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
	return in.tlo < in.thi && !strings.HasPrefix(strings.TrimSpace(in.L.at(in.tlo)), "***") && looksUnified(in.L, in.tlo, in.thi)
}

// looksUnified reports whether the window holds a unified diff: a git
// header, or a "--- " line followed by a "+++ " line.
func looksUnified(L lines, lo, hi int) bool {
	for i := lo; i < hi; i++ {
		l := L.at(i)
		if strings.HasPrefix(l, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l, "--- ") && i+1 < hi && strings.HasPrefix(L.at(i+1), "+++ ") {
			return true
		}
	}
	return false
}

// parseUnifiedInput parses in as a unified diff (formats).
func parseUnifiedInput(in *input) (*Patch, error) {
	return parseUnified(in.L, in.cut, in.tlo, in.hi, in.opt)
}

func parseUnified(L lines, k cutter, lo, hi int, opt Options) (*Patch, error) {
	if opt.eagerHunks {
		k = cutter{}
	}
	u := &unifiedParser{L: L, from: &hunkReader{L: L, k: k, text: &hunkText{text: L.text, endings: L.ownEndings()}}, hi: hi, opt: opt, p: &Patch{Format: Unified}}
	var err error
	for i := lo; i < hi && err == nil; {
		l := L.at(i)
		switch {
		case strings.HasPrefix(l, "diff --cc ") || strings.HasPrefix(l, "diff --combined ") || strings.HasPrefix(l, "@@@ "):
			err = combined(l, i)
		case strings.HasPrefix(l, "diff --git "):
			if err = u.flush(); err == nil {
				u.cur = &uFile{header: i, git: true, binary: -1, copy: -1}
				u.cur.gitOld, u.cur.gitNew = splitGitHeader(l[len("diff --git "):])
				i = u.cur.extended(L, i+1, hi)
			}
		case strings.HasPrefix(l, "--- ") && i+1 < hi && strings.HasPrefix(L.at(i+1), "+++ "):
			i, err = u.header(i)
		case strings.HasPrefix(l, "@@"):
			i, err = u.hunk(i)
		case l == "GIT binary patch" && u.cur != nil && u.cur.git:
			var b *Binary
			var next int
			if b, next, err = readBinary(L, i+1, hi, opt.maxBinary()); err == nil {
				u.cur.bin, u.cur.binAt, i = b, i, next
			}
		case strings.HasPrefix(l, "Binary files ") || l == "GIT binary patch":
			err = u.binaryNotice(i)
			i++
		case strings.HasPrefix(l, "Symbolic links ") || strings.HasPrefix(l, "File "):
			err = gnuNotice(l, i)
			i++
		default:
			err = u.other(i)
			i++
		}
	}
	if err == nil {
		err = u.flush()
	}
	if err != nil {
		return nil, err
	}
	if len(u.p.Files) == 0 {
		return nil, noFiles("the diff changes no file content")
	}
	return u.p, nil
}

// unifiedParser is parseUnified's state: the patch so far and the file
// being read.
type unifiedParser struct {
	L    lines
	from *hunkReader // (the hunks')
	hi   int
	opt  Options
	p    *Patch
	cur  *uFile
}

// flush ends the file being read: its operation joins the patch.
func (u *unifiedParser) flush() error {
	cur := u.cur
	if cur == nil {
		return nil
	}
	u.cur = nil
	op, err := cur.op(u.L, u.opt)
	if err != nil {
		return err
	}
	if op != nil {
		u.p.Files = append(u.p.Files, op)
	}
	return nil
}

// header reads the "--- OLD" and "+++ NEW" lines at i (a new file, unless
// they follow a git header), and a first hunk without its "@@" line.
func (u *unifiedParser) header(i int) (int, error) {
	L, hi := u.L, u.hi
	if u.cur == nil || u.cur.hasOld || len(u.cur.chunks) > 0 || !u.cur.git {
		if err := u.flush(); err != nil {
			return i, err
		}
		u.cur = &uFile{header: i, binary: -1, copy: -1}
	}
	cur := u.cur
	cur.hasOld = true
	cur.oldName = headerName(L.at(i)[4:])
	cur.newName = headerName(L.at(i + 1)[4:])
	cur.oldEpoch, cur.newEpoch = epochStamp(L.at(i)[4:]), epochStamp(L.at(i + 1)[4:])
	cur.gnuTrees = !cur.git && i > 0 && strings.HasPrefix(L.at(i-1), "diff -") && strings.HasSuffix(L.at(i-1), " "+cur.oldName+" "+cur.newName)
	i += 2
	if i < hi && (L.at(i) == "" && moreHunkLines(L, i, hi) || L.at(i) != "" && strings.IndexByte(" +-", L.at(i)[0]) >= 0 && isHunkLine(L, i, hi)) {
		// The first hunk without its "@@" line.
		c, next := readHunk(u.from, i, hi, true)
		cur.chunks = append(cur.chunks, c)
		if err := checkHunkEnd(L, next, hi); err != nil {
			return i, err
		}
		i = next
	}
	return i, nil
}

// hunk reads the hunk whose "@@" line is at i.
func (u *unifiedParser) hunk(i int) (int, error) {
	L, hi := u.L, u.hi
	if u.cur == nil {
		return i, hunkError(i, "start each file of a unified diff with '--- a/PATH' and '+++ b/PATH' lines",
			"unified diff hunk '%s' has no file header", L.at(i))
	}
	c, next := readHunk(u.from, i, hi, false)
	if c.Len() == 0 {
		if j := i + 1; j < hi && L.at(j) != "" && !isDiffMarker(L.at(j)) && !strings.HasPrefix(L.at(j), "@@") && !strings.HasPrefix(L.at(j), "diff ") {
			return i, unprefixed(L, j)
		}
		return i, hunkError(i, "put the hunk's ' ', '-' and '+' lines after its '@@' line", "Update hunk does not contain any lines")
	}
	u.cur.chunks = append(u.cur.chunks, c)
	if err := checkHunkEnd(L, next, hi); err != nil {
		return i, err
	}
	return next, nil
}

// binaryNotice takes a "Binary files A and B differ" line (or a binary
// patch outside a git diff): inside a git diff it marks the file binary;
// anywhere else the diff holds no data for the file, which is refused.
func (u *unifiedParser) binaryNotice(i int) error {
	l := u.L.at(i)
	if u.cur == nil || !u.cur.git {
		// GNU diff's "Binary files A and B differ", with no header.
		name := strings.TrimPrefix(l, "Binary files ")
		if j := strings.Index(name, " and "); j >= 0 {
			name = name[:j]
		}
		return hunkError(i, "the diff holds no data for it: apply this file's change another way (git diff --binary and git apply), or leave it out",
			"'%s' is a binary file whose change the diff does not hold ('%s')", name, l)
	}
	u.cur.binary = i
	return nil
}

// combined refuses a combined diff (git diff --cc, git show of a merge):
// a merge's change against each of its parents at once, which no tool
// applies; said for what it is, not as lines that do not match.
func combined(l string, i int) error {
	what := "a combined diff"
	if name, ok := strings.CutPrefix(l, "diff --cc "); ok {
		what = fmt.Sprintf("'%s' is in a combined diff", name)
	} else if name, ok := strings.CutPrefix(l, "diff --combined "); ok {
		what = fmt.Sprintf("'%s' is in a combined diff", name)
	}
	return hunkError(i, "make the diff against one parent: git diff MERGE^1 MERGE, or git show --first-parent / git log -p --first-parent",
		"%s (git diff --cc: a merge's change against each of its parents at once), which neither hunk nor git apply can apply", what)
}

// gnuTypes are the kinds of file GNU diff names when two differ in kind.
var gnuTypes = map[string]bool{"regular file": true, "regular empty file": true, "symbolic link": true, "directory": true,
	"fifo": true, "socket": true, "character special file": true, "block special file": true}

// gnuNotice refuses GNU diff's lines for a pair it wrote no data for — a
// symbolic link that differs ("Symbolic links A and B differ"), a file
// whose kind differs ("File A is a regular file while file B is a symbolic
// link"): skipped as prose, the rest would apply and leave that file as it
// was (git apply and GNU patch do so). Any other line is let be.
func gnuNotice(l string, i int) error {
	const hint = "GNU diff writes no data for links: apply this file's change another way (git diff and git apply hold links), or leave it out"
	if rest, ok := strings.CutPrefix(l, "Symbolic links "); ok && strings.HasSuffix(rest, " differ") {
		if a, _, ok := strings.Cut(strings.TrimSuffix(rest, " differ"), " and "); ok {
			return hunkError(i, hint, "'%s' is a symbolic link whose change the diff does not hold ('%s')", a, l)
		}
	}
	if rest, ok := strings.CutPrefix(l, "File "); ok {
		a, tail, ok1 := strings.Cut(rest, " is a ")
		t1, tail, ok2 := strings.Cut(tail, " while file ")
		_, t2, ok3 := strings.Cut(tail, " is a ")
		if ok1 && ok2 && ok3 && gnuTypes[t1] && gnuTypes[t2] {
			return hunkError(i, hint, "'%s' is a %s on one side and a %s on the other, and the diff does not hold the change ('%s')", a, t1, t2, l)
		}
	}
	return nil
}

// other takes any other line: skipped, but hunk lines cannot be (skipping
// them would apply part of the change). A git format-patch signature ("-- "),
// the next mail ("From ") or the next commit of git log -p ("commit ID", its
// message indented by four spaces) ends the file.
func (u *unifiedParser) other(i int) error {
	l, cur := u.L.at(i), u.cur
	if cur == nil || !cur.hasOld || cur.closed {
		return nil
	}
	if l == "-- " || strings.HasPrefix(l, "From ") || commitLine(l) {
		cur.closed = true
	} else if l != "" && strings.IndexByte(" +-", l[0]) >= 0 && isHunkLine(u.L, i, u.hi) {
		return hunkError(i, "start every hunk with an '@@ -a,b +c,d @@' line, and prefix its context lines with a space",
			"line '%s' is not inside a hunk", l)
	}
	return nil
}

// commitLine reports whether l opens a commit of git log's output:
// "commit " and a full object id (SHA-1 or SHA-256), maybe decorated.
func commitLine(l string) bool {
	rest, ok := strings.CutPrefix(l, "commit ")
	if !ok {
		return false
	}
	id, _, _ := strings.Cut(rest, " ")
	return (len(id) == 40 || len(id) == 64) && strings.Trim(id, "0123456789abcdef") == ""
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
