package apply

import (
	"errors"
	"fmt"
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
}

func prepare(c *patchparse.Chunk, n int) *prepared {
	p := &prepared{src: c, n: n, hint: -1, guessed: c.Guessed}
	p.lines = make([]cline, 0, len(c.Lines))
	for _, l := range c.Lines {
		// A file line never holds a CR (textfile.Text ends lines at
		// one), so a CR at the end of a patch line is the patch's own line
		// ending (a CRLF patch) and never meant as content.
		t := strings.TrimSuffix(l.Text, "\r")
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
	t := textfile.FileText(content)
	file := t.Lines
	lc := &locator{name: name, opt: opt, file: file, eols: t.EOLs}
	reps := make([]replacement, 0, len(chunks))
	rules := make([]string, 0, len(chunks))
	finalNL := len(file) == 0 || t.EOLs[len(file)-1] != ""
	dominant := t.Counts().Dominant()
	cursor := 0
	var taken []span // file ranges already replaced, for overlap checks
	// A chunk that fails is noted and the next ones are still located
	// (from the same cursor), so that one answer names every failing chunk.
	var fails []error
	for i, c := range chunks {
		p := prepare(c, i+1)
		if len(p.old) == 0 {
			r, err := lc.addition(p, cursor)
			if err != nil {
				fails = append(fails, err)
				continue
			}
			r.order = i
			reps = append(reps, r)
			rules = append(rules, "addition")
			continue
		}
		m, err := lc.locate(p, cursor, taken)
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
		if r.end > cursor { // the cursor never goes back
			cursor = r.end
		}
		// Unified "\ No newline at end of file" markers decide the final
		// newline when the chunk reaches the end of the file.
		if r.end == len(file) {
			if c.NewNoNewline {
				finalNL = false
			} else if c.OldNoNewline {
				finalNL = true
			}
		}
	}
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
			default:
				b = b[:len(b)-1]
			}
		}
	}
	return b, rules, nil
}

type span struct{ start, end int }

func overlaps(taken []span, s span) bool {
	for _, t := range taken {
		if s.start < t.end && t.start < s.end {
			return true
		}
	}
	return false
}

// locator finds chunks in one file.
type locator struct {
	name string
	opt  Options
	file []string
	eols []string
	// norm and byNorm: the file's lines as the most lenient pass compares
	// them, and where each occurs (made by index, for the composed recovery).
	norm    []string
	byNorm  map[string][]int
	bigrams [][]uint32 // textfile.Bigrams of the file's lines, as needed
}

// addition places a chunk with no old lines: Codex appends it at the end of
// the file (before a last empty line, if the file ends with one). A unified
// diff's line number (-N,0: after line N) places it instead, outside
// --compat codex.
func (lc *locator) addition(p *prepared, cursor int) (replacement, error) {
	if p.src.Context != "" {
		if _, err := lc.findContext(p, cursor); err != nil {
			return replacement{}, err
		}
	}
	at := len(lc.file)
	// Codex splits on "\n" only: a last empty line of a CRLF file is "\r"
	// to it, not empty, and the addition goes after it (exactly so under
	// --compat codex; hunk's own mode treats both files alike).
	crlfBlank := at > 0 && at-1 < len(lc.eols) && lc.eols[at-1] == "\r\n"
	if at > 0 && lc.file[at-1] == "" && !(lc.opt.codex() && crlfBlank) {
		at--
	}
	if !lc.opt.codex() && p.src.OldStart > 0 && p.src.OldLines == 0 && p.src.NewStart > 0 && p.src.OldStart <= len(lc.file) {
		at = p.src.OldStart // "@@ -N,0 +M,k @@" inserts after line N
	}
	r := replacement{start: at, end: at}
	for _, l := range p.lines {
		if l.op == '+' {
			r.lines = append(r.lines, outLine{text: l.text})
		}
	}
	return r, nil
}

// findContext finds the chunk's "@@ context" line at or after cursor and
// returns the position after it.
func (lc *locator) findContext(p *prepared, cursor int) (int, error) {
	ctx := []string{strings.TrimSuffix(p.src.Context, "\r")}
	i, _ := seekFirst(lc.file, ctx, cursor, false)
	if i < 0 && !lc.opt.codex() {
		i, _ = seekFirst(lc.file, ctx, 0, false) // chunks out of order
	}
	if i < 0 {
		return 0, result.Errorf(result.NoMatch, "Failed to find context '%s' in %s", p.src.Context, lc.opt.display(lc.name)).
			At(lc.name).InChunk(p.n, p.src.Line)
	}
	return i + 1, nil
}

// locate finds where a chunk with old lines goes.
func (lc *locator) locate(p *prepared, cursor int, taken []span) (*placed, error) {
	if lc.opt.codex() {
		return lc.locateCodex(p, cursor)
	}
	strict := func(q *prepared) (*placed, error) {
		m, err := lc.locateStrict(q, cursor, taken)
		if m == nil || m.pass < Trim || lc.opt.Strict || q.guessed {
			return m, err
		}
		// Matched only with indentation ignored, and no single shift
		// explains it (a removed "}" matched to a "}" of another depth):
		// a stricter pass that fits with a context line left out or
		// written twice reads the chunk better.
		if _, ok, _ := lc.indentShift(m, 0); !ok {
			for _, r := range []*prepared{p, q} {
				if better, _ := lc.recoverBelow(r, cursor, taken, Trim); better != nil {
					better.rule += ",indent-consistent"
					return better, nil
				}
			}
		}
		return m, err
	}
	m, err := strict(p)
	if m != nil && p.guessed && m.pass != Exact {
		// Which of two equal lines of the block is removed was guessed:
		// where the file's lines differ (matched leniently), the guess
		// decides the result. Only an exact match leaves it no say.
		e := lc.noMatch(p)
		e.Hints = append([]string{fmt.Sprintf("the block repeats a line its REPLACE text keeps only once, and its lines fit the file (line %d) only leniently (whitespace or punctuation), so which of them goes is not known: copy the SEARCH lines exactly as the file has them", m.pos+1)}, e.Hints...)
		return nil, e
	}
	if m != nil || err != nil {
		return m, err
	}
	if q := p.numbered(); q != nil && !lc.opt.Strict {
		q.guessed = q.guessed || p.guessed
		// Lines copied with a read tool's line numbers: taken without
		// them only where the numbers say.
		if m, _ := lc.locateStrict(q, cursor, taken); m != nil && m.pos == q.hint {
			m.rule += ",numbered-lines"
			return m, nil
		}
	}
	if q := p.dropTrailingEmpty(); q != nil && !p.guessed {
		m, err = strict(q)
		if m != nil || err != nil {
			return m, err
		}
		if !lc.opt.Strict && !p.guessed {
			if m, err = lc.recover(q, cursor, taken); err != nil || m != nil && !lc.rivalNear(q, m, 1, taken) {
				return m, err
			}
		}
	}
	if !lc.opt.Strict && !p.guessed {
		// Each recovery is taken only when no other place fits with one
		// mistake more (the composed search's rule).
		if m, err = lc.recover(p, cursor, taken); err != nil || m != nil && !lc.rivalNear(p, m, 1, taken) {
			return m, err
		}
		if m = lc.recoverSubstituted(p, taken); m != nil && !lc.rivalNear(p, m, 1, taken) {
			return m, nil
		}
		if m = lc.recoverElided(p, taken); m != nil && !lc.rivalNear(p, m, 0, taken) {
			return m, nil
		}
		if m = lc.recoverComposed(p, taken); m != nil {
			return m, nil
		}
	}
	e := lc.noMatch(p)
	if q := p.numbered(); q != nil {
		h := fmt.Sprintf("the chunk's lines start with line numbers (%d, …) as a read prints them; they are matched without them only where the numbers say", q.hint+1)
		r := *q
		r.hint = -1
		if m, _ := lc.locateStrict(&r, 0, taken); m != nil {
			h += fmt.Sprintf(", and without them the lines are at line %d: copy the lines again, without the numbers", m.pos+1)
		}
		e.Hints = append([]string{h}, e.Hints...)
	}
	if ctx := strings.TrimSuffix(p.src.Context, "\r"); ctx != "" {
		if i, _ := seekFirst(lc.file, []string{ctx}, 0, false); i < 0 {
			// Codex checks the context line first and says so; keep its
			// words, and the hint about the chunk's lines.
			e.Msg = fmt.Sprintf("Failed to find context '%s' in %s", p.src.Context, lc.opt.display(lc.name))
			e.Hints = append([]string{"the chunk's own lines do not fit the file either"}, e.Hints...)
		}
	}
	return nil, e
}

// locateCodex is Codex's rule: after the context line, the first position
// at or after the cursor under the first pass that matches anywhere.
func (lc *locator) locateCodex(p *prepared, cursor int) (*placed, error) {
	start := cursor
	if p.src.Context != "" {
		i, err := lc.findContext(p, cursor)
		if err != nil {
			return nil, err
		}
		start = i
	}
	for _, q := range []*prepared{p, p.dropTrailingEmpty()} {
		if q == nil {
			continue
		}
		if i, pass := seekFirst(lc.file, q.old, start, q.src.EndOfFile); i >= 0 {
			return &placed{pos: i, pass: pass, skipFile: -1, skipPat: -1, rule: pass.String(), chunk: q}, nil
		}
	}
	return nil, lc.noMatch(p)
}

// locateStrict is Codex's search made safe: every place the chunk matches
// (under the first pass that matches at all) is found; one place is taken,
// several are decided by the @@ context line (the first after it) or by the
// header's line number (the nearest), and are AMBIGUOUS otherwise. Nothing
// after the cursor sends the search to the whole file (chunks out of order),
// where the place must be unique as well. It returns nil, nil when nothing
// matches.
func (lc *locator) locateStrict(p *prepared, cursor int, taken []span) (*placed, error) {
	eof := p.src.EndOfFile
	if p.src.Context != "" {
		// Each occurrence of the context line in turn (Codex takes the
		// first; a later one is tried when the chunk is not after it). The
		// context decides: the first place after it is taken.
		ctx := []string{strings.TrimSuffix(p.src.Context, "\r")}
		for round, from := range []int{cursor, 0} {
			if round == 1 && cursor == 0 {
				break
			}
			for tries := 0; tries < maxCandidates; tries++ {
				h, _ := seekFirst(lc.file, ctx, from, false)
				if h < 0 || (round == 1 && h >= cursor) {
					break
				}
				from = h + 1
				if i, pass := seekFirst(lc.file, p.old, h+1, eof); i >= 0 && !overlaps(taken, span{i, i + len(p.old)}) {
					rule := pass.String()
					if round == 1 {
						rule += ",out-of-order"
					}
					return &placed{pos: i, pass: pass, skipFile: -1, skipPat: -1, rule: rule, chunk: p}, nil
				}
			}
		}
		// The context line is missing or wrong: the chunk's own lines may
		// still place it, if they do so uniquely.
	}
	for round, from := range []int{cursor, 0} {
		to := len(lc.file)
		if round == 1 {
			if cursor == 0 {
				break
			}
			to = cursor // only what the first search did not see
		}
		if p.hint >= from && p.hint < to && !eof && matchAt(Exact, lc.file, p.old, p.hint) && !overlaps(taken, span{p.hint, p.hint + len(p.old)}) {
			// An exact match where the line number says: nothing is nearer.
			rule := Exact.String()
			if round == 1 {
				rule += ",out-of-order"
			}
			return &placed{pos: p.hint, pass: Exact, skipFile: -1, skipPat: -1, rule: rule, chunk: p}, nil
		}
		cands, pass := seekAll(lc.file, p.old, from, to, eof)
		cands = free(cands, len(p.old), taken)
		if len(cands) == 0 {
			continue
		}
		pos, err := lc.decide(p, cands)
		if err != nil {
			return nil, err
		}
		rule := pass.String()
		if round == 1 {
			rule += ",out-of-order"
		}
		if p.src.Context != "" {
			rule += ",context-ignored"
		}
		return &placed{pos: pos, pass: pass, skipFile: -1, skipPat: -1, rule: rule, chunk: p}, nil
	}
	return nil, nil
}

// free drops candidates that overlap chunks already placed.
func free(cands []int, n int, taken []span) []int {
	if len(taken) == 0 {
		return cands
	}
	out := cands[:0:0]
	for _, c := range cands {
		if !overlaps(taken, span{c, c + n}) {
			out = append(out, c)
		}
	}
	return out
}

// decide picks one of several candidate places: the only one, or the one
// nearest the header's line number; otherwise the chunk is AMBIGUOUS.
func (lc *locator) decide(p *prepared, cands []int) (int, error) {
	if len(cands) == 1 {
		return cands[0], nil
	}
	if p.hint >= 0 {
		best, second := -1, -1
		for _, c := range cands {
			d := abs(c - p.hint)
			if best < 0 || d < abs(best-p.hint) {
				best, second = c, best
			} else if second < 0 || d < abs(second-p.hint) {
				second = c
			}
		}
		if second < 0 || abs(best-p.hint) < abs(second-p.hint) {
			return best, nil
		}
	}
	return 0, lc.ambiguous(p, cands)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func (lc *locator) ambiguous(p *prepared, cands []int) error {
	nums := make([]string, len(cands))
	lines := make([]int, len(cands))
	for i, c := range cands {
		nums[i] = fmt.Sprint(c + 1)
		lines[i] = c + 1
	}
	more := ""
	if len(cands) >= maxCandidates {
		more = " and more"
	}
	return result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d) matches in %d places (lines %s%s); refusing to guess",
		lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, len(cands), strings.Join(nums, ", "), more).
		WithHint(lc.opt.hint3("add an '@@ <line>' context header naming an enclosing line (a function signature) or more context lines, so the chunk fits one place",
			"add an '@@ <line>' context header naming an enclosing line (a function signature) or more context lines, so the chunk fits one place",
			"add lines around the SEARCH text (the enclosing function's first line) so the block matches one place")).
		At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", lines)
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
	r := replacement{start: m.pos}
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

// Combine makes one error of several failures (chunks of a file, files of
// a patch): the first one's message, code, place and hints, the others in
// its Also (each with its own), and every one in details.failures, so that
// a model can fix them all in one round trip. Combined errors are
// flattened.
func Combine(errs []error) error {
	var leaves failureList
	for _, err := range errs {
		var fl failureList
		if errors.As(err, &fl) {
			leaves = append(leaves, fl...)
		} else {
			leaves = append(leaves, err)
		}
	}
	if len(leaves) == 1 {
		return leaves[0]
	}
	first := result.As(leaves[0])
	c := *first
	c.Err = leaves
	c.Details = map[string]any{}
	for k, v := range first.Details {
		c.Details[k] = v
	}
	failures := make([]map[string]any, 0, len(leaves))
	for i, err := range leaves {
		re := result.As(err)
		f := re.AllDetails()
		f["code"], f["message"] = re.Code, re.Msg
		failures = append(failures, f)
		if i > 0 {
			c.Also = append(c.Also, re)
		}
	}
	c.Details["failures"] = failures
	return &c
}

// failureList holds the failures a combined error stands for.
type failureList []error

func (fl failureList) Error() string { return fmt.Sprintf("%d failures", len(fl)) }
