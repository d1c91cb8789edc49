package apply

// The composer walks one alignment of a chunk with the file for the
// composed recovery (compose.go).

import (
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// credible reports whether an alignment reads as a model's mistakes: each
// line it takes as misremembered is like the file's (a word or two
// changed), or is the file's with something added at an end (a comment
// written after the model read it: "raise" for "raise # changed"), not
// another line.
func (s *composer) credible(a *alignment) bool {
	for _, o := range a.ops {
		if o.kind != opSubst {
			continue
		}
		if s.similarity(o.j, o.i) < minAlike && !grown(s.p.lines[s.items[o.j].li].text, s.lc.file[o.i]) {
			return false
		}
	}
	return true
}

// grown reports whether one of two lines, trimmed, begins or ends the
// other, and has text.
func grown(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return a != "" && (strings.HasPrefix(b, a) || strings.HasSuffix(b, a))
}

// minAlike is how similar a misremembered line must be to the file's for
// a reading that needs it to rival a recovery.
const minAlike = 0.5

// composer is the search of recoverComposed.
type composer struct {
	lc       *locator
	p        *prepared
	items    []composeItem
	maxEdits int
	pos      int
	ops      []alignOp
	found    []*alignment
	steps    int
	bigrams  [][]uint32 // of the items' lines, as needed
}

func (s *composer) over() bool { return s.steps <= 0 || len(s.found) > 256 }

// starts lists the file lines an alignment may start at: near a line
// matching one of the chunk's first lines (before any elision) that is not
// too common in the file.
//
// When the first run of lines (up to an elision) is short enough to be all
// misremembered, its place is also found from the run after the elision:
// as if the elision stood for one line (a longer one gives the same result).
func (s *composer) starts() []int {
	seen := map[int]bool{}
	var out []int
	add := func(from, back int) {
		for j := from; j < len(s.items) && j-from <= s.maxEdits+2; j++ {
			it := s.items[j]
			if it.elision {
				return
			}
			at := s.lc.byNorm[it.norm]
			if it.norm == "" || len(at) > 200 {
				continue
			}
			for _, k := range at {
				for d := -s.maxEdits; d <= s.maxEdits; d++ {
					pos := k - (j - from) - back + d
					if pos >= 0 && pos < len(s.lc.file) && !seen[pos] {
						seen[pos] = true
						out = append(out, pos)
					}
				}
			}
		}
	}
	add(0, 0)
	for j, it := range s.items {
		if it.elision {
			if j <= s.maxEdits {
				add(j+1, j+1)
			}
			break
		}
	}
	sort.Ints(out)
	return out
}

// walk aligns items[j:] from file line i with edits so far.
func (s *composer) walk(j, i, edits int, blocked bool) {
	if s.steps--; s.over() || edits > s.maxEdits {
		return
	}
	lc := s.lc
	if j == len(s.items) {
		s.record(i, edits, blocked)
		return
	}
	it := s.items[j]
	push := func(o alignOp) { s.ops = append(s.ops, o) }
	pop := func() { s.ops = s.ops[:len(s.ops)-1] }
	if it.elision {
		// One file line or more, up to a place where the next line
		// matches, or one of the few after it (the lines between
		// misremembered).
		ends := map[int]bool{}
		for d := 0; d <= s.maxEdits-edits && j+1+d < len(s.items) && !s.items[j+1+d].elision; d++ {
			for _, k := range lc.byNorm[s.items[j+1+d].norm] {
				if k-d > i {
					ends[k-d] = true
				}
			}
		}
		keys := make([]int, 0, len(ends))
		for k := range ends {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			push(alignOp{kind: opElide, j: j, i: i, n: k - i})
			s.walk(j+1, k, edits, blocked)
			pop()
			if s.over() {
				return
			}
		}
		return
	}
	if i < len(lc.file) && lc.norm[i] == it.norm {
		push(alignOp{kind: opMatch, j: j, i: i})
		s.walk(j+1, i+1, edits, blocked)
		pop()
	} else if i < len(lc.file) && !it.removed {
		// Misremembered: the file keeps its own line. Beside the change
		// not a line the chunk repeats or the file has nearby: that is
		// more likely a line out of place, a line of the file left out on
		// the other side of the change.
		// (likerNearby is asked only of a whole alignment: record.)
		push(alignOp{kind: opSubst, j: j, i: i, check: it.fixed})
		s.walk(j+1, i+1, edits+1, blocked || it.fixed && (it.dupPrev || it.dupNext))
		pop()
	}
	last := -1
	if len(s.ops) > 0 {
		last = s.ops[len(s.ops)-1].kind
	}
	if j > 0 && i < len(lc.file) && !s.items[j-1].elision && last != opPatSkip {
		// A file line the chunk left out, kept.
		push(alignOp{kind: opFileSkip, j: j, i: i})
		s.walk(j, i+1, edits+1, blocked || !it.gapOK)
		pop()
	}
	if !it.removed && last != opFileSkip {
		// A context line not in the file: written twice, or invented.
		push(alignOp{kind: opPatSkip, j: j, i: i})
		s.walk(j+1, i, edits+1, blocked || it.fixed && !it.dupPrev)
		pop()
	}
}

// similarity is textfile.Similarity of old line j and file line k, each
// line's bigrams made once.
func (s *composer) similarity(j, k int) float64 {
	l := s.p.lines[s.items[j].li].text
	if s.bigrams == nil {
		s.bigrams = make([][]uint32, len(s.items))
	}
	if s.bigrams[j] == nil {
		s.bigrams[j] = textfile.Bigrams(l)
	}
	return textfile.Similarity(l, s.lc.file[k], s.bigrams[j], s.lc.bigramsOf(k))
}

// likerNearby reports whether a line of the file within nearLines of line
// i reads more like old line j than line i does (and like it at all): the
// line j is more likely a copy of, out of place.
func (s *composer) likerNearby(j, i int) bool {
	here := s.similarity(j, i)
	for k := max(0, i-nearLines); k <= min(len(s.lc.file)-1, i+nearLines); k++ {
		if k != i {
			if o := s.similarity(j, k); o > here && o >= minAlike {
				return true
			}
		}
	}
	return false
}

// nearLines is how close a line of the file must be to be taken for the
// one a misremembered line beside the change really is.
const nearLines = 3

// record keeps the alignment ending before file line end.
func (s *composer) record(end, edits int, blocked bool) {
	a := &alignment{pos: s.pos, end: end, edits: edits, blocked: blocked, ops: append([]alignOp(nil), s.ops...)}
	for _, o := range a.ops {
		if o.check && !a.blocked && s.likerNearby(o.j, o.i) {
			a.blocked = true
		}
		if o.kind == opFileSkip && !s.items[o.j].gapOK {
			a.sides = true
		}
		if o.kind != opMatch {
			continue
		}
		l := s.p.lines[s.items[o.j].li].text
		f := s.lc.file[o.i]
		if strings.TrimSpace(l) != "" {
			a.anchors++
		}
		pass := Exact
		for pass < Unicode && !eq(pass, f, l) {
			pass++
		}
		a.pass = max(a.pass, pass)
	}
	s.found = append(s.found, a)
}
