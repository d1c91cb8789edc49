package apply

import (
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// Lines copied with the line numbers a read tool printed before them —
// "    12\t" (cat -n, hunk read -n), "    12→" (Claude Code's Read), "12:",
// "L12:", "12|" — are matched without them when every context and removed
// line of the chunk carries one, in one form, numbered upwards (a number
// skipped, or an elision line without one, is lines left out: an elision),
// and the lines then fit the file where the numbers say — exactly, or by
// one recovery (a misremembered line, an elision) that nothing else fits
// as well — or, their numbers stale (the file moved since it was read),
// exactly in one place whatever the numbers say. Added lines
// lose theirs only when every one carries one in the same form (a line the
// model copied and changed); otherwise they are text.

// numberForm is one way of printing a line number before a line.
type numberForm struct {
	prefix string // before the digits ("L"), after leading spaces
	sep    string // after the digits: "\t", "→", ":", "|"
}

var numberForms = []numberForm{{"", "\t"}, {"", "→"}, {"", ":"}, {"L", ":"}, {"", "|"}}

// cut reads a line number in form f at the start of s: the number and the
// text after it (one space after ":" and "|" is part of the prefix).
func (f numberForm) cut(s string) (int, string, bool) {
	t := strings.TrimLeft(s, " ")
	t, ok := strings.CutPrefix(t, f.prefix)
	if !ok {
		return 0, "", false
	}
	i, n := 0, 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' && i < 9 {
		n = n*10 + int(t[i]-'0')
		i++
	}
	if i == 0 || n == 0 {
		return 0, "", false
	}
	if f.sep == "|" || f.sep == ":" {
		t = strings.TrimLeft(t[i:], " ")
	} else {
		t = t[i:]
	}
	rest, ok := strings.CutPrefix(t, f.sep)
	if !ok {
		return 0, "", false
	}
	if f.sep == "|" || f.sep == ":" {
		rest = strings.TrimPrefix(rest, " ")
	}
	return n, rest, true
}

// numbered returns the chunk with its lines' numbers removed, its hint the
// first number, or nil when its lines do not all carry them as above.
func (p *prepared) numbered() *prepared {
	if len(p.old) == 0 {
		return nil
	}
	for _, f := range numberForms {
		first, _, ok := f.cut(p.old[0])
		if !ok {
			continue
		}
		q := *p
		q.lines = make([]cline, 0, len(p.lines))
		q.old = nil
		next := first
		good := true
		for _, l := range p.lines {
			if l.op == '+' {
				q.lines = append(q.lines, l)
				continue
			}
			n, rest, ok := f.cut(l.text)
			switch {
			case ok && n == next:
			case ok && n > next && len(q.old) > 0:
				// Numbers skipped: the lines between were left out, as
				// an elision says it — a recovery's to place, where
				// the numbers say.
				q.lines = append(q.lines, cline{op: ' ', text: "..."})
				q.old = append(q.old, "...")
				q.gapped = true
			case !ok && isElision(l.text) && len(q.old) > 0:
				q.lines = append(q.lines, l)
				q.old = append(q.old, l.text)
				q.gapped = true
				continue
			default:
				good = false
			}
			if !good {
				break
			}
			next = n + 1
			l.text = rest
			q.lines = append(q.lines, l)
			q.old = append(q.old, rest)
		}
		if !good {
			continue
		}
		// Added lines: all numbered in the same form, or left as written.
		all, some := true, false
		for _, l := range p.lines {
			if l.op == '+' {
				if _, _, ok := f.cut(l.text); ok {
					some = true
				} else {
					all = false
				}
			}
		}
		if all && some {
			for i, l := range q.lines {
				if l.op == '+' {
					_, q.lines[i].text, _ = f.cut(l.text)
				}
			}
		}
		q.hint = p.before.moved(first - 1)
		if !hasContext(q.lines) {
			// A SEARCH/REPLACE block whose SEARCH lines carried numbers:
			// the lines it only repeats are context once the numbers are
			// gone (patchparse.BlockLines).
			q.lines, q.guessed = realign(q.lines)
		}
		return &q
	}
	return nil
}

// hasContext reports whether a chunk has context lines.
func hasContext(lines []cline) bool {
	for _, l := range lines {
		if l.op == ' ' {
			return true
		}
	}
	return false
}

// realign makes the lines a chunk's removed and added lines share context
// lines, as patchparse.BlockLines does for a block.
func realign(lines []cline) ([]cline, bool) {
	var search, replace []patchparse.Line
	for i, l := range lines {
		c := patchparse.Line{Op: l.op, EOL: l.eol, Text: l.text, Line: int32(i + 1)}
		if l.op == '-' {
			search = append(search, c)
		} else {
			replace = append(replace, c)
		}
	}
	var out []cline
	aligned, guessed := patchparse.BlockLines(search, replace)
	for _, c := range aligned {
		out = append(out, cline{op: c.Op, eol: c.EOL, text: c.Text})
	}
	return out, guessed
}
