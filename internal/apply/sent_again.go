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
	if q == nil || nonBlank(q.old) < 2 {
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
	if len(places) == 0 {
		places = lc.changePlaces(q, Unicode, 8)
	}
	if len(places) == 0 {
		if at, ok := lc.appliedDrifted(c, n); ok {
			places = []span{at}
		}
	}
	if len(places) == 0 || slices.ContainsFunc(places, over) {
		return false, nil // (absent, or the change and its SEARCH fit one place: not applied)
	}
	at, old := places[0], "its old lines"
	if noun == "block" {
		old = "its SEARCH lines"
	}
	return false, result.Errorf(result.Ambiguous, "%s: %s %d (patch line %d): its change stands in the file already (line %d), and %s fit elsewhere (line %d) only %s", lc.opt.display(lc.name), noun, n, c.Line, at.start+1, old, m.pos+1, fitWord(m)).
		At(lc.name).InChunk(n, c.Line).WithHint("if the " + noun + " was applied before, there is nothing to do; if not, copy " + old + " exactly as the file has them")
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

// appliedDrifted is appliedAt for a file that drifted since: block n's
// change found with one context line other than the block has it (a
// person or a formatter changed it) — every line the block adds as it
// adds it, one at least not blank — at one place only.
func (lc *locator) appliedDrifted(c *patchparse.Chunk, n int) (span, bool) {
	q := undone(c, n)
	if q == nil || nonBlank(q.old) < 2 {
		return span{}, false
	}
	var ctx []bool // which of q.old are the block's context (else its added lines)
	added := false
	for _, l := range q.lines {
		if l.op != '+' {
			ctx = append(ctx, l.op == ' ')
			added = added || l.op == '-' && strings.TrimSpace(l.text) != ""
		}
	}
	if !added {
		return span{}, false
	}
	var found []int
	for i := 0; i+len(q.old) <= len(lc.file) && len(found) < 2; i++ {
		off := 0
		for k, l := range q.old {
			if !eq(Unicode, lc.file[i+k], l) {
				if off++; off > 1 || !ctx[k] || strings.TrimSpace(l) == "" {
					off = 2
					break
				}
			}
		}
		if off <= 1 {
			found = append(found, i)
		}
	}
	if len(found) != 1 {
		return span{}, false
	}
	return span{found[0], found[0] + len(q.old)}, true
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

// fitWord says how a place found by a recovery was found.
func fitWord(m *placed) string { return "by a recovery (" + m.rule + ")" }
