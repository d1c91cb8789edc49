package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

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
// --compat codex. next is where the chunks after it are searched from:
// past its "@@ context" line under --compat codex, as Codex moves its
// cursor there (so two such chunks on one context line are refused, as
// Codex refuses them); cursor otherwise.
func (lc *locator) addition(p *prepared, cursor int) (r replacement, next int, err error) {
	next = cursor
	if p.src.Context != "" {
		after, err := lc.findContext(p, cursor)
		if err != nil {
			return replacement{}, cursor, err
		}
		if lc.opt.codex() {
			next = max(cursor, after)
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
	if !lc.opt.codex() && p.src.OldLines == 0 && p.src.NewStart > 0 && p.src.OldStart <= len(lc.file) {
		at = p.src.OldStart // "@@ -N,0 +M,k @@" inserts after line N; "@@ -0,0 +1,k @@" at the top (git's -U0)
	}
	r = replacement{start: at, end: at}
	// An empty file has no ending of its own: the added lines take the
	// patch's, as a new file's do (git writes the patch's bytes).
	own := len(lc.file) == 0 && patchEndings(p)
	for _, l := range p.lines {
		if l.op == '+' {
			ol := outLine{text: l.text}
			if own {
				ol.eol, ol.patchEOL = l.eol.String(), true
			}
			r.lines = append(r.lines, ol)
		}
	}
	return r, next, nil
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
	m, err := lc.locateAny(p, cursor, taken)
	if m == nil && err != nil && result.As(err).Code == result.NoMatch {
		if e := lc.overlapped(p, taken); e != nil {
			return nil, e
		}
	}
	if lc.opt.codex() {
		return m, err
	}
	if m == nil || err != nil || m.pass == Exact && m.skipFile < 0 && m.skipPat < 0 && m.chunk == p {
		return m, err
	}
	// Found leniently or by a recovery: a chunk git holds to the end of
	// the file must end it there (placed elsewhere exactly, the file may
	// have grown past it; a recovery's reading of it elsewhere — "}" taken
	// for a copy of "\t}" — is a guess at its context, and the end is what
	// the chunk says).
	if atEnd, _ := lc.anchors(p); atEnd {
		probe := *m // (build notes what it did in the rule)
		if r, berr := lc.build(&probe); berr == nil && r.end != lc.stop() {
			return nil, lc.noMatch(p)
		}
	}
	return m, nil
}

// overlapped is the refusal of a chunk whose old lines stand, exactly, only
// where an earlier chunk of the file already changes lines (two chunks
// over one line); nil when they stand nowhere so.
func (lc *locator) overlapped(p *prepared, taken []span) *result.Error {
	at, pass := seekAll(lc.file, p.old, 0, len(lc.file), p.src.EndOfFile)
	if len(at) == 0 || pass != Exact {
		return nil
	}
	for _, i := range at {
		if !overlaps(taken, span{i, i + len(p.old)}) {
			return nil
		}
	}
	return lc.overlapping(p, at[0])
}

// overlapping is the refusal of a chunk whose lines at file line at (from
// 0) are lines an earlier chunk changes.
func (lc *locator) overlapping(p *prepared, at int) *result.Error {
	return result.Errorf(result.NoMatch, "Failed to find expected lines in %s:\n%s", lc.opt.display(lc.name), strings.Join(p.old, "\n")).
		At(lc.name).InChunk(p.n, p.src.Line).
		WithHint(fmt.Sprintf("these lines stand at line %d, which an earlier chunk of this file already changes: two chunks cannot change one line; make them one chunk", at+1))
}

// locateAny is locate's search: the strict passes, then the recoveries
// (Codex's rule under --compat codex).
func (lc *locator) locateAny(p *prepared, cursor int, taken []span) (*placed, error) {
	if lc.opt.codex() {
		m, err := lc.locateCodex(p, cursor)
		if m != nil && overlaps(taken, span{m.pos, m.pos + m.matchLen()}) {
			// Only a chunk held to the end of the file is searched
			// behind the cursor; Codex would splice the two changes
			// into one another.
			return nil, lc.overlapping(p, m.pos)
		}
		return m, err
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
	if m != nil && p.guessed && m.pass != Exact && lc.guessMatters(m) {
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
		if m := lc.locateNumbered(q, cursor, taken); m != nil {
			return m, nil
		}
	}
	if q := p.repoMapped(); q != nil && lc.textual(p) {
		if m, err := lc.locateRepoMapped(q, cursor, taken, strict); m != nil || err != nil {
			return m, err
		}
	}
	if q := p.dropTrailingContext(); q != nil && !p.guessed && !p.src.DotsAfter {
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
	if !lc.opt.Strict {
		// Each recovery is taken only when no other place fits with one
		// mistake more (the composed search's rule), and, for a block whose
		// alignment was guessed, only where the guess decides nothing.
		kept := func(m *placed) bool { return m != nil && (!p.guessed || !lc.guessMatters(m)) }
		if m, err = lc.recover(p, cursor, taken); err != nil && !p.guessed || kept(m) && !lc.rivalNear(p, m, 1, taken) {
			return m, err
		}
		if m = lc.recoverSubstituted(p, taken); kept(m) && !lc.rivalNear(p, m, 1, taken) {
			return m, nil
		}
		if m = lc.recoverElided(p, taken); kept(m) && !lc.rivalNear(p, m, 0, taken) {
			return m, nil
		}
		if m = lc.recoverComposed(p, taken); kept(m) {
			return m, nil
		}
		if m = lc.leadingBlank(p, strict, taken); kept(m) {
			return m, nil
		}
	}
	m, why := lc.recoverText(p, taken)
	if m != nil {
		return m, nil
	}
	return nil, lc.unplaced(p, why, taken)
}

// recoverText tries the text recoveries (recover_text.go), last; why are
// the hints of those that found the text in more than one place.
func (lc *locator) recoverText(p *prepared, taken []span) (*placed, []string) {
	var why []string
	if lc.textual(p) {
		for _, r := range []func(*prepared, []span) (*placed, string){lc.recoverWrapped, lc.recoverPartial} {
			m, h := r(p, taken)
			if m != nil {
				return m, nil
			}
			if h != "" {
				why = append(why, h)
			}
		}
	}
	return nil, why
}

// unplaced is the refusal of a chunk nothing placed: NO_MATCH, its hints
// first (why), then what the file's lines say.
func (lc *locator) unplaced(p *prepared, why []string, taken []span) error {
	e := lc.noMatch(p)
	e.Hints = append(why, e.Hints...)
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
	return e
}

// locateNumbered places a chunk whose lines were copied with a read
// tool's line numbers (numbered: q, without them). The numbers are
// evidence: taken exactly where they say; or, the numbers consecutive
// and the lines two or more, exactly at the one place they fit (the file
// moved since the read: stale numbers); or by one recovery (a
// misremembered line, an elision, a skipped number) placing the chunk
// where the numbers say, with no other place as good.
func (lc *locator) locateNumbered(q *prepared, cursor int, taken []span) *placed {
	if m, _ := lc.locateStrict(q, cursor, taken); m != nil && m.pos == q.hint {
		m.rule += ",numbered-lines"
		return m
	}
	if q.guessed {
		return nil
	}
	if len(q.old) >= 2 && !q.gapped {
		r := *q
		r.hint = -1
		if m, err := lc.locateStrict(&r, 0, taken); err == nil && m != nil && m.pass == Exact {
			m.rule += ",numbered-lines,stale-numbers"
			return m
		}
	}
	tries := []func() *placed{
		func() *placed { m, _ := lc.recover(q, cursor, taken); return m },
		func() *placed { return lc.recoverSubstituted(q, taken) },
		func() *placed { return lc.recoverElided(q, taken) },
		func() *placed { return lc.recoverComposed(q, taken) },
	}
	for _, try := range tries {
		if m := try(); m != nil && m.pos == q.hint && !lc.rivalNear(q, m, 1, taken) {
			m.rule += ",numbered-lines"
			return m
		}
	}
	return nil
}

// leadingBlank places a chunk begun with a blank old line the file does
// not have there (a SEARCH begun with an empty line) without that line:
// by the strict passes, where nothing fits the chunk as written — not even
// with a recovery, it is tried last — nor the chunk with one mistake more
// (a blank line two lines above: the line between left out).
func (lc *locator) leadingBlank(p *prepared, strict func(*prepared) (*placed, error), taken []span) *placed {
	q := p.dropLeadingEmpty()
	if q == nil || p.src.DotsBefore {
		return nil
	}
	m, err := strict(q)
	if err != nil || m == nil || lc.rivalNear(p, m, 1, taken) {
		return nil
	}
	if m.pos >= 2 && strings.TrimSpace(lc.file[m.pos-2]) == "" {
		// A blank line one line above: the chunk as written, with the
		// line between left out, is a reading as likely.
		return nil
	}
	m.rule += ",leading-blank-dropped"
	return m
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
		if at, ok := lc.anchored(p, from, to, taken); ok {
			// git's match_beginning / match_end: a hunk at the start or the
			// end of the file is tried there first.
			return &placed{pos: at, pass: Exact, skipFile: -1, skipPat: -1, rule: Exact.String(), chunk: p}, nil
		}
		if atEnd, atStart := lc.anchors(p); lc.opt.held && (atEnd || atStart) {
			continue // held where git holds it
		} else if round == 1 && atEnd {
			// A chunk that ends the file is never before a chunk the diff
			// puts above it.
			if cands, _ := seekAll(lc.file, p.old, from, to, false); len(cands) > 0 {
				return nil, result.Errorf(result.NoMatch, "%s: %s %d (patch line %d) has no context after its change, so it belongs at the end of the file, which does not hold its lines; they stand at line %d, above the chunk before it; refusing to move it there",
					lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, cands[0]+1).
					WithHint("check the file's end: give the chunk's context as the file's last lines are now").
					At(lc.name).InChunk(p.n, p.src.Line)
			}
			continue
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
		if at := lc.nearHint(p, pos, taken); at >= 0 {
			// The line number's place holds the chunk with a context line
			// or two drifted, a twin elsewhere holds it whole: the twin
			// may be another section's copy (found by the drift test: a
			// file's last context line gone, the same lines earlier).
			return nil, result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d) nearly fits at line %d, where its header's line number puts it (one context line differs), and matches whole at line %d; refusing to guess",
				lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, at+1, pos+1).
				WithHint("look at both places: give the context the file has now, or more of it, so the chunk fits one place").
				At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", []int{min(at, pos) + 1, max(at, pos) + 1})
		}
		if err := lc.anchorTwin(p, pos); err != nil {
			// A twin elsewhere, or the meant place at the end of the file
			// with its context drifted: neither is sure.
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
// nearest the header's line number; otherwise the chunk is AMBIGUOUS. A
// block's line hint (Roo's :start_line:) picks only the place it names:
// a stale one that fits none never picks the nearer (as read-tool line
// numbers do not).
func (lc *locator) decide(p *prepared, cands []int) (int, error) {
	if len(cands) == 1 {
		return cands[0], nil
	}
	if p.hint >= 0 && lc.opt.blocks() {
		for _, c := range cands {
			if c == p.hint {
				return c, nil
			}
		}
		return 0, lc.ambiguous(p, cands)
	}
	if p.hint >= 0 {
		// Outward from the line the header names, as git apply (find_pos)
		// and GNU patch search: the nearest place; of two as near, the
		// later (lines added above a chunk — the common drift — move it
		// down).
		best := -1
		for _, c := range cands {
			if d, bd := abs(c-p.hint), abs(best-p.hint); best < 0 || d < bd || d == bd && c > best {
				best = c
			}
		}
		return best, nil
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
	shown := cands[:min(len(cands), maxCandidates)]
	nums := make([]string, len(shown))
	lines := make([]int, len(shown))
	for i, c := range shown {
		nums[i] = fmt.Sprint(c + 1)
		lines[i] = c + 1
	}
	more := ""
	if len(cands) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(cands)-len(shown))
	}
	return result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d) matches in %d places (lines %s%s); refusing to guess",
		lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, len(cands), strings.Join(nums, ", "), more).
		WithHint(lc.opt.hint3("add an '@@ <line>' context header naming an enclosing line (a function signature) or more context lines, so the chunk fits one place",
			"add an '@@ <line>' context header naming an enclosing line (a function signature) or more context lines, so the chunk fits one place",
			"add lines around the SEARCH text (the enclosing function's first line) so the block matches one place")).
		At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", lines)
}
