package apply

// Recovery: a chunk whose context dropped a line of the file or wrote one
// twice.

import (
	"fmt"
	"strings"
)

// distinct drops recoveries whose result (the lines replaced and the lines
// put in their place) equals an earlier one's.
func (lc *locator) distinct(ms []*placed) []*placed {
	if len(ms) < 2 {
		return ms
	}
	var out []*placed
	var keys []string
	for _, m := range ms {
		r, err := lc.build(m)
		if err != nil {
			out = append(out, m)
			keys = append(keys, "")
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d-%d:", r.start, r.end)
		for _, l := range r.lines {
			b.WriteString(l.text)
			b.WriteByte(0)
		}
		k := b.String()
		dup := false
		for _, o := range keys {
			if o == k {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, m)
			keys = append(keys, k)
		}
	}
	return out
}

// alignDropped returns every way the chunk matches at s under pass with
// exactly one file line, strictly inside the match, that the patch left
// out. Such a match is usable only if the left-out line borders a context
// line of the patch and no added line sits at the gap after a context line
// (so the kept line's place is certain); the others are returned marked
// blocked, because they still compete: a chunk that fits one place usably
// and another place only unusably is as ambiguous as one that fits two.
func (lc *locator) alignDropped(p *prepared, s int, pass Pass) []*placed {
	file, old := lc.file, p.old
	m := len(old)
	if m < 2 || s+m+1 > len(file) {
		return nil
	}
	pre := 0
	for pre < m && eq(pass, file[s+pre], old[pre]) {
		pre++
	}
	if pre == m || pre == 0 {
		return nil // a plain match (found before) or none
	}
	var out []*placed
	for k := 1; k <= pre; k++ {
		// file line s+k is the one left out; old[k:] follows it.
		ok := true
		for j := k; j < m; j++ {
			if !eq(pass, file[s+j+1], old[j]) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, &placed{pos: s, pass: pass, skipFile: s + k, skipPat: -1, rule: "dropped-context", chunk: p, blocked: !gapAllowed(p, k)})
		}
	}
	return out
}

// gapAllowed reports whether a file line may be kept between old lines k-1
// and k of the chunk: a context line must be beside it, and added lines at
// the gap only right after a removed line — read as its replacement, the
// kept line after them ("-a +b [kept] c"; a diff that kept the line
// between, "-a [kept] +b c", with that line dropped, is read so too) —
// after a context line they could go on either side of the kept line.
func gapAllowed(p *prepared, k int) bool {
	n, before, after := 0, -1, -1
	for li, l := range p.lines {
		if l.op == '+' {
			continue
		}
		if n == k-1 {
			before = li
		}
		if n == k {
			after = li
		}
		n++
	}
	return before >= 0 && after >= 0 && gapBetween(p, before, after)
}

// gapBetween is gapAllowed for the gap between lines before and after of the
// chunk (old lines, with only added lines between them).
func gapBetween(p *prepared, before, after int) bool {
	if after > before+1 {
		// Added lines at the gap: after a context line the kept line
		// could go on either side of them; after a removed line they
		// are read as its replacement, and the kept line follows them.
		if p.lines[before].op != '-' {
			return false
		}
	}
	return p.lines[before].op == ' ' || p.lines[after].op == ' '
}

// alignDuplicated matches the chunk at s under pass with one of its context
// lines, one that repeats the context line before it, left out (it is not
// in the file).
func (lc *locator) alignDuplicated(p *prepared, s int, pass Pass) []*placed {
	var out []*placed
	for li := 1; li < len(p.lines); li++ {
		l := p.lines[li]
		if l.op != ' ' {
			continue
		}
		prev := p.lines[li-1]
		if prev.op != ' ' || strings.TrimSpace(prev.text) != strings.TrimSpace(l.text) {
			continue // (a context line like the removed line before it is not a copy of it: "-x x" keeps one x)
		}
		fi := s
		ok := true
		for lj, m := range p.lines {
			if lj == li || m.op == '+' {
				continue
			}
			if fi >= len(lc.file) || !eq(pass, lc.file[fi], m.text) {
				ok = false
				break
			}
			fi++
		}
		if ok {
			out = append(out, &placed{pos: s, pass: pass, skipFile: -1, skipPat: li, rule: "duplicated-context", chunk: p})
		}
	}
	return out
}
