package apply

import (
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
)

// sentAgain decides on block (or chunk: noun) n whose SEARCH fits only by a recovery (at
// m: recovered), where its change may be in the file already: a block
// sent again after its first place changed. Its change exactly on the
// lines m fits is the block applied before (done); its change elsewhere
// is a refusal: a block sent again would take a twin of its first place,
// or the change is there by chance. No telling.
func (lc *locator) sentAgain(c *patchparse.Chunk, n int, m *placed, noun string) (done bool, err error) {
	over := func(s span) bool { // (on a line not blank: two places may share a blank line)
		for i := max(m.pos, s.start); i < min(m.pos+m.matchLen(), s.end); i++ {
			if strings.TrimSpace(lc.file[i]) != "" {
				return true
			}
		}
		return false
	}
	q := undone(c, n)
	if q == nil || nonBlank(q.old) < 2 || !tellsApplied(c) {
		return false, nil // (a line found elsewhere says little)
	}
	// Where its change stands: exactly (on m's lines: applied), with
	// whitespace and punctuation ignored, or with one context line other
	// than the block has it (the model's misremembered line, or the
	// file's drift, which the first time took the file's line).
	places := lc.changePlaces(q, Exact, 8)
	if slices.ContainsFunc(places, over) {
		return true, nil
	}
	if !m.recovered() {
		// Found leniently (whitespace, punctuation, indentation): only
		// its change standing exactly elsewhere says it was sent again.
		if len(places) == 0 {
			return false, nil
		}
		return false, lc.sentAgainError(c, n, m, noun, places[0])
	}
	if len(places) == 0 {
		places = lc.changePlaces(q, Unicode, 8)
	}
	if len(places) == 0 && addsText(c) {
		// (Blank lines passed over: the first time, a blank line the
		// SEARCH and REPLACE wrote twice was read as one. A block that
		// only removes blank lines would find its own SEARCH so.)
		places = lc.changePlacesBlanks(q, 8)
	}
	if len(places) == 0 {
		if at, ok := lc.appliedDrifted(c, n); ok {
			places = []span{at}
		}
	}
	if len(places) == 0 || slices.ContainsFunc(places, over) {
		return false, nil // (absent, or the change and its SEARCH fit one place: not applied)
	}
	return false, lc.sentAgainError(c, n, m, noun, places[0])
}

// sentAgainError refuses block n, found at m, whose change stands at.
func (lc *locator) sentAgainError(c *patchparse.Chunk, n int, m *placed, noun string, at span) error {
	old := "its old lines"
	if noun == "block" {
		old = "its SEARCH lines"
	}
	return result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d): its change stands in the file already (line %d), and %s fit elsewhere (line %d) only %s", lc.opt.display(lc.name), noun, n, c.Line, at.start+1, old, m.pos+1, fitWord(m)).
		At(lc.name).InChunk(n, c.Line).WithHint("if the " + noun + " was applied before, there is nothing to do; if not, copy " + old + " exactly as the file has them")
}

// tellsApplied reports whether block c, applied, leaves a mark its
// SEARCH does not have: a line it adds with text, or lines it removes
// from between two lines it keeps. A block that only removes lines at an
// end of its SEARCH leaves its other lines, which stood there before it
// too: their standing there says nothing (aider's block that cuts a
// file's last lines, found again by a recovery, is applied, not done).
func tellsApplied(c *patchparse.Chunk) bool {
	kept, cut := false, false
	for l := range c.All() {
		switch {
		case l.Op == '+' && strings.TrimSpace(c.Text(l)) != "":
			return true
		case l.Op == '-':
			cut = cut || kept
		case l.Op == ' ' && cut:
			return true
		case l.Op == ' ':
			kept = true
		}
	}
	return false
}

// addsText reports whether block c adds a line with text.
func addsText(c *patchparse.Chunk) bool {
	return c.Any(func(l patchparse.ChunkLine) bool { return l.Op == '+' && strings.TrimSpace(c.Text(l)) != "" })
}

// changePlacesBlanks is changePlaces with blank lines passed over: the
// undone block q's lines with text stand in order on the file's lines
// with text (Unicode), the blank lines between either's taken as they
// come. A place spans its first line with text to its last.
func (lc *locator) changePlacesBlanks(q *prepared, limit int) []span {
	var want []string
	for _, l := range q.old {
		if strings.TrimSpace(l) != "" {
			want = append(want, l)
		}
	}
	var found []span
	for i := 0; i < len(lc.file) && len(want) > 0 && len(found) < limit; i++ {
		if !eq(Unicode, lc.file[i], want[0]) {
			continue
		}
		k, j := 0, i
		for ; j < len(lc.file) && k < len(want); j++ {
			if strings.TrimSpace(lc.file[j]) == "" {
				continue
			}
			if !eq(Unicode, lc.file[j], want[k]) {
				break
			}
			k++
		}
		if k == len(want) {
			found = append(found, span{i, j})
		}
	}
	return found
}

// undone is block n undone: its REPLACE lines the ones to find.
func undone(c *patchparse.Chunk, n int) *prepared {
	r, err := patchparse.Reverse(&patchparse.Patch{Files: []*patchparse.FileOp{{Kind: patchparse.Update, Chunks: []*patchparse.Chunk{c}}}})
	if err != nil {
		return nil
	}
	return prepare(r.Files[0].Chunks[0], n)
}

// appliedAt reports where block n's change is in the file, its lines
// compared under pass: undone, the block is found there, once — its
// REPLACE lines, least or more of them not blank.
func (lc *locator) appliedAt(c *patchparse.Chunk, n int, pass Pass, least int) (span, bool) {
	q := undone(c, n)
	if q == nil || nonBlank(q.old) < least {
		return span{}, false // (a line found elsewhere says little)
	}
	found := lc.changePlaces(q, pass, 2)
	if len(found) != 1 {
		return span{}, false // absent, or in two places: no telling
	}
	return found[0], true
}

// changePlaces are the places (up to limit) where the undone block q's
// lines stand under pass.
func (lc *locator) changePlaces(q *prepared, pass Pass, limit int) []span {
	var found []span
	for i := 0; i+len(q.old) <= len(lc.file) && len(found) < limit; i++ {
		if matchAt(pass, lc.file, q.old, i) {
			found = append(found, span{i, i + len(q.old)})
		}
	}
	return found
}

// appliedDrifted is appliedAt for a file that drifted since, or a block
// whose context the first time was read past a mistake: block n's change
// found with one context line other than the block has it (a person or a
// formatter changed it), written twice, or left out (the file has a line
// between two context lines the block has not, never where it removed
// lines) — every line the block adds as it adds it — at one place only,
// the block leaving a mark (tellsApplied).
func (lc *locator) appliedDrifted(c *patchparse.Chunk, n int) (span, bool) {
	q := undone(c, n)
	if q == nil || nonBlank(q.old) < 2 {
		return span{}, false
	}
	// ctx: which of q.old are the block's context (else its added
	// lines); cut: which follow lines the block removed, where no file
	// line may be taken for one left out (it may be the removed one).
	var ctx, cut []bool
	removed := false
	for _, l := range q.lines {
		if l.op == '+' {
			removed = true
			continue
		}
		ctx, cut = append(ctx, l.op == ' '), append(cut, removed)
		removed = false
	}
	if !tellsApplied(c) {
		return span{}, false
	}
	var found []span
	for i := 0; i < len(lc.file) && len(found) < 2; i++ {
		if end, ok := lc.oneEdit(q.old, ctx, cut, i); ok {
			found = append(found, span{i, end})
		}
	}
	if len(found) != 1 {
		return span{}, false
	}
	return found[0], true
}

// oneEdit reports whether old stands in the file from line at with one
// edit at most on a context line (ctx): one with text read otherwise,
// one written twice, or a file line between two context lines left out
// — and where the run ends.
func (lc *locator) oneEdit(old []string, ctx, cut []bool, at int) (int, bool) {
	var walk func(k, j int, edits int) (int, bool)
	walk = func(k, j int, edits int) (int, bool) {
		for k < len(old) {
			if j < len(lc.file) && eq(Unicode, lc.file[j], old[k]) {
				k, j = k+1, j+1
				continue
			}
			if edits > 0 || !ctx[k] {
				return 0, false
			}
			if j < len(lc.file) && strings.TrimSpace(old[k]) != "" && strings.TrimSpace(lc.file[j]) != "" {
				if end, ok := walk(k+1, j+1, 1); ok { // read otherwise
					return end, true
				}
			}
			if k > 0 && old[k] == old[k-1] {
				if end, ok := walk(k+1, j, 1); ok { // written twice
					return end, true
				}
			}
			if k > 0 && ctx[k-1] && !cut[k] && j < len(lc.file) {
				return walk(k, j+1, 1) // a file line left out
			}
			return 0, false
		}
		return j, true
	}
	if len(old) == 0 || at >= len(lc.file) || !eq(Unicode, lc.file[at], old[0]) && !ctx[0] {
		return 0, false
	}
	return walk(0, at, 0)
}

// nonBlank counts the lines that are not blank.
func nonBlank(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// recovered reports whether the place was found by a recovery that
// reads a line's text as other than it is (a misremembered, substituted,
// cut, wrapped or elided line: how a twin of the lines fits), not only
// with whitespace or punctuation ignored, numbers taken off, or out of
// order — lines whose text is all there, which name their place.
func (m *placed) recovered() bool {
	for _, part := range strings.Split(m.rule, ",") {
		part, _, _ = strings.Cut(part, "(")
		switch part {
		case "", "exact", "trailing-whitespace", "whitespace", "unicode", "out-of-order", "indent-consistent", "numbered-lines", "stale-numbers", "context-ignored", "leading-blank-dropped":
		default:
			return true
		}
	}
	return false
}

// inexact reports whether m was found other than exactly: leniently or
// by a recovery, where a block sent again may fit (sentAgain).
func (m *placed) inexact() bool { return m.pass != Exact || m.recovered() }

// fitWord says how a place found by a recovery, or leniently, was found.
func fitWord(m *placed) string {
	if !m.recovered() {
		return "leniently (" + m.rule + ")"
	}
	return "by a recovery (" + m.rule + ")"
}

// appliedNearer reports whether chunk n, found at m away from the line
// its header names, has its change standing nearer that line — exactly,
// or as leniently as m was found: the patch applied there before (sent
// again), m a twin of the lines it changed — which git apply would
// change, as GNU patch warns ("Reversed (or previously applied) patch
// detected").
func (lc *locator) appliedNearer(c *patchparse.Chunk, n int, m *placed) bool {
	hint := c.OldStart - 1
	if c.OldStart <= 0 || m.pos == hint || !tellsApplied(c) {
		return false
	}
	q := undone(c, n)
	if q == nil || nonBlank(q.old) < 2 {
		return false
	}
	pass := Exact
	if m.inexact() {
		pass = Unicode
	}
	for _, s := range lc.changePlaces(q, pass, 8) {
		if abs(s.start-hint) < abs(m.pos-hint) {
			return true
		}
	}
	return false
}
