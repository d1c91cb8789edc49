package patchparse

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// DefaultStrip asks Parse for git's default path stripping: the a/ and b/
// prefixes of a git diff are removed, other paths are kept as written.
const DefaultStrip = -1

// Options controls Parse.
type Options struct {
	// Strip is the number of leading path components removed from the paths
	// of a unified diff, like `patch -p N` / `git apply -p N`. DefaultStrip
	// (-1) removes git's a/ b/ prefixes when they are there. Codex patches
	// are never stripped.
	Strip int
	// Codex parses a Codex patch exactly as Codex's own parser does
	// (--compat codex, the apply_patch link): a blank line between file
	// sections or after an Add File's lines is an invalid hunk header, and so
	// is an "*** Environment ID:" line without an id. Otherwise those are
	// read leniently.
	Codex bool
	// Strict reads no loose envelope (text around a Codex patch's markers,
	// a missing '*** End Patch'); the rest is hunk's own reading.
	Strict bool
	// Format, when set, is the patch's format; "" detects it.
	Format Format
	// MaxBinary bounds the content a binary patch's hunk may make, as its
	// header states it and as its data proves it (0: DefaultMaxBinary): a
	// few bytes of deflated data or of delta instructions can stand for
	// gigabytes, and a patch is untrusted input.
	MaxBinary int64
	// eagerHunks reads a unified diff's hunk lines as it reads the diff,
	// as a patch too long to cut is read (tests compare the two).
	eagerHunks bool
}

// DefaultMaxBinary is MaxBinary's default: apply-patch.max-bytes's.
const DefaultMaxBinary = 256 << 20

func (o Options) maxBinary() int64 {
	if o.MaxBinary > 0 {
		return o.MaxBinary
	}
	return DefaultMaxBinary
}

// Parse reads a patch — a Codex "*** Begin Patch" patch (also wrapped in a
// shell heredoc), a unified diff, or SEARCH/REPLACE blocks — and returns its
// file operations. The format is detected from the text (formats), or is
// opt.Format. Every error is a *result.Error with code INVALID_PATCH whose
// message keeps Codex's wording and names the patch line (also in
// Details["line"]).
//
// Line numbers count every line of text as given, heredoc and leading blank
// lines included; Codex counts from its trimmed text instead, which gives the
// same numbers for every patch that starts with "*** Begin Patch".
//
// The AST's strings are substrings of text: Parse copies no line.
// notPlain names why a patch that did not parse is not a plain diff, when
// it is one of the diffs a terminal shows — git's colours (ANSI escapes) or
// a word diff — instead of the first grammar error it met; else err.
func notPlain(text string, err error) error {
	switch {
	case strings.Contains(text, "\x1b["):
		return result.Errorf(result.InvalidPatch, "the patch holds terminal colour codes (ANSI escape sequences): it is a diff as a terminal shows it, not one to apply").
			WithHint("make it with git diff --no-color (or git -c color.ui=never …), or strip the codes")
	case wordDiff(text):
		return result.Errorf(result.InvalidPatch, "the patch is a word diff ([-removed-]{+added+} inside lines, git diff --word-diff): it says which words changed, not which lines").
			WithHint("make it without --word-diff (and without --color-words): git diff writes lines that can be applied")
	}
	return err
}

// wordDiff reports whether text reads as git diff --word-diff: hunks, words
// marked [-removed-] or {+added+}, and no line added or removed as a diff
// writes one (the ---/+++ headers aside).
func wordDiff(text string) bool {
	if !strings.Contains(text, "\n@@ ") || !(strings.Contains(text, "{+") && strings.Contains(text, "+}") || strings.Contains(text, "[-") && strings.Contains(text, "-]")) {
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ") {
			return false
		}
	}
	return true
}

func Parse(text string, opt Options) (*Patch, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	text, unwrapped := unwrapJSON(text)
	if len(text) > maxText {
		return nil, &result.Error{Code: result.TooLarge, Msg: fmt.Sprintf("the patch is %d bytes; hunk reads patches of up to %d", len(text), maxText),
			Hints: []string{"split the patch into smaller ones"}}
	}
	if !opt.Codex && !opt.Strict {
		var peeled bool
		if text, peeled = peelStars(text); peeled {
			unwrapped = append(unwrapped, "markers closed with stars (*** Begin Patch ***)")
		}
	}
	L := splitLines(text)
	// [lo,hi) is the patch; [tlo,thi) the same without blank lines around it.
	// A unified diff keeps its trailing blank lines: they may be context.
	in := &input{L: L, lo: 0, hi: L.len(), opt: opt, cut: newCutter(text)}
	in.tlo, in.thi = trimBlank(L, in.lo, in.hi)
	if ilo, ihi, ok := unwrapHeredoc(L, in.tlo, in.thi); ok {
		unwrapped = append(unwrapped, "a shell heredoc ("+strings.TrimSpace(L.at(in.tlo))+")")
		in.lo, in.hi = ilo, ihi
		in.tlo, in.thi = trimBlank(L, in.lo, in.hi)
	}
	f, err := pick(in)
	if err != nil {
		return nil, notPlain(text, err)
	}
	p, err := f.parse(in)
	if err != nil {
		return nil, notPlain(text, err)
	}
	p.Unwrapped = unwrapped
	return p, nil
}

// unwrapJSON reads a patch that came inside JSON — a tool call's arguments
// as a model wrote them: {"patch": P}, {"input": P}, {"diff": P},
// {"command": ["apply_patch", P]} (Codex's shell form, where P may be a
// heredoc), {"arguments": "<more JSON>"}, or a JSON string — and returns
// the patch and what it was found in. Text that is not such JSON is
// returned as it is.
func unwrapJSON(text string) (string, []string) {
	var said []string
	for depth := 0; depth < 4; depth++ {
		t := strings.TrimSpace(text)
		if t == "" || (t[0] != '{' && t[0] != '"') {
			break
		}
		var v any
		if json.Unmarshal([]byte(t), &v) != nil {
			break
		}
		inner, where := jsonPatch(v)
		if where == "" {
			break
		}
		text = inner
		said = append(said, "JSON "+where)
	}
	return text, said
}

// jsonPatch finds the patch text in a decoded JSON value, and names where.
func jsonPatch(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, "string"
	case map[string]any:
		for _, k := range []string{"patch", "input", "diff", "arguments"} {
			if s, ok := v[k].(string); ok {
				return s, strconv.Quote(k)
			}
		}
		for _, k := range []string{"command", "cmd"} {
			list, ok := v[k].([]any)
			if !ok {
				continue
			}
			for i := len(list) - 1; i >= 0; i-- {
				if s, ok := list[i].(string); ok && strings.Contains(s, "\n") {
					return s, fmt.Sprintf("%q[%d]", k, i)
				}
			}
		}
	}
	return "", ""
}

// input is the patch text Parse hands a format's parser: its lines, the window [lo,hi) the patch
// lies in and the same without blank lines around it [tlo,thi).
type input struct {
	L        lines
	cut      cutter // the chunks' lines, where they lie in the text L was cut from
	lo, hi   int
	tlo, thi int
	opt      Options
}

// format is one patch syntax hunk reads: a parser file of this package
// (codex.go, unified.go, …) gives its name, how to recognise it and how to
// parse it. A new format is one file and one entry of formats.
type format struct {
	name  Format
	is    func(in *input) bool
	parse func(in *input) (*Patch, error)
}

// formats are tried in order; the first whose is says yes parses the text,
// and Codex's parser, whose errors models are trained on, takes the rest.
var formats = []format{
	{Unified, isUnified, parseUnifiedInput},
	{SearchReplace, isSearchReplace, parseSearchReplaceInput},
	{Codex, func(*input) bool { return true }, parseCodexInput},
}

// pick is the format that parses in: opt.Format when set, else the first
// of formats that recognises the text.
func pick(in *input) (format, error) {
	if in.opt.Format != "" {
		for _, f := range formats {
			if f.name != in.opt.Format {
				continue
			}
			if f.name != Codex && !f.is(in) {
				detected := in.opt
				detected.Format = ""
				g, _ := pick(&input{L: in.L, lo: in.lo, hi: in.hi, tlo: in.tlo, thi: in.thi, opt: detected, cut: in.cut})
				return format{}, patchError(0, fmt.Sprintf("the patch is not in the %s format (--format %s): it reads as %s", f.name, f.name, g.name),
					"drop --format (or give --format auto) to detect the format")
			}
			return f, nil
		}
	}
	for _, f := range formats {
		if in.opt.Format == "" && f.is(in) {
			return f, nil
		}
	}
	var names []string
	for _, f := range formats {
		names = append(names, string(f.name))
	}
	return format{}, &result.Error{Code: result.InvalidArgument, Msg: fmt.Sprintf("unknown patch format %q (known: %s)", in.opt.Format, strings.Join(names, ", "))}
}

// lines are a text's lines, split at "\n" with one "\r" before each
// dropped: CRLF patch text reads like LF text. A final newline does not
// start another line. Each line is kept as where it starts in the text, 4
// bytes, not as a 16-byte string: a big diff's million lines are held
// while its chunks are built from them.
type lines struct {
	text  string
	start []uint32 // line i is text[start[i]:start[i+1]], less its ending
	crs   int      // how many lines ended in "\r"
}

// maxText is the longest text lines splits (its offsets are 32-bit).
const maxText = 1<<32 - 2

// splitLines splits text, at most maxText bytes, into its lines.
func splitLines(text string) lines {
	n := strings.Count(text, "\n")
	if len(text) > 0 && text[len(text)-1] != '\n' {
		n++
	}
	L := lines{text: text, start: make([]uint32, 0, n+1)}
	for p := 0; p < len(text); {
		L.start = append(L.start, uint32(p))
		_, cr, next := cutLine(text, p)
		if cr {
			L.crs++
		}
		p = next
	}
	L.start = append(L.start, uint32(len(text)))
	return L
}

// cutLine is the line of text that starts at p: its text, less its ending
// ("\n", and one "\r" before it or at the text's end), whether it had
// that "\r", and where the next line starts.
func cutLine(text string, p int) (l string, cr bool, next int) {
	e := strings.IndexByte(text[p:], '\n')
	if e < 0 {
		e = len(text) - p
	}
	l, next = text[p:p+e], p+e+1
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l, cr = l[:n-1], true
	}
	return l, cr, next
}

// len is the number of lines.
func (L lines) len() int { return len(L.start) - 1 }

// at is line i's text, without its ending.
func (L lines) at(i int) string {
	l, _ := L.line(i)
	return l
}

// line is line i's text, without its ending, and whether it ended in "\r"
// (before its "\n", if any): cutLine's reading, from where lines start.
func (L lines) line(i int) (string, bool) {
	s, e := L.start[i], L.start[i+1]
	if e > s && L.text[e-1] == '\n' {
		e--
	}
	cr := e > s && L.text[e-1] == '\r'
	if cr {
		e--
	}
	return L.text[s:e], cr
}

// ownEndings reports whether a unified diff's lines give their texts
// their own endings: "\r\n" for a line that had a "\r", "\n" for one
// that did not — unless every line had one, which is a CRLF patch (text
// converted on its way), whose endings say nothing of the files'.
func (L lines) ownEndings() bool { return L.crs == 0 || L.crs < L.len() }

// ending is the ending a unified diff's line gives its text: Unknown when
// the diff's lines have none of their own (ownEndings), else CRLF or LF as
// the line had a "\r".
func ending(own, cr bool) Ending {
	switch {
	case !own:
		return Unknown
	case cr:
		return CRLF
	}
	return LF
}

// trimBlank narrows [lo,hi) to exclude blank lines at both ends.
func trimBlank(L lines, lo, hi int) (int, int) {
	for lo < hi && isBlank(L.at(lo)) {
		lo++
	}
	for hi > lo && isBlank(L.at(hi-1)) {
		hi--
	}
	return lo, hi
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// unwrapHeredoc recognises the shell heredoc models wrap patches in —
// `<<'EOF'`, `<<EOF`, `<<"EOF"`, optionally after the word apply_patch — whose
// last line is the delimiter, and returns the lines inside it. Codex accepts
// the delimiter EOF only; any shell word is accepted here.
func unwrapHeredoc(L lines, lo, hi int) (int, int, bool) {
	if hi-lo < 3 {
		return lo, hi, false
	}
	first := strings.TrimSpace(L.at(lo))
	for _, w := range []string{"apply_patch", "applypatch"} {
		if rest, ok := strings.CutPrefix(first, w); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			first = strings.TrimSpace(rest)
			break
		}
	}
	rest, ok := strings.CutPrefix(first, "<<")
	if !ok {
		return lo, hi, false
	}
	rest = strings.TrimPrefix(rest, "-")
	rest = strings.TrimSpace(rest)
	delim := rest
	if len(rest) >= 2 && (rest[0] == '\'' || rest[0] == '"') {
		if rest[len(rest)-1] != rest[0] {
			return lo, hi, false
		}
		delim = rest[1 : len(rest)-1]
	}
	if delim == "" || !isWord(delim) {
		return lo, hi, false
	}
	last := strings.TrimSpace(L.at(hi - 1))
	if !strings.HasSuffix(last, delim) {
		return lo, hi, false
	}
	return lo + 1, hi - 1, true
}

func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// patchError is Codex's InvalidPatchError: "Invalid patch: MSG".
func patchError(line int, msg string, hints ...string) *result.Error {
	e := &result.Error{Code: result.InvalidPatch, Msg: "Invalid patch: " + msg, Hints: hints}
	if line > 0 {
		e.WithDetail("line", line)
	}
	return e
}

// hunkError is Codex's InvalidHunkError: "Invalid patch hunk on line N: MSG".
// idx is the 0-based index of the line in the text.
func hunkError(idx int, hint string, format string, args ...any) *result.Error {
	line := idx + 1
	e := &result.Error{
		Code: result.InvalidPatch,
		Msg:  fmt.Sprintf("Invalid patch hunk on line %d: %s", line, fmt.Sprintf(format, args...)),
	}
	if hint != "" {
		e.Hints = []string{hint}
	}
	return e.WithDetail("line", line)
}

// noFiles is Codex's error for a patch without file operations.
func noFiles(hint string) *result.Error {
	return &result.Error{Code: result.InvalidPatch, Msg: "No files were modified.", Hints: []string{hint}}
}
