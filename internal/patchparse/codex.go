package patchparse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// The markers of Codex's grammar (codex-rs/apply-patch/src/parser.rs), and
// the variants other tools emit.
const (
	beginPatch    = "*** Begin Patch"
	endPatch      = "*** End Patch"
	environmentID = "*** Environment ID:"
	addFile       = "*** Add File: "
	deleteFile    = "*** Delete File: "
	updateFile    = "*** Update File: "
	modifyFile    = "*** Modify File: " // variant: = Update File
	moveFile      = "*** Move File: "   // variant: "*** Move File: a -> b"
	moveTo        = "*** Move to: "
	endOfFile     = "*** End of File"
	validHeaders  = "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
)

// parseCodex parses the Codex patch in L[lo:hi] (blank lines and a heredoc
// already trimmed off).
//
// Where this differs from Codex's lenient parser, it accepts more and never
// reads a patch Codex accepts differently: blank lines between file
// operations are skipped, an "*** Environment ID:" line after Begin Patch is
// skipped, an Add File body may contain bare empty lines (a "+" lost), and
// the variants Modify File, Move File and "@@ -a,b +c,d @@" headers are read.
// Marker padding is tolerated where Codex tolerates it: on the Begin/End
// lines and on file-operation headers, not inside a chunk, where a leading
// space marks a context line.
// parseCodexInput parses in as a Codex patch (formats).
func parseCodexInput(in *input) (*Patch, error) {
	return parseCodex(in.L, in.cut, in.tlo, in.thi, in.opt.Codex, in.opt.Codex || in.opt.Strict)
}

func parseCodex(L lines, k cutter, lo, hi int, strict, tight bool) (*Patch, error) {
	var notes []string
	noEnd := false
	if !tight && lo < hi {
		lo, hi, notes, noEnd = looseEnvelope(L, lo, hi)
	}
	if err := checkEnvelope(L, lo, hi, noEnd); err != nil {
		return nil, err
	}
	p := &Patch{Format: Codex, Notes: notes}
	i, end := lo+1, hi-1
	if noEnd {
		end = hi
	}
	if i < end && strings.HasPrefix(strings.TrimSpace(L.at(i)), environmentID) {
		// As Codex 0.171 reads it: one line, with an id (an empty one
		// passed over here but for --compat codex).
		if strict && strings.TrimSpace(strings.TrimSpace(L.at(i))[len(environmentID):]) == "" {
			return nil, patchError(i+1, "apply_patch environment_id cannot be empty", "give the environment's id after '*** Environment ID:', or drop the line")
		}
		if i+1 < end && strings.HasPrefix(strings.TrimSpace(L.at(i+1)), environmentID) {
			return nil, patchError(i+2, "apply_patch environment_id cannot be specified more than once", "keep one '*** Environment ID:' line")
		}
		i++
	}
	for i < end {
		t := strings.TrimSpace(L.at(i))
		if t == "" {
			if strict { // Codex reads a section header on every line here
				return nil, hunkError(i, "remove the blank line: Codex reads a file section header on it",
					"'' is not a valid hunk header. %s", validHeaders)
			}
			i++
			continue
		}
		op, next, err := parseSection(L, k, i, end, t, strict)
		if err != nil {
			return nil, err
		}
		if op.Path == "" {
			return nil, hunkError(op.Line-1, "name the file after the marker", "'%s' is not a valid hunk header. %s", t, validHeaders)
		}
		p.Files = append(p.Files, op)
		i = next
	}
	if len(p.Files) == 0 {
		return nil, noFiles("the patch has no '*** Add File:', '*** Delete File:' or '*** Update File:' section")
	}
	return p, nil
}

// parseSection reads the file section whose header t is at line i.
func parseSection(L lines, k cutter, i, end int, t string, strict bool) (op *FileOp, next int, err error) {
	switch {
	case strings.HasPrefix(t, addFile):
		op, i = parseAdd(L, i, end, strings.TrimSpace(t[len(addFile):]), strict)
		return op, i, nil
	case strings.HasPrefix(t, deleteFile):
		return &FileOp{Kind: Delete, Path: strings.TrimSpace(t[len(deleteFile):]), Line: i + 1}, i + 1, nil
	case strings.HasPrefix(t, updateFile), strings.HasPrefix(t, modifyFile):
		path := strings.TrimSpace(t[len(updateFile):]) // same length as modifyFile
		return parseUpdate(L, k, i, end, path, "", false)
	case strings.HasPrefix(t, moveFile):
		from, to, ok := strings.Cut(t[len(moveFile):], " -> ")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || from == "" || to == "" {
			return nil, i, hunkError(i, "write a move as '*** Move File: OLD -> NEW', or as '*** Update File: OLD' followed by '*** Move to: NEW'",
				"'%s' is not a valid hunk header. %s", t, validHeaders)
		}
		return parseUpdate(L, k, i, end, from, to, true)
	}
	return nil, i, hunkError(i, headerHint(L, i, t), "'%s' is not a valid hunk header. %s", t, validHeaders)
}

// looseEnvelope reads a loose envelope, outside --compat codex: text
// before '*** Begin Patch' or after '*** End Patch' (a model's prose, a
// heredoc's end, a fence) is ignored, and input without '*** End Patch' is
// read to its end (noEnd); each is noted.
func looseEnvelope(L lines, lo, hi int) (int, int, []string, bool) {
	var notes []string
	noEnd := false
	if strings.TrimSpace(L.at(lo)) != beginPatch {
		for k := lo + 1; k < hi; k++ {
			if strings.TrimSpace(L.at(k)) == beginPatch {
				notes = append(notes, fmt.Sprintf("ignored %s before '*** Begin Patch'", result.Count(k-lo, "line")))
				lo = k
				break
			}
		}
	}
	if strings.TrimSpace(L.at(lo)) == beginPatch && strings.TrimSpace(L.at(hi-1)) != endPatch {
		if k := findMarker(L, lo+1, hi, endPatch); k >= 0 {
			notes = append(notes, fmt.Sprintf("ignored %s after '*** End Patch'", result.Count(hi-1-k, "line")))
			hi = k + 1
		} else {
			noEnd = true
			// Prose after the last line a patch can hold (one that
			// starts with a space, '+', '-', '@' or '*'), and the
			// blank lines before it, is not the patch's.
			k := hi
			for k > lo+1 && (strings.TrimSpace(L.at(k-1)) == "" || !strings.ContainsAny(L.at(k - 1)[:1], " +-@*\t\\")) {
				k--
			}
			prose := 0
			for j := k; j < hi; j++ {
				if strings.TrimSpace(L.at(j)) != "" {
					prose++
				}
			}
			if prose > 0 {
				notes = append(notes, fmt.Sprintf("the patch has no '*** End Patch': it was read to its last line, and the %s of text after it ignored", result.Count(prose, "line")))
				hi = k
			} else {
				notes = append(notes, "the patch has no '*** End Patch': it was read to the end of the input")
			}
		}
	}
	return lo, hi, notes, noEnd
}

// checkEnvelope refuses a patch that does not start with '*** Begin Patch'
// or (but where it was read to its end) end with '*** End Patch'.
func checkEnvelope(L lines, lo, hi int, noEnd bool) error {
	if lo >= hi || strings.TrimSpace(L.at(lo)) != beginPatch {
		line := 0
		if lo < hi {
			line = lo + 1
		}
		hint := "a Codex patch starts with '*** Begin Patch' and ends with '*** End Patch'; a unified diff starts with '--- a/PATH' and '+++ b/PATH' lines"
		if k := findMarker(L, lo, hi, beginPatch); k > lo {
			hint = fmt.Sprintf("remove the %s before '*** Begin Patch' (line %d)", result.Count(k-lo, "line"), k+1)
		} else if lo < hi && isFileHeader(strings.TrimSpace(L.at(lo))) {
			hint = "add a line '*** Begin Patch' before the first file operation"
		}
		return patchError(line, "The first line of the patch must be '*** Begin Patch'", hint)
	}
	if !noEnd && (hi-lo < 2 || strings.TrimSpace(L.at(hi-1)) != endPatch) {
		hint := "end the patch with a line '*** End Patch'"
		if k := findMarker(L, lo+1, hi, endPatch); k >= 0 {
			hint = fmt.Sprintf("remove the %s after '*** End Patch' (line %d)", result.Count(hi-1-k, "line"), k+1)
		}
		return patchError(hi, "The last line of the patch must be '*** End Patch'", hint)
	}
	return nil
}

// findMarker returns the index of the last line in [lo,hi) that is marker
// (padding allowed), or -1.
func findMarker(L lines, lo, hi int, marker string) int {
	for k := hi - 1; k >= lo; k-- {
		if strings.TrimSpace(L.at(k)) == marker {
			return k
		}
	}
	return -1
}

func isFileHeader(t string) bool {
	for _, m := range []string{addFile, deleteFile, updateFile, modifyFile, moveFile} {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

// headerHint says what to do about a line that is not a file operation.
func headerHint(L lines, i int, t string) string {
	prev := ""
	for k := i - 1; k >= 0; k-- {
		if p := strings.TrimSpace(L.at(k)); strings.HasPrefix(p, "***") {
			prev = p
			break
		}
	}
	bodyLine := len(t) > 0 && (t[0] == '-' || t[0] == '+' || t[0] == '@') || len(L.at(i)) > 0 && L.at(i)[0] == ' '
	switch {
	case strings.HasPrefix(prev, deleteFile) && bodyLine:
		return "'*** Delete File: PATH' takes no lines after it; remove them"
	case strings.HasPrefix(prev, addFile) && (bodyLine || afterAddBody(L, i)):
		return "every line of an '*** Add File:' section starts with '+'; changes to an existing file go in an '*** Update File:' section of '@@' chunks"
	case bodyLine:
		return "put chunk lines in an '*** Update File: PATH' section"
	case strings.HasPrefix(t, "***"):
		return "a file operation is '*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH' (optionally followed by '*** Move to: NEW')"
	}
	return "every section of the patch starts with '*** Add File: PATH', '*** Delete File: PATH' or '*** Update File: PATH'"
}

// afterAddBody reports whether line i directly follows a file-operation header or a
// '+' line (an Add File body that went astray).
func afterAddBody(L lines, i int) bool {
	return i > 0 && len(L.at(i-1)) > 0 && (L.at(i - 1)[0] == '+' || strings.HasPrefix(strings.TrimSpace(L.at(i-1)), "***"))
}

// parseAdd reads an Add File section starting at header line i. Its body is
// the "+" lines that follow; an empty line between "+" lines is read as an
// empty line of the file (Codex, and strict, stop there and fail on the next
// line).
func parseAdd(L lines, i, end int, path string, strict bool) (*FileOp, int) {
	op := &FileOp{Kind: Add, Path: path, Line: i + 1}
	j := i + 1
	n := 0
	for j < end {
		if l := L.at(j); len(l) > 0 && l[0] == '+' {
			j++
			n++
			continue
		}
		k := j
		for k < end && isBlank(L.at(k)) {
			k++
		}
		if !strict && k > j && k < end && len(L.at(k)) > 0 && L.at(k)[0] == '+' {
			n += k - j
			j = k
			continue
		}
		break
	}
	if n > 0 {
		op.Content = make([]string, 0, n)
		for k := i + 1; k < j; k++ {
			if l := L.at(k); len(l) > 0 && l[0] == '+' {
				op.Content = append(op.Content, l[1:])
			} else {
				op.Content = append(op.Content, "")
			}
		}
	}
	return op, j
}

// parseUpdate reads an Update File (or Move File) section starting at
// header line i: an optional "*** Move to:" line, then chunks until a line
// starting with "*".
func parseUpdate(L lines, k cutter, i, end int, path, to string, isMove bool) (*FileOp, int, error) {
	op := &FileOp{Kind: Update, Path: path, MoveTo: to, Line: i + 1}
	j := i + 1
	if !isMove && j < end {
		if t := strings.TrimSpace(L.at(j)); strings.HasPrefix(t, moveTo) {
			op.MoveTo = strings.TrimSpace(t[len(moveTo):])
			j++
		}
	}
	for j < end {
		l := L.at(j)
		if isBlank(l) {
			k := -1
			if len(op.Chunks) == 0 {
				k = leadingContext(L, j, end)
			}
			if k < 0 {
				j++
				continue
			}
			j = k
		} else if l[0] == '*' {
			break
		}
		c, next, err := parseChunk(L, k, j, end, len(op.Chunks) == 0)
		if err != nil {
			return nil, 0, err
		}
		op.Chunks = append(op.Chunks, c)
		j = next
	}
	if len(op.Chunks) == 0 && !isMove {
		hint := "give the file at least one '@@' chunk of ' ', '-' and '+' lines"
		if op.MoveTo != "" {
			hint = "to move a file without changing it, write '*** Move File: " + path + " -> " + op.MoveTo + "'"
		}
		return nil, 0, hunkError(i, hint, "Update file hunk for path '%s' is empty", path)
	}
	return op, j, nil
}

// leadingContext handles blank lines before a first chunk written without
// "@@": Codex skips them all, but a line of exactly one space is the
// context line of an empty file line, and dropping it can make the chunk fit
// another place. It returns the index of the first such line when the blank
// run at j is followed by a headerless chunk, or -1 (skip the run).
func leadingContext(L lines, j, end int) int {
	k := j
	for k < end && isBlank(L.at(k)) {
		k++
	}
	if k >= end || strings.IndexByte(" +-", L.at(k)[0]) < 0 {
		return -1
	}
	for i := j; i < k; i++ {
		if L.at(i) == " " {
			return i
		}
	}
	return -1
}

// parseChunk reads one chunk starting at line i: a "@@" header (optional for
// the first chunk) and its ' ', '-', '+' and empty lines, up to a line that
// is none of these or "*** End of File".
func parseChunk(L lines, k cutter, i, end int, first bool) (*Chunk, int, error) {
	c := &Chunk{Line: i + 1}
	h := strings.TrimRight(L.at(i), " \t")
	switch {
	case h == "@@":
		i++
	case strings.HasPrefix(h, "@@ "):
		rest := L.at(i)[3:]
		if os, ol, ns, nl, ctx, ok := parseRange(rest); ok {
			c.OldStart, c.OldLines, c.NewStart, c.NewLines = os, ol, ns, nl
			rest = ctx
		}
		if !isBlank(rest) {
			c.Context = rest
		}
		i++
	case first:
		c.NoHeader = true
	default:
		return nil, 0, hunkError(i, "start every chunk after the first with a line '@@' or '@@ CONTEXT'",
			"Expected update hunk to start with a @@ context marker, got: '%s'", L.at(i))
	}
	if i >= end {
		return nil, 0, hunkError(i, "put the chunk's ' ', '-' and '+' lines after its '@@' line", "Update hunk does not contain any lines")
	}
	// Find the chunk's extent first so that its lines get one allocation.
	j := i
	for ; j < end; j++ {
		l := L.at(j)
		if l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' {
			continue
		}
		break
	}
	if j == i {
		if isEndOfFile(L.at(i)) {
			return nil, 0, hunkError(i, "put the chunk's ' ', '-' and '+' lines before '*** End of File'", "Update hunk does not contain any lines")
		}
		return nil, 0, unprefixed(L, i)
	}
	k.cutLines(c, j-i, func(add func(op byte, line int, text string)) {
		for n := i; n < j; n++ {
			if l := L.at(n); l == "" {
				add(' ', n+1, "")
			} else {
				add(l[0], n+1, l[1:])
			}
		}
	})
	if j < end && isEndOfFile(L.at(j)) {
		c.EndOfFile = true
		j++
	}
	return c, j, nil
}

func isEndOfFile(l string) bool {
	return strings.TrimRight(l, " \t") == endOfFile
}

// parseRange reads the "-a,b +c,d @@ rest" of a unified hunk header (after
// "@@ "); a missing count is 1. rest is what follows the closing "@@" and one
// space.
func parseRange(s string) (oldStart, oldLines, newStart, newLines int, rest string, ok bool) {
	s = strings.TrimLeft(s, " ")
	if len(s) == 0 || s[0] != '-' {
		return
	}
	var ok1, ok2 bool
	oldStart, oldLines, s, ok1 = parseSpan(s[1:])
	s = strings.TrimLeft(s, " ")
	if !ok1 || len(s) == 0 || s[0] != '+' {
		return 0, 0, 0, 0, "", false
	}
	newStart, newLines, s, ok2 = parseSpan(s[1:])
	s = strings.TrimLeft(s, " ")
	if !ok2 || !strings.HasPrefix(s, "@@") {
		return 0, 0, 0, 0, "", false
	}
	s = s[2:]
	if len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return oldStart, oldLines, newStart, newLines, s, true
}

// parseSpan reads "a" or "a,b" and returns the rest of s.
func parseSpan(s string) (start, n int, rest string, ok bool) {
	k := 0
	for k < len(s) && '0' <= s[k] && s[k] <= '9' {
		k++
	}
	if k == 0 {
		return 0, 0, s, false
	}
	start, err := strconv.Atoi(s[:k])
	if err != nil {
		return 0, 0, s, false
	}
	s = s[k:]
	n = 1
	if len(s) > 0 && s[0] == ',' {
		k = 1
		for k < len(s) && '0' <= s[k] && s[k] <= '9' {
			k++
		}
		if k == 1 {
			return 0, 0, s, false
		}
		if n, err = strconv.Atoi(s[1:k]); err != nil {
			return 0, 0, s, false
		}
		s = s[k:]
	}
	return start, n, s, true
}
