// Package edit owns exact text replacement in one file: matching each old
// text against the file (exactly, then by a few careful fuzzy rules when, and
// only when, the place is still unique), applying every edit of a call
// together or none, keeping the file's line endings, BOM and final newline,
// and explaining failures with the closest candidate regions.
//
// The engine works on bytes: Apply is pure (content in, content out); Run
// adds the file around it (size limit, lock, stale check, atomic write).
package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Edit is one replacement: OldText must occur exactly once in the file
// (every occurrence is replaced when ReplaceAll is set).
type Edit struct {
	OldText    string
	NewText    string
	ReplaceAll bool
	// Expect, when set, is how many places the old text must be found in
	// (Gemini's expected_replacements): each is replaced, and any other
	// count is refused, naming the count found.
	Expect int
}

// Rule names how an edit's old text was found, or why it needed no change.
type Rule string

// The match rules, in the order they are tried, and the two no-op outcomes.
const (
	Exact              Rule = "exact"
	LineEndings        Rule = "line-endings"
	TrailingWhitespace Rule = "trailing-whitespace"
	UnicodePunctuation Rule = "unicode-punctuation"
	Indentation        Rule = "indentation"
	InnerWhitespace    Rule = "inner-whitespace"
	// Identical: old and new text are the same; nothing to do.
	Identical Rule = "identical"
	// AlreadyApplied: the old text is absent and the new text present.
	AlreadyApplied Rule = "already-applied"
	// Inserted: the text was inserted after a line (Insert).
	Inserted Rule = "inserted"
)

// describe is how a note names a fuzzy rule.
func (r Rule) describe() string {
	switch r {
	case LineEndings:
		return "after normalizing line endings"
	case TrailingWhitespace:
		return "after ignoring trailing whitespace"
	case UnicodePunctuation:
		return "after folding Unicode punctuation (quotes, dashes, spaces) and normalization (NFC)"
	case Indentation:
		return "after a uniform indentation shift"
	case InnerWhitespace:
		return "after collapsing runs of spaces and tabs inside lines"
	}
	return string(r)
}

// Fuzzy reports whether r is one of the fuzzy rules.
func (r Rule) Fuzzy() bool {
	switch r {
	case LineEndings, TrailingWhitespace, UnicodePunctuation, Indentation, InnerWhitespace:
		return true
	}
	return false
}

// Options tune Apply and Run.
type Options struct {
	// Exact turns fuzzy matching off.
	Exact bool
	// IfMatch, when set, is the SHA-256 (hex) the file must have (STALE otherwise).
	IfMatch string
	// MaxBytes refuses larger files (TOO_LARGE); 0 means no limit.
	MaxBytes int64
	// Hash computes Result.SHA256 of the file as written.
	Hash bool
	// Brief leaves out what only a report needs: the line numbers of the
	// replacements, the first changed line and the diff. Counting lines is
	// a pass over the file up to the last edit, which a big file feels.
	Brief bool
	// Sequential applies each edit to the content the previous ones left
	// (the reference MCP filesystem server's edit_file), where by default
	// every edit is matched against the original; still all or nothing, and
	// each old text must still match once. An edit's Lines are then lines of
	// the content it was applied to.
	Sequential bool
	// Keep keeps the content before and after in Result.Old and New.
	Keep bool
}

// EditResult is what happened to one edit.
type EditResult struct {
	// Match is the rule that found the old text, or Identical / AlreadyApplied.
	Match Rule `json:"match"`
	// Replacements is how many places were replaced (0 for the no-ops).
	Replacements int `json:"replacements"`
	// Lines are the (1-based) lines of the original file where the
	// replaced places start (at most maxListed of them).
	Lines []int `json:"lines,omitempty"`
}

// Result is the outcome of a successful call.
type Result struct {
	Path string `json:"path"`
	// Replacements counts the replaced places over all edits.
	Replacements int          `json:"replacements" jsonschema:"places replaced"`
	Edits        []EditResult `json:"edits" jsonschema:"each edit: how its old text was found and where"`
	// Match lists Edits[i].Match, for programs that want only that.
	Match []Rule `json:"match" jsonschema:"how each edit's old text was found (exact or the near-match rule)"`
	// Changed reports whether the content differs from the original.
	Changed bool `json:"changed" jsonschema:"the file changed"`
	// FirstChangedLine is the first line (1-based, in the new file) whose
	// text differs; 0 when nothing changed.
	FirstChangedLine int `json:"firstChangedLine,omitempty" jsonschema:"the first changed line of the new file"`
	// Diff is a unified diff of the change ("" when nothing changed).
	Diff string `json:"diff,omitempty" jsonschema:"the change as a unified diff"`
	// SHA256 is the hash of the file as written (Options.Hash).
	SHA256 string `json:"sha256,omitempty" jsonschema:"the new content's SHA-256"`
	// Notes are sentences for the reader: fuzzy rules used, no-ops.
	Notes []string `json:"notes,omitempty" jsonschema:"remarks: near-match rules used, no-ops"`
	// Old and New are the content before and after (Options.Keep).
	Old, New []byte `json:"-"`
}

// maxListed bounds the line numbers listed in results and messages.
const maxListed = 1000

// Run applies edits to the file name (a resolved workspace name) of files:
// under the workspace lock for name it reads the file, checks it against
// opt.IfMatch, applies every edit (Apply) and writes the result atomically
// when it changed. Many processes may run it on one file at once: the lock
// serializes their read-modify-write cycles, so no edit is lost.
func Run(files workspace.FS, name string, edits []Edit, opt Options) (res *Result, err error) {
	if err := Validate(edits); err != nil {
		return nil, err
	}
	return change(files, name, opt, func(content []byte) ([][]byte, *Result, error) {
		var parts [][]byte
		var res *Result
		var err error
		if opt.Sequential {
			parts, res, err = applySequential(name, content, edits, opt)
		} else {
			parts, res, err = apply(name, content, edits, opt)
		}
		if err == nil && opt.Keep {
			res.Old, res.New = content, join(parts)
		}
		return parts, res, err
	})
}

// applySequential applies each edit to what the previous ones left, each
// under its own number ("edit 2 of 3"), and sums up their results; the diff
// and the first changed line compare the original with the last content.
func applySequential(name string, content []byte, edits []Edit, opt Options) ([][]byte, *Result, error) {
	cur := content
	res := &Result{Path: name}
	for i, e := range edits {
		parts, r, err := applyAt(name, cur, []Edit{e}, i, len(edits), opt)
		if err != nil {
			return nil, nil, err
		}
		res.Edits = append(res.Edits, r.Edits...)
		res.Match = append(res.Match, r.Match...)
		res.Replacements += r.Replacements
		for _, n := range r.Notes {
			if len(edits) > 1 && !strings.HasPrefix(n, "The replacement leaves") {
				n = fmt.Sprintf("Edit %d: %s", i+1, uncapital(n))
			}
			res.Notes = append(res.Notes, n)
		}
		cur = join(parts)
	}
	res.Changed = !bytes.Equal(cur, content)
	if res.Changed && !opt.Brief {
		res.Diff = diff.Unified("a/"+name, "b/"+name, content, cur)
		res.FirstChangedLine = firstDifferentLine(content, cur)
	}
	return [][]byte{cur}, res, nil
}

// firstDifferentLine is the first line (1-based) of b that differs from a's.
func firstDifferentLine(a, b []byte) int {
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return line
		}
		if a[i] == '\n' {
			line++
		}
	}
	return line
}

// change is the read-modify-write cycle of Run and Insert: under the
// workspace lock for name it reads the file, checks it against opt.IfMatch,
// computes the new content with edit and writes it atomically when it
// changed.
func change(files workspace.FS, name string, opt Options, edit func(content []byte) ([][]byte, *Result, error)) (res *Result, err error) {
	// A big file is mapped (readContent): if it is truncated under us, the
	// fault becomes a panic here instead of killing the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(name, &res, &err)
	unlock, err := files.Lock(name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	fi, err := files.Stat(name)
	if err != nil {
		return nil, files.DidYouMean(name, notFoundHint(err))
	}
	if fi.IsDir() {
		return nil, result.Errorf(result.IsDirectory, "%s: is a directory; edit changes text in a file", name)
	}
	if opt.MaxBytes > 0 && fi.Size() > opt.MaxBytes {
		return nil, result.Errorf(result.TooLarge, "%s: file is too large to edit (%d bytes, at most %d)", name, fi.Size(), opt.MaxBytes).
			WithHint("raise the limit with --max-bytes (config edit.max-bytes)")
	}
	content, release, err := readContent(files, name, fi.Size())
	if err != nil {
		return nil, notFoundHint(err)
	}
	defer release()
	ifMatch, err := textfile.ParseIfMatch(opt.IfMatch)
	if err != nil {
		return nil, err
	}
	if err := textfile.CheckHash(name, content, true, ifMatch); err != nil {
		return nil, err
	}
	parts, res, err := edit(content)
	if err != nil {
		return nil, err
	}
	if res.Changed {
		if err := files.WriteFile(name, parts, workspace.WriteOptions{NoParents: true}); err != nil {
			return nil, err
		}
	}
	if opt.Hash {
		h := sha256.New()
		for _, p := range parts {
			h.Write(p)
		}
		res.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return res, nil
}

// recoverFault, deferred with debug.SetPanicOnFault(true), turns a fault on
// a mapped file into an error.
func recoverFault(name string, res **Result, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); !ok { // only faults carry an address
		panic(r)
	}
	*res = nil
	*err = result.Errorf(result.IOError, "%s: the file changed while it was being edited (it was truncated); nothing was written", name).
		WithHint("retry the edit")
}

func notFoundHint(err error) error {
	if re := result.As(err); re.Code == result.NotFound && len(re.Hints) == 0 {
		return re.WithHint("edit changes an existing file; create one with 'hunk write'")
	}
	return err
}

// Validate checks edits without a file: at least one, and no empty old text.
func Validate(edits []Edit) error {
	if len(edits) == 0 {
		return result.Errorf(result.InvalidArgument, "no edits given").
			WithHint("pass --old and --new, or --edits FILE with a JSON list of {\"oldText\",\"newText\"}")
	}
	for i, e := range edits {
		if strings.TrimPrefix(e.OldText, textfile.BOM) == "" {
			return result.Errorf(result.InvalidArgument, "%sold text is empty; it must name the text to replace", editLabel(i, len(edits))).
				WithHint("to create or overwrite a whole file use 'hunk write'").
				WithDetail("edit", i+1)
		}
	}
	return nil
}

// editLabel prefixes messages about edit i of n ("" when there is only one).
func editLabel(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("edit %d of %d: ", i+1, n)
}

// replacement is one place to change: body[start:end] becomes repl.
type replacement struct {
	start, end int
	repl       []byte
	edit       int
	line       int // 1-based line of start in the original
}

// Apply applies edits to content (a file named name, for messages) and
// returns the new content. Every old text is matched against the original
// content; the places must not overlap; all are applied or none.
func Apply(name string, content []byte, edits []Edit, opt Options) ([]byte, *Result, error) {
	parts, res, err := apply(name, content, edits, opt)
	if err != nil {
		return nil, nil, err
	}
	return join(parts), res, nil
}

// apply is Apply returning the new content as pieces (see file.assemble).
func apply(name string, content []byte, edits []Edit, opt Options) ([][]byte, *Result, error) {
	return applyAt(name, content, edits, 0, len(edits), opt)
}

// applyAt is apply for edits that are the edits first.. of a list of total.
func applyAt(name string, content []byte, edits []Edit, first, total int, opt Options) ([][]byte, *Result, error) {
	if err := Validate(edits); err != nil {
		return nil, nil, err
	}
	bom, body := splitBOM(content)
	f := newFile(body)
	f.brief = opt.Brief
	if len(content) < concurrentCheck {
		if err := textfile.CheckText(name, content); err != nil {
			return nil, nil, err
		}
	} else {
		f.startCheck(name, content)
		defer f.checked()
	}
	res := &Result{Path: name}
	var reps []replacement
	for i, e := range edits {
		er, rs, err := f.plan(name, first+i, total, e, opt)
		if cerr := f.checked(); cerr != nil { // not text: that is the error
			return nil, nil, cerr
		}
		if err != nil {
			return nil, nil, err
		}
		res.Edits = append(res.Edits, er)
		res.Match = append(res.Match, er.Match)
		res.Replacements += er.Replacements
		reps = append(reps, rs...)
		label := ""
		if len(edits) > 1 {
			label = fmt.Sprintf("Edit %d: ", i+1)
		}
		var note string
		switch {
		case er.Match == Identical:
			note = "the old and new text are identical; nothing to replace."
		case er.Match == AlreadyApplied:
			note = "already applied: the old text is absent and the new text is present."
		case er.Match == Indentation:
			note = "the old text matched " + er.Match.describe() + "; the new text was re-indented the same way."
		case er.Match.Fuzzy():
			note = "the old text matched " + er.Match.describe() + "."
		}
		if note != "" && label == "" {
			res.Notes = append(res.Notes, capital(note))
		} else if note != "" {
			res.Notes = append(res.Notes, label+note)
		}
	}
	sort.SliceStable(reps, func(a, b int) bool { return reps[a].start < reps[b].start })
	for k := 1; k < len(reps); k++ {
		p, q := reps[k-1], reps[k]
		if q.start < p.end {
			a, b := p.edit, q.edit
			if a > b {
				a, b = b, a
			}
			what := fmt.Sprintf("edits %d and %d overlap", a+1, b+1)
			if a == b {
				what = fmt.Sprintf("two places matched by edit %d overlap", a+1)
			}
			line := q.line
			if line == 0 {
				line = f.lineOf(q.start)
			}
			return nil, nil, result.Errorf(result.InvalidArgument, "%s: %s (at line %d); every edit must change a separate part of the file", name, what, line).
				WithHint("merge the overlapping edits into one, or make their old texts disjoint").
				WithDetail("edits", []int{a + 1, b + 1}).WithDetail("line", line)
		}
	}
	parts, changed := f.assemble(0, len(body), reps)
	if bom {
		parts = append([][]byte{content[:len(textfile.BOM)]}, parts...)
	}
	res.Changed = changed
	if changed && !opt.Brief {
		res.FirstChangedLine = f.firstChangedLine(reps)
		res.Diff = f.diff(name, reps)
	} else if !changed && res.Replacements > 0 {
		res.Notes = append(res.Notes, "The replacement leaves the file as it was.")
	}
	return parts, res, nil
}

// splitBOM reports whether content starts with a UTF-8 BOM and returns the
// body after it.
func splitBOM(content []byte) (bool, []byte) {
	if textfile.HasBOM(content) {
		return true, content[len(textfile.BOM):]
	}
	return false, content
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func uncapital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
