package apply

import "strings"

// aider's repository map shows a file's lines as "│" and the line, and
// the lines it leaves out as "⋮..." (or "⋮"); a model that copies lines
// from the map into a SEARCH copies the marks too.

const (
	mapBar  = "│" // U+2502, before each line the map shows
	mapGap  = "⋮" // U+22EE, the lines it leaves out
	mapDots = "..."
)

// repoMapped returns the chunk with the map's marks taken off — "│" before
// a line, a "⋮..." line an elision ("...", the lines the map left out;
// dropped at either end of the old lines, where it stands for the file
// around the change) — or nil when its old lines are not all a map's
// lines (a "│" line among them, and none without a mark but blank ones).
func (p *prepared) repoMapped() *prepared {
	barred := false
	for _, t := range p.old {
		switch {
		case strings.HasPrefix(t, mapBar):
			barred = true
		case isMapGap(t), strings.TrimSpace(t) == "":
		default:
			return nil
		}
	}
	if !barred {
		return nil
	}
	q := *p
	q.lines, q.old = nil, nil
	for _, l := range p.lines {
		switch {
		case strings.HasPrefix(l.text, mapBar):
			l.text = strings.TrimPrefix(l.text, mapBar)
		case isMapGap(l.text):
			l.text = mapDots
		}
		q.lines = append(q.lines, l)
	}
	if !hasContext(q.lines) {
		// A block: the lines it only repeats are context once the marks
		// are gone (the REPLACE text seldom carries them).
		q.lines, q.guessed = realign(q.lines)
	}
	// An elision at either end of the old lines stands for the file
	// around the change: dropped, with an added line beside it kept.
	for {
		first, last := -1, -1
		for i, l := range q.lines {
			if l.op != '+' {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		switch {
		case first >= 0 && q.lines[first].text == mapDots:
			q.lines = append(q.lines[:first:first], q.lines[first+1:]...)
		case last >= 0 && q.lines[last].text == mapDots:
			q.lines = append(q.lines[:last:last], q.lines[last+1:]...)
		default:
			first = -2
		}
		if first == -2 {
			break
		}
	}
	for _, l := range q.lines {
		if l.op != '+' {
			q.old = append(q.old, l.text)
			q.gapped = q.gapped || l.text == mapDots
		}
	}
	if len(q.old) == 0 {
		return nil
	}
	return &q
}

// isMapGap reports whether t is the map's mark of lines left out.
func isMapGap(t string) bool {
	t = strings.TrimSpace(t)
	return t == mapGap || t == mapGap+mapDots || t == mapGap+"…"
}

// locateRepoMapped places a chunk without its map marks (q): as the strict
// passes find it, or with its elisions standing for the lines the map
// left out (recoverElided), where no other place is as good.
func (lc *locator) locateRepoMapped(q *prepared, cursor int, taken []span, strict func(*prepared) (*placed, error)) (*placed, error) {
	var m *placed
	var err error
	if !q.gapped {
		m, err = strict(q)
	} else if m = lc.recoverElided(q, taken); m != nil && lc.rivalNear(q, m, 0, taken) {
		m = nil
	}
	if m != nil {
		m.rule += ",repo-map-marks"
	}
	return m, err
}
