package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
)

// recover tries, after Codex's passes found nothing, the mistakes models
// make that leave the place and the result still uniquely determined: one
// context line dropped from the patch, or one context line written twice.
// Lines are compared pass by pass as Codex does (exact, then trailing
// whitespace, then surrounding whitespace, then Unicode punctuation), so
// these combine with whitespace drift; the first pass that allows any
// recovery decides, and within it the recovery must be unique — one place
// (after the cursor, or else anywhere) and one way of aligning the lines
// (several that give the same result count as one). Otherwise the chunk is
// AMBIGUOUS. It returns nil, nil when no recovery fits.
func (lc *locator) recover(p *prepared, cursor int, taken []span) (*placed, error) {
	return lc.recoverBelow(p, cursor, taken, numPasses)
}

// recoverBelow is recover with the passes before below only.
func (lc *locator) recoverBelow(p *prepared, cursor int, taken []span, below Pass) (*placed, error) {
	floor := lc.floor(p)
	if p.src.Context != "" {
		// The chunk says where it goes (its @@ line),
		// which the plain passes could not use: a recovery after the
		// cursor may be in another function than the one meant (chunks
		// out of order), so it must be unique in the whole file (after
		// the first line that reads as the @@ line).
		cursor = floor
	}
	for pass := Exact; pass < below; pass++ {
		for round, from := range []int{cursor, floor} {
			to := len(lc.file)
			if round == 1 {
				if cursor == floor {
					break
				}
				to = cursor
			}
			var found []*placed
			for s := from; s < to && len(found) < maxCandidates; s++ {
				found = append(found, lc.alignDropped(p, s, pass)...)
				found = append(found, lc.alignDuplicated(p, s, pass)...)
			}
			kept := found[:0]
			for _, m := range found {
				if overlaps(taken, span{m.pos, m.pos + m.matchLen()}) {
					continue
				}
				if p.src.EndOfFile && m.pos+m.matchLen() != len(lc.file) {
					continue
				}
				kept = append(kept, m)
			}
			found = lc.distinct(kept)
			switch {
			case len(found) == 1 && found[0].blocked:
				// The only way the chunk fits leaves the kept line's place
				// (or whether it is kept) open: no recovery.
				return nil, nil
			case len(found) == 1:
				if round == 1 {
					found[0].rule += ",out-of-order"
				}
				return found[0], nil
			case len(found) > 1:
				cands := make([]int, 0, len(found))
				for _, m := range found {
					if len(cands) == 0 || cands[len(cands)-1] != m.pos {
						cands = append(cands, m.pos)
					}
				}
				if len(cands) == 1 {
					return nil, result.Errorf(result.Ambiguous,
						"%s: %s %d (patch line %d) fits line %d only if a line of the file the patch leaves out is kept, and that fits more than one way; refusing to guess",
						lc.opt.display(lc.name), lc.opt.unit(), p.n, p.src.Line, cands[0]+1).
						WithHint("copy the context lines exactly as the file has them, without leaving any out").
						At(lc.name).InChunk(p.n, p.src.Line).WithDetail("lines", []int{cands[0] + 1})
				}
				return nil, lc.ambiguous(p, cands)
			}
		}
	}
	return nil, nil
}

// noMatch is Codex's "Failed to find expected lines" with a hint naming the
// region of the file that comes closest.
func (lc *locator) noMatch(p *prepared) *result.Error {
	e := result.Errorf(result.NoMatch, "Failed to find expected lines in %s:\n%s", lc.opt.display(lc.name), strings.Join(p.old, "\n")).
		At(lc.name).InChunk(p.n, p.src.Line)
	if c, ok := closest(lc.file, p.old); ok {
		h := fmt.Sprintf("closest match at line %d (%d%% similar)", c.line+1, c.percent)
		if c.diffAt >= 0 {
			h += fmt.Sprintf(": line %d has %q where the patch expects %q", c.line+c.diffAt+1, lc.file[c.line+c.diffAt], p.old[c.diffAt])
		}
		e.WithHint(h)
		e.WithDetail("closest", map[string]any{"line": c.line + 1, "similarity": c.percent})
	} else {
		e.WithHint("no region of the file resembles these lines; read the file again before patching it")
	}
	return e
}

// fitsFile reports whether every added line of the placed chunk, indented
// by shift, takes an indentation the file has around the chunk (two lines
// either side included).
func (lc *locator) fitsFile(m *placed, shift func(string) (string, bool)) bool {
	have := map[string]bool{}
	for i := max(0, m.pos-2); i < min(len(lc.file), m.pos+m.matchLen()+2); i++ {
		if strings.TrimSpace(lc.file[i]) != "" {
			have[indentOf(lc.file[i])] = true
		}
	}
	for _, l := range m.chunk.lines {
		if l.op != '+' || strings.TrimSpace(l.text) == "" {
			continue
		}
		if t, ok := shift(l.text); !ok || !have[indentOf(t)] {
			return false
		}
	}
	return true
}

// framesConflict reports whether a chunk's added lines are written in its
// context's frame while its removed lines are in the file's: a context line
// the file indents otherwise by d, and an added line indented d off the
// removed line it follows. The model re-indented its replacement around
// what it believed of the context (SEARCH "if x:" at 8 where the file has
// 4, REPLACE its body at 12): written as given the body would sit 8 under
// the file's "if x:", shifted it would not replace the removed line where
// it is — broken code either way.
func (lc *locator) framesConflict(m *placed) bool {
	drift := map[int]bool{}
	fi := m.pos // as eachOld walks the file beside the chunk's old lines
	for j, l := range m.chunk.lines {
		if j == m.skipPat || l.op == '+' {
			continue
		}
		if fi == m.skipFile {
			fi++
		}
		if l.op == ' ' && strings.TrimSpace(l.text) != "" && fi < len(lc.file) {
			if d := len(indentOf(l.text)) - len(indentOf(lc.file[fi])); d != 0 {
				drift[d] = true
			}
		}
		fi++
	}
	removed := -1
	for _, l := range m.chunk.lines {
		switch {
		case strings.TrimSpace(l.text) == "":
		case l.op == '-':
			removed = len(indentOf(l.text))
		case l.op == '+' && removed >= 0:
			if d := len(indentOf(l.text)) - removed; d != 0 && drift[d] {
				return true
			}
		}
	}
	return false
}

// asGiven is addedFrame's rule for a chunk whose removed lines say nothing
// of indentation.
func (lc *locator) asGiven(m *placed) (ok bool, why string) {
	var removed []string
	asWritten := lc.eachOld(m, func(l cline, fi int) bool {
		if l.op == '-' {
			removed = append(removed, l.text)
			return fi < len(lc.file) && eq(Rstrip, lc.file[fi], l.text)
		}
		return true
	})
	switch {
	case !asWritten:
		return false, "its removed lines' indentation differs from the file's too"
	case len(removed) == 0:
		return false, "it removes no line, so nothing shows whether the added lines drifted with the context"
	}
	// The added lines indent with characters the file uses there (tabs,
	// spaces), when it indents at all.
	var chars string
	lc.eachOld(m, func(_ cline, fi int) bool {
		if strings.TrimSpace(lc.file[fi]) != "" {
			for _, c := range indentOf(lc.file[fi]) {
				if !strings.ContainsRune(chars, c) {
					chars += string(c)
				}
			}
		}
		return true
	})
	for _, l := range m.chunk.lines {
		if l.op == '+' && chars != "" && strings.Trim(indentOf(l.text), chars) != "" {
			return false, "its added lines indent with other characters than the file's"
		}
	}
	shift, ok, _ := lc.indentShift(m, ' ')
	if !ok {
		return false, "its removed lines are not indented, so nothing shows whether the added lines drifted with the context"
	}
	differ := false
	for _, l := range m.chunk.lines {
		if l.op != '+' {
			continue
		}
		got, ok := shift(l.text)
		if !ok {
			return true, "" // the context's shift cannot apply to the added lines
		}
		differ = differ || got != l.text
	}
	if !differ {
		return true, ""
	}
	for _, r := range removed {
		if got, ok := shift(r); strings.TrimSpace(r) != "" && (!ok || got != r) {
			return true, "" // a removed line the shift would have moved did not move
		}
	}
	return false, "its removed lines are blank or unindented, so nothing shows whether the added lines drifted with the context"
}

// endingOf is the patch Ending of a file line's ending.
func endingOf(eol string) patchparse.Ending {
	switch eol {
	case "\n":
		return patchparse.LF
	case "\r\n":
		return patchparse.CRLF
	}
	return patchparse.Unknown
}

// floor is the first line a recovery of the chunk may start at: after the
// first line of the file that reads as its @@ context line (a place above
// that line cannot be below it), or 0.
func (lc *locator) floor(p *prepared) int {
	if p.src.Context == "" {
		return 0
	}
	if i, _ := seekFirst(lc.file, []string{strings.TrimSuffix(p.src.Context, "\r")}, 0, false); i >= 0 {
		return i + 1
	}
	return 0
}

// otherReading reports whether the chunk fits somewhere, under pass or a
// stricter one, with a line of the file left out or a line of its own
// written twice — a reading that rivals a misremembered line (the same
// chunk shifted by a line can differ from the file in one line only).
func (lc *locator) otherReading(p *prepared, pass Pass) bool {
	for q := Exact; q <= pass; q++ {
		for s := 0; s < len(lc.file); s++ {
			if len(lc.alignDropped(p, s, q)) > 0 || len(lc.alignDuplicated(p, s, q)) > 0 {
				return true
			}
		}
	}
	return false
}

// eachOld calls f with each old line (context or removed) of the placed
// chunk and the index of the file line it matched, skipping the file line
// the chunk left out and the patch line it wrote twice; it stops, and
// returns false, when f does.
func (lc *locator) eachOld(m *placed, f func(l cline, fi int) bool) bool {
	fi := m.pos
	for j, l := range m.chunk.lines {
		if j == m.skipPat || l.op == '+' {
			continue
		}
		if fi == m.skipFile {
			fi++
		}
		if !f(l, fi) {
			return false
		}
		fi++
	}
	return true
}
