package apply

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// applyInOrder applies SEARCH/REPLACE blocks as aider, Cline and Roo Code
// do: in order, each found in the file the blocks before it left (so a
// block may edit what an earlier one wrote). A block sent twice is applied
// once; a block whose SEARCH is gone and whose change is in the file
// already (found exactly) is a no-op. A block whose SEARCH is still there
// because its REPLACE keeps it (it inserts lines) cannot tell so: it is a
// no-op only when its change is in the file around that place and another
// block of the file was found applied — the blocks are being sent again.
// A failing block leaves the file as it was for the next one, so that one
// answer names every failing block. A Roo line hint counts lines of the
// original file: it moves with the lines the blocks before it added or
// removed.
//
// A block whose SEARCH and REPLACE hold aider's "..." lines and whose
// SEARCH, "..." lines and all, is not in the file is its pieces between
// them, each a block of its own (patchparse.DotPieces), placed as the
// others are: one place each, a later one searched after the earlier one
// first. (As aider: the block as written first; a file's own "..." line,
// Python's, is text.)
func applyInOrder(name string, content []byte, chunks []*patchparse.Chunk, opt Options) ([]byte, []string, error) {
	out, rules, again, err := inOrder(name, content, chunks, opt, false)
	if again {
		out, rules, _, err = inOrder(name, content, chunks, opt, true)
	}
	return out, rules, err
}

// inOrder is applyInOrder, inserting blocks whose change is present
// already only when again is false; it reports whether they were and
// another block was found applied (then again should be true).
func inOrder(name string, content []byte, chunks []*patchparse.Chunk, opt Options, again bool) ([]byte, []string, bool, error) {
	cur := content
	rules := make([]string, 0, len(chunks))
	var fails []error
	cursor := 0
	var before lineEdits // the blocks placed so far, in order
	applied, present := false, false
	for i, c := range chunks {
		if slices.ContainsFunc(chunks[:i], func(d *patchparse.Chunk) bool { return sameBlock(c, d) }) {
			rules = append(rules, "repeated")
			continue
		}
		pieces, dotted := []*patchparse.Chunk{c}, false
		if ps := patchparse.DotPieces(c); ps != nil && !fitsAsWritten(cur, c) {
			pieces, dotted = ps, true
		}
		// A dotted block whose pieces do not all fit is tried whole, its
		// "..." lines elisions (recoverElided): one chunk, one place.
		saved := inOrderState{cur, slices.Clone(rules), cursor, slices.Clone(before), applied, present}
		failed := len(fails)
		var kept []error                  // the pieces' refusals, which say more than the whole's
		placedPiece, pieceEnd := false, 0 // (the piece placed last, where it ends)
		for round := 0; round < 2; round++ {
			if round == 1 {
				if !dotted || len(fails) == failed {
					break
				}
				kept = slices.Clone(fails[failed:])
				fails = fails[:failed]
				cur, rules, cursor, before, applied, present = saved.cur, saved.rules, saved.cursor, saved.before, saved.applied, saved.found
				pieces, dotted, placedPiece = []*patchparse.Chunk{c}, false, false
			}
			for _, pc := range pieces {
				t := textfile.FileText(cur)
				lc := &locator{name: name, opt: opt, file: t.Lines, eols: t.EOLs}
				finalNL := len(t.Lines) == 0 || t.EOLs[len(t.Lines)-1] != ""
				r, rule, there, err := lc.placeBlock(pc, i+1, cursor, before)
				if err == nil && dotted && placedPiece && r.start < pieceEnd {
					err = result.Errorf(result.NoMatch, "%s: block %d's piece after a \"...\" (patch line %d) fits only before the piece ahead of it (line %d): the pieces stand in the file in the order they are written", opt.display(name), i+1, pc.Line, r.start+1).
						WithHint("copy the block's lines again, without \"...\" where the lines between are few")
				}
				if err != nil {
					fails = append(fails, dotsHint(c, dotted, err))
					continue
				}
				placedPiece, pieceEnd = true, r.start+len(r.lines)
				applied = applied || rule == "already-applied"
				present = present || there
				if there && again {
					rule = "already-applied"
				}
				if dotted && changes(rule) {
					rule += ",dotted-pieces"
				}
				rules = append(rules, rule)
				if strings.HasPrefix(rule, "already-applied") {
					continue
				}
				cur = assemble(t, []replacement{r}, finalNL)
				before = append(before, lineEdit{r.start, r.end, len(r.lines)})
				cursor = r.start
			}
		}
		if kept != nil && len(fails) > failed {
			fails = append(fails[:failed], kept...)
		}
	}
	if len(fails) > 0 {
		return nil, nil, false, Combine(fails)
	}
	return cur, rules, !again && applied && present, nil
}

// placeBlock finds block n in the file as it is now: its replacement and
// how it was placed ("already-applied": its SEARCH is gone and its change
// there), and whether its change is there around the place found (there:
// a block that inserts lines, maybe sent again).
func (lc *locator) placeBlock(c *patchparse.Chunk, n, cursor int, before lineEdits) (r replacement, rule string, there bool, err error) {
	c, err = lc.decideSplit(c, n, cursor, before)
	if err != nil {
		return replacement{}, "", false, err
	}
	p := prepareAt(c, n, before)
	if len(p.old) == 0 {
		r, _, err := lc.addition(p, cursor)
		return r, "addition", false, err
	}
	m, err := lc.locate(p, cursor, nil)
	var at span
	ok := false
	if err != nil && result.As(err).Code == result.NoMatch || err == nil && !removes(c) {
		// (Only a block not found, or one that removes nothing — its
		// SEARCH kept — can be in the file already.)
		at, ok = lc.applied(c, n)
	}
	if ok && err != nil {
		return replacement{}, "already-applied", false, nil
	}
	if err == nil && removes(c) && m.inexact() {
		if done, err := lc.sentAgain(c, n, m, "block"); done || err != nil {
			return replacement{}, "already-applied", false, err
		}
	}
	if err != nil {
		if len(c.Splits) > 1 {
			var e *result.Error
			if errors.As(err, &e) {
				e.Hints = append([]string{fmt.Sprintf("the block's text holds lines that read as its ======= divider (patch lines %s), and divided at none of them does it fit the file", dividerLines(c))}, e.Hints...)
			}
		}
		return replacement{}, "", false, err
	}
	r, err = lc.build(m)
	return r, m.rule, ok && m.pos >= at.start && m.pos+m.matchLen() <= at.end, err
}

// prepareAt is prepare for a block after the blocks placed before it:
// its line hint moved by the lines they added or removed, and its
// read-tool numbers by those they added or removed above them.
func prepareAt(c *patchparse.Chunk, n int, before lineEdits) *prepared {
	p := prepare(c, n)
	if p.hint >= 0 {
		p.hint = max(0, p.hint+before.delta())
	}
	p.before = before
	return p
}

// lineEdit is a block placed: file lines [start, end) replaced by n lines.
type lineEdit struct{ start, end, n int }

// lineEdits are the blocks placed before one, in order.
type lineEdits []lineEdit

// delta is the lines the edits added, less those they removed.
func (es lineEdits) delta() int {
	d := 0
	for _, e := range es {
		d += e.n - (e.end - e.start)
	}
	return d
}

// moved is line i of the file before the edits (a read-tool number) in
// the file after them: moved down or up by the lines each edit above it
// added or removed, and not by one below it. A line an edit replaced
// stays where it was (its numbers then fit only where the file has the
// lines).
func (es lineEdits) moved(i int) int {
	for _, e := range es {
		if i >= e.end {
			i += e.n - (e.end - e.start)
		}
	}
	return i
}

// decideSplit reads a block whose text holds more than one line its
// grammar takes for a divider (patchparse.Split), by the file: the one
// reading whose SEARCH the file has, or the one of those that resolves
// whole merge conflicts (patchparse.WholeConflicts). Every reading's
// SEARCH begins with the shorter ones', so where a longer one is in the
// file the shorter ones are there too, each a block that fits with no
// mistake: two readings found otherwise is undecided, and so is a reading followed in the file
// by its own divider's line — the file continues as a longer reading
// does, and that one does not fit (a mistake in it, or the shorter block
// meant: no telling). When no reading is in the file as it is written, a
// recovery may place one, and only one.
func (lc *locator) decideSplit(c *patchparse.Chunk, n, cursor int, before lineEdits) (*patchparse.Chunk, error) {
	if len(c.Splits) < 2 {
		return c, nil
	}
	reads := make([]*prepared, len(c.Splits))
	for i, s := range c.Splits {
		r := *c
		r.SetLines(s.Lines)
		r.Guessed = s.Guessed
		reads[i] = prepareAt(&r, n, before)
	}
	// The readings the file has, and where (-1: more than one place).
	var found, whole []int
	place := make([]int, len(reads))
	for i, p := range reads {
		cands, _ := seekAll(lc.file, p.old, 0, len(lc.file), p.src.EndOfFile)
		if p.hint >= 0 && slices.Contains(cands, p.hint) {
			cands = []int{p.hint}
		}
		if len(p.old) == 0 || len(cands) == 0 {
			continue
		}
		place[i] = -1
		if len(cands) == 1 {
			place[i] = cands[0]
		}
		found = append(found, i)
		if patchparse.WholeConflicts(p.src.TextLines()) {
			whole = append(whole, i)
		}
	}
	at, end := -1, -1
	switch {
	case len(found) == 1:
		at = found[0]
	case len(found) > 1 && len(whole) == 1:
		at = whole[0] // a conflict resolved whole, not cut at its =======
	case len(found) > 1:
		return nil, lc.undecided(c, n)
	}
	if at >= 0 && place[at] >= 0 {
		end = place[at] + len(reads[at].old)
	}
	if at < 0 {
		for i, p := range reads {
			if len(p.old) == 0 || p.guessed {
				continue
			}
			if m, err := lc.locate(p, cursor, nil); err == nil && m != nil {
				if at >= 0 {
					return nil, lc.undecided(c, n)
				}
				at, end = i, m.pos+m.matchLen()
			}
		}
	}
	switch {
	case at < 0:
		return c, nil // the first reading's own failure says why
	case at < len(reads)-1 && end >= 0 && end < len(lc.file) && strings.TrimSpace(lc.file[end]) == c.Splits[at].Mark:
		return nil, lc.undecided(c, n)
	}
	return reads[at].src, nil
}

// undecided refuses a block that fits the file under more than one of its
// readings.
func (lc *locator) undecided(c *patchparse.Chunk, n int) error {
	hint := patchparse.DividerHint(lc.opt.format) + ", or add lines to its SEARCH so that it fits the file one way only"
	return result.Errorf(result.Ambiguous, "%s: block %d (patch line %d): its text holds lines that read as its ======= divider (patch lines %s), and the file does not tell which one divides it; refusing to guess",
		lc.opt.display(lc.name), n, c.Line, dividerLines(c)).
		WithHint(hint).At(lc.name).InChunk(n, c.Line)
}

func dividerLines(c *patchparse.Chunk) string {
	nums := make([]string, len(c.Splits))
	for i, s := range c.Splits {
		nums[i] = fmt.Sprint(s.Divider)
	}
	return strings.Join(nums, ", ")
}

// applied reports where block n's change is in the file already: the
// block adds lines, and undone it is found exactly, there.
func (lc *locator) applied(c *patchparse.Chunk, n int) (span, bool) {
	if !c.Any(func(l patchparse.ChunkLine) bool { return l.Op == '+' }) {
		return span{}, false
	}
	return lc.appliedAt(c, n, Exact, 0)
}

// removes reports whether a block removes a line.
func removes(c *patchparse.Chunk) bool {
	return c.Any(func(l patchparse.ChunkLine) bool { return l.Op == '-' })
}

// sameBlock reports whether two blocks are one block sent twice.
func sameBlock(a, b *patchparse.Chunk) bool {
	return patchparse.SameLines(a.TextLines(), b.TextLines()) &&
		slices.EqualFunc(a.Splits, b.Splits, func(x, y patchparse.Split) bool { return patchparse.SameLines(x.Lines, y.Lines) })
}

// changes reports whether a block placed by rule changed the file: it was
// neither in the file already nor sent twice.
func changes(rule string) bool { return rule != "already-applied" && rule != "repeated" }

// fitsAsWritten reports whether block c's SEARCH is in content as it is
// written, by Codex's passes.
func fitsAsWritten(content []byte, c *patchparse.Chunk) bool {
	p := prepare(c, 0)
	file := textfile.FileText(content).Lines
	cands, _ := seekAll(file, p.old, 0, len(file), p.src.EndOfFile)
	return len(cands) > 0
}

// dotsHint says, of a block that did not fit and holds "..." lines it was
// not split at, how aider's convention reads them.
func dotsHint(c *patchparse.Chunk, dotted bool, err error) error {
	var e *result.Error
	if dotted || !errors.As(err, &e) || e.Code != result.NoMatch {
		return err
	}
	search, replace := 0, 0
	for _, l := range c.Lines() {
		if patchparse.IsDots(c.Text(l)) {
			if l.Op != '+' {
				search++
			}
			if l.Op != '-' {
				replace++
			}
		}
	}
	if search == 0 || search == replace {
		return err
	}
	e.Hints = append([]string{fmt.Sprintf("the SEARCH holds %s and the REPLACE %d: aider's convention reads \"...\" as lines left out only when both hold as many, in the same places; write the lines out, or put the same \"...\" lines in both",
		result.Count(search, `"..." line`), replace)}, e.Hints...)
	return e
}

// inOrderState is what inOrder has made of the blocks before one.
type inOrderState struct {
	cur            []byte
	rules          []string
	cursor         int
	before         lineEdits
	applied, found bool
}
