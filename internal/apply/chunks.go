package apply

import (
	"slices"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// ApplyChunks applies an Update's chunks to a file's content and returns the
// new content; name is used in messages only. It is pure (no filesystem) and
// is what Apply runs for every updated file, so generators and fuzzers can
// call it directly. The content must be text (BINARY_FILE / NOT_UTF8
// otherwise); its BOM, line endings and final newline are kept. content is
// read in place, never retained: it must not change during the call.
func ApplyChunks(name string, content []byte, chunks []*patchparse.Chunk, opt Options) ([]byte, error) {
	out, _, err := applyChunks(name, content, chunks, opt)
	return out, err
}

// outLine is one line of the result: its text and its ending ("" = to be
// decided: the file's dominant ending, or none for a last line).
type outLine struct {
	text string
	eol  string
	// patchEOL: eol is the patch's own (the exact pass): a "\r" in it is
	// text when "\ No newline at end of file" drops the newline, as in git.
	patchEOL bool
}

// replacement replaces file lines [start, end) with lines.
type replacement struct {
	start, end int
	lines      []outLine
	order      int // chunk index, to keep pure additions at one place in patch order
}

// cline is a chunk line with its marker.
type cline struct {
	op     byte
	eol    patchparse.Ending // the ending the patch gives the line (beside op: 24 bytes a line)
	filled bool              // a context line a recovery took from the file, not the model's
	text   string
}

// prepared is a chunk ready for matching.
type prepared struct {
	src   *patchparse.Chunk
	n     int // 1-based chunk number
	lines []cline
	old   []string
	hint  int // 0-based line the old lines start at per the header; -1 for none
	// guessed: a block whose removed lines were told from its context by
	// a guess (patchparse.Chunk.Guessed): no recovery keeps file lines.
	guessed bool
	// gapped: read-tool numbers that skip (numbered): elisions inserted.
	gapped bool
	// before: the blocks placed before this one, which moved the lines
	// of the file as the model read it (none for a chunk of a diff).
	before lineEdits
}

func prepare(c *patchparse.Chunk, n int) *prepared {
	p := &prepared{src: c, n: n, hint: -1, guessed: c.Guessed}
	p.lines = make([]cline, 0, c.Len())
	p.old = make([]string, 0, c.Len()) // (sized once: a big diff has a million lines)
	for l := range c.All() {
		// A file line never holds a CR (textfile.Text ends lines at
		// one), so a CR at the end of a patch line is the patch's own line
		// ending (a CRLF patch) and never meant as content.
		t := strings.TrimSuffix(c.Text(l), "\r")
		p.lines = append(p.lines, cline{op: l.Op, eol: l.EOL, text: t})
		if l.Op != '+' {
			p.old = append(p.old, t)
		}
	}
	if c.OldStart > 0 {
		p.hint = c.OldStart - 1
	}
	return p
}

// dropTrailingEmpty is Codex's retry without a trailing empty line (the
// file's final newline written as an empty context line): the last old line,
// when empty, is dropped, and with it a last new line that is empty.
func (p *prepared) dropTrailingEmpty() *prepared {
	if len(p.old) == 0 || p.old[len(p.old)-1] != "" {
		return nil
	}
	q := *p
	q.lines = append([]cline(nil), p.lines...)
	lastOld, lastNew := -1, -1
	for i, l := range q.lines {
		if l.op != '+' {
			lastOld = i
		}
		if l.op != '-' {
			lastNew = i
		}
	}
	dropNew := lastNew >= 0 && q.lines[lastNew].text == ""
	var keep []cline
	for i, l := range q.lines {
		if i == lastOld || (dropNew && i == lastNew) {
			continue
		}
		keep = append(keep, l)
	}
	q.lines = keep
	q.old = q.old[:len(q.old)-1]
	return &q
}

// dropTrailingContext is dropTrailingEmpty where it leaves the change as it
// was: the empty line dropped is context (the final newline written as a
// line), or a removed one replaced by an added empty line. A diff that
// removes a last empty line means it: that retry would remove nothing.
func (p *prepared) dropTrailingContext() *prepared {
	q := p.dropTrailingEmpty()
	if q == nil || len(q.lines) < len(p.lines)-2 || !slices.EqualFunc(q.lines, p.lines[:len(q.lines)], func(a, b cline) bool { return a == b }) {
		return nil // (lines added after the empty line: it is not the final newline, and they would move above it)
	}
	// The change stays the change: a context line dropped, or a removed
	// empty line with the added one that replaces it; a removal alone
	// dropped, the retry would remove nothing.
	switch d := p.lines[len(q.lines):]; {
	case len(d) == 1 && d[0].op == ' ', len(d) == 2 && d[0].op != d[1].op && d[0].op != ' ' && d[1].op != ' ':
		return q
	}
	return nil
}

// dropLeadingEmpty is the chunk without its first old line, when that
// line is blank: a block whose SEARCH begins with a blank line the file
// does not have there (aider's own test of it). nil when it has none.
func (p *prepared) dropLeadingEmpty() *prepared {
	if len(p.old) < 2 || strings.TrimSpace(p.old[0]) != "" {
		return nil
	}
	q := *p
	q.lines = make([]cline, 0, len(p.lines)-1)
	dropped := false
	for _, l := range p.lines {
		if !dropped && l.op != '+' {
			dropped = true
			continue
		}
		q.lines = append(q.lines, l)
	}
	q.old = p.old[1:]
	if q.hint >= 0 {
		q.hint++
	}
	return &q
}

// patchEndings reports whether the chunk's lines carry the patch's own
// endings (a unified diff that is not CRLF throughout).
func patchEndings(p *prepared) bool {
	for _, l := range p.lines {
		if l.eol == patchparse.Unknown {
			return false
		}
	}
	return len(p.lines) > 0
}

// endingsMatch reports whether the placed chunk's old lines match the file's
// with their endings too: the chunk carries the patch's endings, it matched
// exactly, with no line skipped, and each file line it covers ends as the
// patch line does (a last line without an ending, which the patch says with
// "\ No newline at end of file", is not compared).
func (lc *locator) endingsMatch(m *placed) bool {
	p := m.chunk
	if m.pass != Exact || m.skipFile >= 0 || m.skipPat >= 0 || !patchEndings(p) {
		return false
	}
	lastOld := -1
	for j, l := range p.lines {
		if l.op != '+' {
			lastOld = j
		}
	}
	fi := m.pos
	for j, l := range p.lines {
		if l.op == '+' {
			continue
		}
		if fi >= len(lc.eols) {
			return false
		}
		want := l.eol.String()
		if j == lastOld && p.src.OldNoNewline {
			// "\ No newline at end of file": the line's "\r", if the patch
			// has one, is its last byte, which the text model reads as a
			// lone-CR ending.
			if fi != len(lc.eols)-1 {
				return false
			}
			want = strings.TrimSuffix(want, "\n")
		}
		if lc.eols[fi] != want {
			return false
		}
		fi++
	}
	return true
}

// placed is a located chunk.
type placed struct {
	pos  int  // first file line
	pass Pass // how the lines matched
	// skipFile >= 0: a file line inside the match that the patch dropped
	// (kept as context); skipPat >= 0: a duplicated context line of the
	// patch (index into lines) that is not in the file.
	skipFile, skipPat int
	rule              string // how it was found, for details
	chunk             *prepared
	blocked           bool // a recovery that fits but cannot be applied with certainty
}

// matchLen is how many file lines the placed chunk covers.
func (m *placed) matchLen() int {
	n := len(m.chunk.old)
	if m.skipFile >= 0 {
		n++
	}
	if m.skipPat >= 0 {
		n--
	}
	return n
}

// applyChunks is ApplyChunks, also returning how each chunk was located.
func applyChunks(name string, content []byte, chunks []*patchparse.Chunk, opt Options) ([]byte, []string, error) {
	// The content is not modified while the lines are in use (the result
	// is built in a new buffer), so it is viewed in place.
	if textfile.IsBinary(content) {
		// Bytes that are not UTF-8 are patched as they are (a Latin-1
		// source); a file with NUL bytes is not text at all.
		return nil, nil, result.Errorf(result.BinaryFile, "%s: binary file (it contains NUL bytes); a text hunk cannot change it", opt.display(name)).
			WithHint("make the diff with git diff --binary, which writes a binary patch for it")
	}
	if opt.blocks() {
		return applyInOrder(name, content, chunks, opt)
	}
	t := textfile.FileText(content)
	if opt.format == patchparse.Unified && textfile.LoneCR(content) {
		// A diff sees lines as git does: a lone "\r" is text.
		bom := t.BOM
		t = textfile.SplitLF(t.Body)
		t.BOM = bom
	}
	lc := &locator{name: name, opt: opt, file: t.Lines, eols: t.EOLs}
	finalNL := len(t.Lines) == 0 || t.EOLs[len(t.Lines)-1] != ""
	reps, rules, finalNL, fails := lc.locateAll(chunks, finalNL)
	if len(fails) > 0 && opt.codex() {
		return nil, nil, fails[0] // Codex stops at the first, in its own words
	}
	if len(fails) > 0 {
		return nil, nil, Combine(fails)
	}
	if opt.codex() {
		finalNL = true // Codex always ends an updated file with a newline
	}
	sort.SliceStable(reps, func(a, b int) bool {
		if reps[a].start != reps[b].start {
			return reps[a].start < reps[b].start
		}
		return reps[a].order < reps[b].order
	})
	return assemble(t, reps, finalNL), rules, nil
}

// locateAll locates every chunk, each from where the one before it ended
// (a chunk that fails is noted and the next ones are still located from
// the same place, so that one answer names every failing chunk): the
// replacements, how each was located, and whether the file ends in a
// newline (finalNL, as the markers of the chunks that reach its end say).
func (lc *locator) locateAll(chunks []*patchparse.Chunk, finalNL bool) ([]replacement, []string, bool, []error) {
	reps := make([]replacement, 0, len(chunks))
	rules := make([]string, 0, len(chunks))
	cursor := 0
	var taken []span // file ranges already replaced, for overlap checks
	var fails []error
	for i, c := range chunks {
		p := prepare(c, i+1)
		if len(p.old) == 0 {
			r, next, err := lc.addition(p, cursor)
			if err != nil {
				fails = append(fails, err)
				continue
			}
			cursor = next
			r.order = i
			reps = append(reps, r)
			rules = append(rules, "addition")
			finalNL = endMarks(c, r, len(lc.file), finalNL)
			continue
		}
		m, err := lc.locate(p, cursor, taken)
		if err == nil && m.inexact() && c.Any(func(l patchparse.ChunkLine) bool { return l.Op == '-' }) {
			// The chunk's change may stand in the file already: the
			// patch sent again (sent_again.go). Applied there, it is
			// no place to change (the patch's own "already applied"
			// test decides); elsewhere, refused.
			if done, e := lc.sentAgain(c, i+1, m, "chunk"); done {
				err = lc.noMatch(p)
			} else if e != nil {
				err = e
			}
		}
		if err == nil && lc.appliedNearer(c, i+1, m) {
			err = lc.noMatch(p) // (the patch's "already applied" test decides)
		}
		if err != nil {
			fails = append(fails, err)
			continue
		}
		r, err := lc.build(m)
		if err != nil {
			fails = append(fails, err)
			continue
		}
		r.order = i
		reps = append(reps, r)
		rules = append(rules, m.rule)
		taken = append(taken, span{r.start, r.end})
		cursor = max(cursor, r.end) // the cursor never goes back
		finalNL = endMarks(c, r, len(lc.file), finalNL)
	}
	return reps, rules, finalNL, fails
}

// endMarks is whether the file ends in a newline after chunk c's
// replacement r (finalNL before it): unified "\ No newline at end of
// file" markers decide it when the chunk reaches the end of the file
// (lines added at the end, too).
func endMarks(c *patchparse.Chunk, r replacement, fileLen int, finalNL bool) bool {
	if r.end != fileLen {
		return finalNL
	}
	if c.NewNoNewline {
		return false
	}
	if c.OldNoNewline {
		return true
	}
	return finalNL
}

// assemble writes the patched file: untouched runs of lines copied as they
// are, with their endings; replacement lines with their own ending or the
// file's dominant one; the final newline as the file had it, unless
// finalNL decides otherwise.
func assemble(t *textfile.Text, reps []replacement, finalNL bool) []byte {
	file := t.Lines
	dominant := t.Counts().Dominant()
	// Assemble: untouched runs of lines are copied as they are, with their
	// endings; replacement lines get their own ending or the dominant one.
	size := len(t.Body) + 8
	if t.BOM {
		size += len(textfile.BOM)
	}
	for _, r := range reps {
		for _, l := range r.lines {
			size += len(l.text) + 2
		}
	}
	b := make([]byte, 0, size)
	if t.BOM {
		b = append(b, textfile.BOM...)
	}
	open := false      // the output ends in a line without an ending
	lastEmpty := false // the output's last line has no text
	lastPatch := false // the output's last ending is the patch's own (outLine.patchEOL)
	copyLines := func(from, to int) {
		if from >= to {
			return
		}
		if open {
			b = append(b, dominant...)
		}
		b = append(b, t.Body[t.Start[from]:t.End(to-1)]...)
		open = t.EOLs[to-1] == ""
		lastEmpty = file[to-1] == ""
		lastPatch = false
	}
	at := 0
	for _, r := range reps {
		copyLines(at, r.start)
		for _, l := range r.lines {
			if open {
				b = append(b, dominant...)
			}
			b = append(b, l.text...)
			eol := l.eol
			if eol == "" {
				eol = dominant
			}
			b = append(b, eol...)
			open = false
			lastEmpty = l.text == ""
			lastPatch = l.patchEOL
		}
		if r.end > at {
			at = r.end
		}
		if r.start > at {
			at = r.start
		}
	}
	copyLines(at, len(file))
	// The final newline: kept as the file had it, unless decided above.
	body := b
	if t.BOM {
		body = b[len(textfile.BOM):]
	}
	if len(body) > 0 {
		switch {
		case finalNL && open:
			b = append(b, dominant...)
		case !finalNL && !open && !lastEmpty:
			// (An empty last line keeps its ending: without it, it would
			// not be a line at all.)
			switch {
			case lastPatch:
				b = b[:len(b)-1] // only the newline: a "\r" before it is the patch's text
			case len(b) >= 2 && b[len(b)-2] == '\r' && b[len(b)-1] == '\n':
				b = b[:len(b)-2]
			case b[len(b)-1] == '\r':
				// A lone "\r" ends the line for hunk's view, but the diff
				// ("\ No newline") is git's, to which it is text: kept.
			default:
				b = b[:len(b)-1]
			}
		}
	}
	return b
}

// build turns a placed chunk into its replacement: context lines keep the
// file's own text and ending, removed lines go, added lines are inserted
// (re-indented by the chunk's indentation shift outside --compat codex).
func (lc *locator) build(m *placed) (replacement, error) {
	p := m.chunk
	reindent := func(s string) (string, bool) { return s, true }
	if !lc.opt.codex() && m.pass >= Trim && hasAdded(p) {
		f, ok, identity := lc.indentShift(m, 0)
		why := "no single shift explains the lines it matched"
		if ok && !identity && !lc.opt.Strict && !lc.removedIndents(m) {
			// One shift explains the context, and no removed line says
			// whether the added lines drifted with it (all of the chunk
			// shifted, or only its context): shifted, they must take an
			// indentation the file has around the chunk, and as written
			// not.
			if !sameOnAdded(p, f) && (lc.fitsFile(m, asIs) || !lc.fitsFile(m, f)) {
				return replacement{}, result.Errorf(result.NoMatch,
					"%s: %s %d (patch line %d) matches line %d only if indentation is ignored, and no removed line tells whether its added lines drifted with its context (as written or shifted as the context is, they fit the file as well); refusing to guess how to indent them",
					lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, m.pos+1).
					WithHint("copy the context lines with the file's exact indentation").
					At(lc.name).InChunk(p.n, 0)
			}
		}
		if !ok && !lc.opt.Strict {
			// Only the context drifted: the added lines are indented
			// as the removed lines are (as given when those are in the
			// file as the patch writes them, as Codex writes them).
			var frame func(string) (string, bool)
			var given bool
			var more string
			if frame, given, more = lc.addedFrame(m); frame != nil {
				f, ok, identity = frame, true, given
				if given {
					m.rule += ",indent-as-given"
				} else {
					m.rule += ",indent-as-removed"
				}
			} else {
				why += "; " + more
			}
		}
		if !ok {
			return replacement{}, result.Errorf(result.NoMatch,
				"%s: %s %d (patch line %d) matches line %d only if indentation is ignored, and its indentation differs from the file's in no consistent way (%s); refusing to guess how to indent the added lines",
				lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, m.pos+1, why).
				WithHint("copy the context lines with the file's exact indentation").
				At(lc.name).InChunk(p.n, 0)
		}
		reindent = f
		if !identity && !strings.Contains(m.rule, "reindent") {
			m.rule += ",reindent"
		}
	}
	// Exact first: where the chunk's old lines match the file's byte for
	// byte, endings included, its added lines get the endings the patch
	// gives them (a new CRLF line, an LF<->CRLF conversion), as git apply
	// writes them. Where only the text matches, they get the file's own
	// dominant ending: the tolerance for model-written patches, reported.
	exact := lc.endingsMatch(m)
	if !exact && patchEndings(p) && !strings.Contains(m.rule, "line-endings") {
		m.rule += ",line-endings"
	}
	r := replacement{start: m.pos, lines: make([]outLine, 0, len(p.lines))}
	fi := m.pos
	for j, l := range p.lines {
		if j == m.skipPat {
			continue
		}
		if fi == m.skipFile && l.op != '+' {
			r.lines = append(r.lines, outLine{text: lc.file[fi], eol: lc.eols[fi]})
			fi++
		}
		switch l.op {
		case '+':
			t, ok := reindent(l.text)
			if !ok {
				return replacement{}, result.Errorf(result.NoMatch,
					"%s: %s %d (patch line %d): added line %q does not fit the indentation shift between the patch and the file; refusing to guess",
					lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, l.text).At(lc.name).InChunk(p.n, 0)
			}
			ol := outLine{text: t}
			if exact {
				ol.eol, ol.patchEOL = l.eol.String(), true
			}
			r.lines = append(r.lines, ol)
		case '-':
			fi++
		default:
			r.lines = append(r.lines, outLine{text: lc.file[fi], eol: lc.eols[fi]})
			fi++
		}
	}
	r.end = fi
	return r, nil
}

// asIs is the indentation shift that leaves a line as it is.
func asIs(s string) (string, bool) { return s, true }

// sameOnAdded reports whether shift leaves every added line of the chunk as
// it is.
func sameOnAdded(p *prepared, shift func(string) (string, bool)) bool {
	for _, l := range p.lines {
		if t, ok := shift(l.text); l.op == '+' && (!ok || t != l.text) {
			return false
		}
	}
	return true
}

func hasAdded(p *prepared) bool {
	for _, l := range p.lines {
		if l.op == '+' {
			return true
		}
	}
	return false
}
