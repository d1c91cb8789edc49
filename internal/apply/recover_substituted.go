package apply

// Recovery: a chunk whose context lines were rewritten (a line the model
// misremembered), placed by the lines around it.

import (
	"fmt"
	"strings"
)

// minSubstituted is the fewest old lines a chunk needs for one of its
// context lines to be taken as misremembered — one line in four at most —
// and, less one, the fewest with text (blank lines place nothing).
const minSubstituted = 4

// recoverSubstituted places a chunk whose old lines all match but one
// context line — a line the model misremembered; never a removed line, nor
// a context line beside the change — when that is true of one place in the
// file and no other place comes close (differs in two lines at most, the
// same lines fixed). The file
// keeps its own text for that line, as for any context line. Tried after
// every other way, pass by pass; nil when it does not apply.
func (lc *locator) recoverSubstituted(p *prepared, taken []span) *placed {
	old := p.old
	if len(old) < minSubstituted || len(old) > len(lc.file) {
		return nil
	}
	nonBlank := 0
	for _, l := range old {
		if strings.TrimSpace(l) != "" {
			nonBlank++
		}
	}
	if nonBlank-1 < minSubstituted-1 {
		return nil // the place would rest on too few lines with text
	}
	// fixed[j]: old line j may not be the substituted one — a removed
	// line, or a context line beside an added or removed line (where a
	// misaligned chunk would put the change on the wrong side of it).
	fixed := make([]bool, 0, len(old))
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		f := l.op == '-'
		if li > 0 && p.lines[li-1].op != ' ' || li+1 < len(p.lines) && p.lines[li+1].op != ' ' {
			f = true
		}
		fixed = append(fixed, f)
	}
	for pass := Exact; pass < numPasses; pass++ {
		var one, at []int
		close := 0
		for s := lc.floor(p); s+len(old) <= len(lc.file); s++ {
			if p.src.EndOfFile && s+len(old) != len(lc.file) {
				continue
			}
			miss, bad, missAt := 0, false, -1
			for j := range old {
				if eq(pass, lc.file[s+j], old[j]) {
					continue
				}
				// A fixed line that differs rules the place out, but a
				// place that close (the file changed beside the change
				// since the model read it) is still a rival.
				bad = bad || fixed[j]
				if miss++; miss > 2 {
					break
				}
				missAt = s + j
			}
			if miss == 0 || miss > 2 || overlaps(taken, span{s, s + len(old)}) {
				continue
			}
			if miss == 1 && !bad {
				one, at = append(one, s), append(at, missAt)
			} else {
				close++
			}
		}
		switch {
		case len(one) == 1 && close == 0 && !lc.otherReading(p, pass):
			// The line is the file's: filled, so that its indentation says
			// nothing of the chunk's.
			q := *p
			q.lines = append([]cline(nil), p.lines...)
			j := at[0] - one[0]
			for li := range q.lines {
				if q.lines[li].op == '+' {
					continue
				}
				if j == 0 {
					q.lines[li] = lc.filledLine(at[0])
					break
				}
				j--
			}
			q.old = append([]string(nil), p.old...)
			q.old[at[0]-one[0]] = lc.file[at[0]]
			return &placed{pos: one[0], pass: pass, skipFile: -1, skipPat: -1, chunk: &q,
				rule: fmt.Sprintf("%s,substituted-context(line %d kept)", pass, at[0]+1)}
		case len(one) > 0 || close > 0:
			return nil // near several places: refused with the closest one named
		}
	}
	return nil
}
