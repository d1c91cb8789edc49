package apply

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// The composed recovery: the mistakes the single recoveries undo one at a
// time (a context line misremembered, a file line left out, a context line
// written twice or invented, a run of lines elided, whitespace and
// punctuation drift), any number of them at once in one chunk. Each is an
// edit of an alignment between the chunk's old lines and a run of file
// lines; the alignment with the fewest edits is taken when it is the only
// one with so few (one result, however reached) and no other alignment,
// anywhere in the file, comes within one edit of it. Removed lines always
// match (leniently); each edit must rest on two matched lines with text,
// and three at least.

// composeMaxEdits bounds the edits searched for (one more than the most a
// chunk may carry, so that rivals are seen).
const composeMaxEdits = 4

// composeBudget bounds the search (alignment steps) for one chunk; a chunk
// whose search runs past it is not recovered.
const composeBudget = 400_000

// edit kinds of a composed alignment
const (
	opMatch    = iota // old line j is file line i
	opSubst           // context line j stands for file line i (misremembered)
	opFileSkip        // file line i is not in the chunk (left out)
	opPatSkip         // context line j is not in the file (written twice, invented)
	opElide           // elision j stands for file lines [i, i+n)
)

type alignOp struct {
	kind, j, i, n int
	check         bool // a misremembered line beside the change: see likerNearby
}

// alignment is one way the chunk's old lines fit a run of file lines.
type alignment struct {
	pos, end int
	edits    int
	pass     Pass // the most lenient pass a matched line needed
	anchors  int  // matched lines with text
	blocked  bool // an edit where the result would be uncertain (beside the change)
	sides    bool // a file line left out where the added lines could go on either side of it
	ops      []alignOp
}

// composeItem is an old line of the chunk as the search sees it.
type composeItem struct {
	li      int    // index into the chunk's lines
	norm    string // trimmed, punctuation folded
	removed bool
	elision bool
	fixed   bool // beside an added or removed line: never substituted or skipped
	gapOK   bool // a file line may be left out right before this one
	dupPrev bool // repeats the line before it
	dupNext bool // the line after it repeats it
}

// normLine is a line as the most lenient pass compares it: trimmed, Codex's
// punctuation folded (bytes that are not UTF-8 kept as they are).
func normLine(s string) string {
	s = strings.TrimSpace(s)
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for s != "" {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 {
			b.WriteByte(s[0])
		} else {
			b.WriteRune(fold(r))
		}
		s = s[n:]
	}
	return b.String()
}

// recoverComposed places a chunk by the composed recovery; nil when no
// alignment qualifies.
func (lc *locator) recoverComposed(p *prepared, taken []span) *placed {
	s, kept, maxEdits := lc.alignments(p, taken, -1)
	if len(kept) == 0 {
		return nil
	}
	sort.SliceStable(kept, func(x, y int) bool { return kept[x].edits < kept[y].edits })
	// One result among the fewest edits and those one more: an alignment
	// of it with the fewest edits and none of them blocked is taken.
	// The readings with the fewest edits must agree; a reading with one
	// edit more that changes other lines (another place) is a rival too.
	least := kept[0].edits
	var chosen *placed
	var chosenAt *alignment
	var key resultKey
	type rival struct {
		k resultKey
		a *alignment
	}
	var rivals []rival
	var sure *alignment
	for _, a := range kept {
		if a.edits > least+1 {
			break
		}
		m := lc.composedPlaced(s, a)
		k, ok := lc.resultOf(m)
		switch {
		case !ok && a.edits == least:
			return nil // a reading that cannot be built (its indentation undecided)
		case a.edits == least && a.sides:
			return nil // a reading with two results, one not built
		case !ok:
			continue
		case a.edits > least && chosen != nil && chosenAt.blocked && !a.blocked && k.text == key.text:
			// The fewest edits' readings are uncertain beside the
			// change (a line taken for misremembered or invented that
			// may be a file line left out); this one, with one more,
			// reads it so and gives their result.
			if sure == nil {
				sure = a
			}
			continue
		case a.edits > least:
			if p.hint < 0 || abs(a.pos-p.hint) <= abs(kept[0].pos-p.hint) {
				rivals = append(rivals, rival{k, a}) // (one farther from the header's line number is none)
			}
			continue
		case chosen != nil && k.text != key.text:
			return nil // two readings as likely: refused, with the closest place named
		}
		if chosen == nil {
			key = k
		}
		if chosen == nil || chosenAt.blocked && !a.blocked || chosenAt.blocked == a.blocked && a.anchors > chosenAt.anchors {
			chosen, chosenAt = m, a // (of readings with one result, the one that finds the most lines as written)
		}
	}
	if chosen != nil && chosenAt.blocked && sure != nil {
		chosen, chosenAt = lc.composedPlaced(s, sure), sure
	}
	if chosen == nil || chosenAt.blocked {
		return nil
	}
	matched := map[int]bool{} // the chunk's lines the taken reading finds as written
	for _, o := range chosenAt.ops {
		if o.kind == opMatch {
			matched[o.j] = true
		}
	}
	for _, r := range rivals {
		if r.k.text != key.text && (r.k.end <= key.start || key.end <= r.k.start) && !missesWhatMatches(r.a, matched) {
			return nil // another place comes close
		}
	}
	if least == 0 && !hasElision(chosenAt) {
		return nil // a plain match: the passes decide those
	}
	if chosenAt.edits > maxEdits || (chosenAt.anchors < 3 || chosenAt.anchors < 2*chosenAt.edits+1) && !lc.shortSubst(s, chosenAt) {
		return nil
	}
	if chosen.pass >= Trim {
		// Lines matched whatever their indentation: the context's must
		// still follow one shift, or a line may be matched to its like
		// one level off (a "}" for another "}").
		if _, ok, _ := lc.indentShift(chosen, ' '); !ok {
			return nil
		}
	}
	return chosen
}

// alignments returns the composed alignments of the chunk with at most
// limit edits (one more than a chunk may carry when limit < 0, and then
// also that most), none overlapping taken; nil when the chunk cannot be
// aligned or the search runs past its budget.
func (lc *locator) alignments(p *prepared, taken []span, limit int) (*composer, []*alignment, int) {
	var items []composeItem
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		beside := li > 0 && p.lines[li-1].op != ' ' || li+1 < len(p.lines) && p.lines[li+1].op != ' '
		it := composeItem{li: li, norm: normLine(l.text), removed: l.op == '-', fixed: l.op == '-' || beside}
		if l.op == ' ' && isElision(l.text) {
			if beside {
				return nil, nil, 0 // the run it stands for could end on either side of the change
			}
			it.elision = true
		}
		items = append(items, it)
	}
	// Elisions first or last say nothing: dropped.
	for len(items) > 0 && items[0].elision {
		items = items[1:]
	}
	for len(items) > 0 && items[len(items)-1].elision {
		items = items[:len(items)-1]
	}
	nonBlank := 0
	for k := range items {
		if items[k].elision && items[k-1].elision {
			return nil, nil, 0
		}
		if !items[k].elision && items[k].norm != "" {
			nonBlank++
		}
		items[k].gapOK = k > 0 && gapBetween(p, items[k-1].li, items[k].li)
		items[k].dupPrev = k > 0 && !items[k].removed && !items[k-1].removed && items[k].norm == items[k-1].norm
		items[k].dupNext = k+1 < len(items) && items[k].norm == items[k+1].norm
	}
	// Each edit rests on two matched lines with text (one more for the
	// first); one more edit is searched for, to see the best's rivals.
	maxEdits := min((nonBlank-1)/2, composeMaxEdits-1)
	if limit < 0 {
		if maxEdits < 1 && !slices.ContainsFunc(items, func(it composeItem) bool { return it.elision }) {
			return nil, nil, 0
		}
		limit = maxEdits + 1
	}
	if len(items) == 0 {
		return nil, nil, 0
	}
	lc.index()
	s := &composer{lc: lc, p: p, items: items, steps: composeBudget, maxEdits: limit}
	floor := lc.floor(p)
	for _, pos := range s.starts() {
		if pos < floor {
			continue
		}
		s.pos = pos
		s.walk(0, pos, 0, false)
		if s.over() {
			return nil, nil, 0
		}
	}
	var kept []*alignment
	for _, a := range s.found {
		if overlaps(taken, span{a.pos, a.end}) || p.src.EndOfFile && a.end != len(lc.file) {
			continue
		}
		kept = append(kept, a)
	}
	return s, kept, maxEdits
}

// rivalNear reports whether the chunk, placed as m by a recovery of edits
// edits, also fits with one edit more another place (one that leaves m's
// lines alone), or m's place another way under a stricter pass (a removed
// " x" matched to "x" ignoring whitespace, where another reading removes
// " x" as written): a reading as likely, for all the recovery knows.
func (lc *locator) rivalNear(p *prepared, m *placed, edits int, taken []span) bool {
	mk, ok := lc.resultOf(m)
	if !ok {
		return false
	}
	s, kept, _ := lc.alignments(p, taken, edits+1)
	if s == nil {
		return false // (a chunk the search cannot align, as before it)
	}
	loose := lc.looseRemoved(m)
	for _, a := range kept {
		if !s.credible(a) || p.hint >= 0 && abs(a.pos-p.hint) > abs(m.pos-p.hint) {
			continue // (a place farther from the line number the header gives is no rival)
		}
		am := lc.composedPlaced(s, a)
		k, ok := lc.resultOf(am)
		if !ok {
			// Another place whose added lines' indentation is
			// undecided is a place still.
			k = resultKey{start: a.pos, end: a.end, text: "\x00"}
			if !(a.end <= m.pos || m.pos+m.matchLen() <= a.pos) {
				continue
			}
		}
		if k.text != mk.text && (k.end <= mk.start || mk.end <= k.start || lc.looseRemoved(am) < loose) {
			return true // (at the same place, a reading whose removed lines match more strictly is one too)
		}
	}
	return false
}

// looseRemoved counts the removed lines of a placed chunk that match their
// file lines only with indentation ignored.
func (lc *locator) looseRemoved(m *placed) int {
	n := 0
	lc.eachOld(m, func(l cline, fi int) bool {
		if l.op == '-' && !eq(Rstrip, lc.file[fi], l.text) {
			n++
		}
		return true
	})
	return n
}

// missesWhatMatches reports whether rival r's every mistake is a line of
// the chunk it reads as misremembered or invented that the taken reading
// finds as written (matched): a rival (one mistake more than the fewest)
// whose every mistake explains away a line the taken place has is none.
func missesWhatMatches(r *alignment, matched map[int]bool) bool {
	for _, o := range r.ops {
		switch {
		case o.kind == opMatch:
		case (o.kind == opSubst || o.kind == opPatSkip) && matched[o.j]:
		default:
			return false
		}
	}
	return true
}

// bigramsOf returns textfile.Bigrams of file line k, made once.
func (lc *locator) bigramsOf(k int) []uint32 {
	if lc.bigrams == nil {
		lc.bigrams = make([][]uint32, len(lc.file))
	}
	if lc.bigrams[k] == nil {
		lc.bigrams[k] = textfile.Bigrams(lc.file[k])
		if lc.bigrams[k] == nil {
			lc.bigrams[k] = []uint32{}
		}
	}
	return lc.bigrams[k]
}

// index makes the file's lines as the most lenient pass compares them, and
// where each occurs.
func (lc *locator) index() {
	if lc.norm != nil {
		return
	}
	lc.norm = make([]string, len(lc.file))
	lc.byNorm = make(map[string][]int, len(lc.file))
	for i, l := range lc.file {
		lc.norm[i] = normLine(l)
		lc.byNorm[lc.norm[i]] = append(lc.byNorm[lc.norm[i]], i)
	}
}

func hasElision(a *alignment) bool {
	for _, o := range a.ops {
		if o.kind == opElide {
			return true
		}
	}
	return false
}

// composedPlaced makes the placed chunk of an alignment: the chunk's lines
// as the file has them — context the file keeps (misremembered, left out,
// elided) taken from the file and marked filled, context lines not in the
// file dropped, added lines where the chunk puts them.
func (lc *locator) composedPlaced(s *composer, a *alignment) *placed {
	p := s.p
	q := *p
	q.lines, q.old = nil, nil
	next := 0 // the next line of p whose added lines are still to come
	upTo := func(li int) {
		for ; next < li; next++ {
			if p.lines[next].op == '+' {
				q.lines = append(q.lines, p.lines[next])
			}
		}
	}
	fill := func(i int) {
		q.lines = append(q.lines, lc.filledLine(i))
		q.old = append(q.old, lc.file[i])
	}
	var notes []string
	for _, o := range a.ops {
		li := s.items[o.j].li
		upTo(li)
		switch o.kind {
		case opMatch:
			q.lines = append(q.lines, p.lines[li])
			q.old = append(q.old, p.lines[li].text)
		case opSubst:
			fill(o.i)
			notes = append(notes, fmt.Sprintf("misremembered-context(line %d kept)", o.i+1))
		case opFileSkip:
			fill(o.i)
			notes = append(notes, fmt.Sprintf("dropped-context(line %d kept)", o.i+1))
			continue // the line before item j, which is still to come
		case opPatSkip:
			notes = append(notes, "extra-context")
		case opElide:
			for k := o.i; k < o.i+o.n; k++ {
				fill(k)
			}
			notes = append(notes, fmt.Sprintf("elided-context(lines %d-%d)", o.i+1, o.i+o.n))
		}
		next = li + 1
	}
	upTo(len(p.lines))
	rule := a.pass.String() + ",composed"
	if len(notes) > 0 {
		rule += "," + strings.Join(notes, ",")
	}
	return &placed{pos: a.pos, pass: a.pass, skipFile: -1, skipPat: -1, chunk: &q, rule: rule}
}

// filledLine is file line i as a context line of a chunk, taken from the
// file by a recovery (filled: its indentation says nothing of the chunk's).
func (lc *locator) filledLine(i int) cline {
	return cline{op: ' ', eol: endingOf(lc.eols[i]), text: lc.file[i], filled: true}
}

// resultKey is what a placed chunk makes of the file, whatever lines it
// covers: the lines replaced and put in their place, less the file's own
// lines at either end.
type resultKey struct {
	start, end int
	text       string
}

func (lc *locator) resultOf(m *placed) (resultKey, bool) {
	c := *m // (build notes how it indented in the rule)
	r, err := lc.build(&c)
	if err != nil {
		return resultKey{}, false
	}
	lines := r.lines
	for r.start < r.end && len(lines) > 0 && lines[0].text == lc.file[r.start] {
		lines, r.start = lines[1:], r.start+1
	}
	for r.start < r.end && len(lines) > 0 && lines[len(lines)-1].text == lc.file[r.end-1] {
		lines, r.end = lines[:len(lines)-1], r.end-1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d-%d:", r.start, r.end)
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte(0)
	}
	return resultKey{r.start, r.end, b.String()}, true
}

// shortSubst reports whether a short chunk's one mistake is a line it
// only repeats (context, kept as the file has it), misremembered as a
// line like the file's there, beside two matched lines with text: a
// three-line block whose third line is misspelt. Two anchors are too few
// for the general rule, which wants every edit to rest on more; here the
// mistake changes nothing written and the line written resembles the one
// it stands for.
func (lc *locator) shortSubst(s *composer, a *alignment) bool {
	if a.edits != 1 || a.anchors != 2 {
		return false
	}
	for _, o := range a.ops {
		if o.kind == opSubst {
			return s.similarity(o.j, o.i) >= minAlike
		}
	}
	return false
}
