package edit

import (
	"bytes"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// file is the body of a file being edited (BOM stripped) with what the
// engine learns about it lazily: a big file on the exact path is only ever
// searched with bytes.Index and counted with bytes.Count, never split into
// lines or converted to a string.
type file struct {
	body []byte

	eolDone bool
	hasCR   bool   // the body contains a '\r'
	eol     string // the dominant line ending; "" when the body has no line break

	text *textfile.Text // the line index, built on first use (fuzzy matching, hints)

	fix endFix // decided by the first (whole-body) assemble

	brief bool // no line numbers unless an error needs them (Options.Brief)

	valid    chan error // the result of a concurrent CheckText (startCheck)
	validErr error

	// lineOf's incremental cache
	lastOff, lastLine int
}

func newFile(body []byte) *file { return &file{body: body, lastLine: 1} }

// concurrentCheck is the size from which content is checked to be text
// (textfile.CheckText, a pass over every byte) while the exact search runs.
const concurrentCheck = 1 << 20

// startCheck checks content (the whole file, BOM included) in a goroutine;
// checked waits for the result.
func (f *file) startCheck(name string, content []byte) {
	ch := make(chan error, 1)
	f.valid = ch
	go func() {
		var err error
		defer func() { ch <- err }()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var res *Result
		defer recoverFault(name, &res, &err)
		err = textfile.CheckText(name, content)
	}()
}

// checked returns the result of the text check, waiting for it if needed.
func (f *file) checked() error {
	if f.valid != nil {
		f.validErr = <-f.valid
		f.valid = nil
	}
	return f.validErr
}

// scanEOL finds the dominant line ending with three bytes.Count passes at most.
func (f *file) scanEOL() {
	if f.eolDone {
		return
	}
	f.eolDone = true
	lf := bytes.Count(f.body, []byte{'\n'})
	cr := bytes.Count(f.body, []byte{'\r'})
	f.hasCR = cr > 0
	if cr == 0 {
		if lf > 0 {
			f.eol = "\n"
		}
		return
	}
	crlf := bytes.Count(f.body, []byte("\r\n"))
	f.eol = textfile.EOLCounts{LF: lf - crlf, CRLF: crlf, CR: cr - crlf}.Dominant()
}

// lines returns the body split into lines (built on first use). Its line
// texts view the body in place, which may be a mapped file: lineText copies
// one for anything that outlives the edit.
func (f *file) lines() *textfile.Text {
	if f.text == nil {
		f.text = textfile.SplitText(unsafe.String(unsafe.SliceData(f.body), len(f.body)))
	}
	return f.text
}

// lineBytes is line k's text (0-based, without its ending), in place.
func (f *file) lineBytes(k int) []byte {
	t := f.lines()
	return f.body[t.Start[k]:t.TextEnd(k)]
}

// lineText is line k's text as a string of its own.
func (f *file) lineText(k int) string { return string(f.lineBytes(k)) }

// breaks counts the line breaks in b ("\n", "\r\n", lone "\r"); next is the
// byte that follows b (-1 at the end), so that a CRLF split after its '\r'
// counts once.
func breaks(b []byte, next int) int {
	n := bytes.Count(b, []byte{'\n'})
	if bytes.IndexByte(b, '\r') < 0 {
		return n
	}
	for i, c := range b {
		if c != '\r' {
			continue
		}
		if i+1 < len(b) {
			if b[i+1] != '\n' {
				n++
			}
		} else if next != '\n' {
			n++
		}
	}
	return n
}

// lineOf returns the 1-based line number of byte offset off of the body.
// Calls with growing offsets cost only the bytes between them.
func (f *file) lineOf(off int) int {
	if off < f.lastOff && off > f.lastOff/2 {
		// Count back from the cached offset (see below for a split CRLF).
		next := -1
		if f.lastOff < len(f.body) {
			next = int(f.body[f.lastOff])
		}
		line := f.lastLine - breaks(f.body[off:f.lastOff], next)
		f.lastOff, f.lastLine = off, line
		return line
	}
	from, line := 0, 1
	if off >= f.lastOff {
		from, line = f.lastOff, f.lastLine
	}
	next := -1
	if off < len(f.body) {
		next = int(f.body[off])
	}
	// A CRLF split by off is not counted here (its '\n' is not in the
	// slice), and is counted once by the next call, which starts at off.
	line += breaks(f.body[from:off], next)
	f.lastOff, f.lastLine = off, line
	return line
}

// isLineStart reports whether a line starts at offset i.
func (f *file) isLineStart(i int) bool {
	if i <= 0 || i >= len(f.body) {
		return true
	}
	c := f.body[i-1]
	return c == '\n' || (c == '\r' && f.body[i] != '\n')
}

// lineStart returns the start of the line that contains offset i.
func (f *file) lineStart(i int) int {
	for i > 0 && !f.isLineStart(i) {
		i--
	}
	return i
}

// nextLine returns the start of the line after the one containing offset i
// (len(body) at the end).
func (f *file) nextLine(i int) int {
	k, eol := textfile.NextBreak(f.body[i:])
	if k < 0 {
		return len(f.body)
	}
	return i + k + len(eol)
}

// toEOL rewrites the line breaks of s to the file's dominant ending (no
// change for a file without line breaks, or a text without them).
func (f *file) toEOL(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	f.scanEOL()
	if f.eol == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	t := textfile.SplitText(s)
	for i, l := range t.Lines {
		b.WriteString(l)
		if t.EOLs[i] != "" {
			b.WriteString(f.eol)
		}
	}
	return b.String()
}

// endsWithBreak reports whether b ends with a line break, and its length.
func endsWithBreak(b []byte) (bool, int) {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return true, 2
	case bytes.HasSuffix(b, []byte("\n")), bytes.HasSuffix(b, []byte("\r")):
		return true, 1
	}
	return false, 0
}

// endFix is how the end of the new body differs from a plain splice, so
// that the presence or absence of a final line break is kept as it was.
type endFix struct {
	add  string // a line break to append
	trim int    // bytes of line break to cut
}

// assemble returns the new content of body[from:to] with reps (sorted,
// disjoint, inside the range) applied, as pieces that share memory with the
// body, and whether it differs from the old. A big file is never copied into
// one more buffer. The first call must cover the whole body: it decides the
// end fix that later window calls reuse.
func (f *file) assemble(from, to int, reps []replacement) (parts [][]byte, changed bool) {
	parts = make([][]byte, 0, 2*len(reps)+2)
	at, n := from, 0
	for _, r := range reps {
		if r.start > at {
			parts = append(parts, f.body[at:r.start])
			n += r.start - at
		}
		if len(r.repl) > 0 {
			parts = append(parts, r.repl)
			n += len(r.repl)
		}
		if !bytes.Equal(f.body[r.start:r.end], r.repl) {
			changed = true
		}
		at = r.end
	}
	if to > at {
		parts = append(parts, f.body[at:to])
		n += to - at
	}
	if to != len(f.body) {
		return parts, changed
	}
	if from == 0 && len(reps) > 0 && reps[len(reps)-1].end == len(f.body) && n > 0 && changed {
		had, _ := endsWithBreak(f.body)
		has, k := endsWithBreak(tail(parts, 2))
		switch {
		case had && !has:
			f.scanEOL()
			f.fix.add = f.eol
		case !had && has:
			f.fix.trim = k
		}
	}
	if f.fix.add != "" {
		parts = append(parts, []byte(f.fix.add))
	}
	for k := f.fix.trim; k > 0 && len(parts) > 0; {
		last := parts[len(parts)-1]
		cut := min(k, len(last))
		parts[len(parts)-1] = last[:len(last)-cut]
		k -= cut
		if len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1]
		}
	}
	if changed && from == 0 && (f.fix.add != "" || f.fix.trim > 0) {
		// The fix may undo the only change (an edit that just dropped the
		// final line break, which the fix puts back).
		changed = !sameAs(parts, f.body)
	}
	return parts, changed
}

// sameAs reports whether the concatenation of parts equals body. A part
// that is body's own memory at its own offset is equal without a look.
func sameAs(parts [][]byte, body []byte) bool {
	off := 0
	for _, p := range parts {
		if len(p) > len(body)-off {
			return false
		}
		if len(p) > 0 && &p[0] != &body[off] && !bytes.Equal(p, body[off:off+len(p)]) {
			return false
		}
		off += len(p)
	}
	return off == len(body)
}

// tail returns the last n bytes of the concatenation of parts.
func tail(parts [][]byte, n int) []byte {
	var t []byte
	for i := len(parts) - 1; i >= 0 && len(t) < n; i-- {
		p := parts[i]
		if k := n - len(t); len(p) > k {
			p = p[len(p)-k:]
		}
		t = append(append([]byte{}, p...), t...)
	}
	return t
}

func join(parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// firstChangedLine is the first line of the new body whose text differs.
func (f *file) firstChangedLine(reps []replacement) int {
	for _, r := range reps {
		old := f.body[r.start:r.end]
		if bytes.Equal(old, r.repl) {
			continue
		}
		cp := 0
		for cp < len(old) && cp < len(r.repl) && old[cp] == r.repl[cp] {
			cp++
		}
		next := -1
		if cp < len(r.repl) {
			next = int(r.repl[cp])
		}
		return f.lineOf(r.start) + breaks(r.repl[:cp], next)
	}
	// Only the final line break changed.
	return f.lineOf(len(f.body))
}

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// diff returns a unified diff of the change, computed only over windows
// around the replaced places (so a big file costs no more than its edits).
func (f *file) diff(name string, reps []replacement) string {
	type window struct {
		start, end  int // in the old body
		first, last int // reps[first:last]
	}
	var wins []window
	for i, r := range reps {
		ws := f.lineStart(r.start)
		for k := 0; k < diffContext && ws > 0; k++ {
			ws = f.lineStart(ws - 1)
		}
		we := r.end
		if !(we > r.start && f.isLineStart(we)) {
			we = f.nextLine(we)
		}
		for k := 0; k < diffContext && we < len(f.body); k++ {
			we = f.nextLine(we)
		}
		if n := len(wins); n > 0 && ws <= wins[n-1].end {
			wins[n-1].end = max(wins[n-1].end, we)
			wins[n-1].last = i + 1
			continue
		}
		wins = append(wins, window{ws, we, i, i + 1})
	}
	var b strings.Builder
	b.WriteString("--- a/" + name + "\n+++ b/" + name + "\n")
	lineDelta := 0
	for _, w := range wins {
		oldLine := f.lineOf(w.start)
		gLines := 0
		for _, r := range reps[w.first:w.last] {
			gLines += breaks(r.repl, -1) - breaks(f.body[r.start:r.end], -1)
		}
		parts, _ := f.assemble(w.start, w.end, reps[w.first:w.last])
		d := diff.Unified("a", "b", f.body[w.start:w.end], join(parts))
		b.WriteString(shiftHunks(d, oldLine-1, oldLine+lineDelta-1))
		lineDelta += gLines
	}
	return b.String()
}

// shiftHunks drops the file headers of a unified diff and adds the given
// line offsets to its hunk headers.
func shiftHunks(d string, oldOff, newOff int) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(d, "\n") {
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
			continue
		case strings.HasPrefix(l, "@@ -"):
			b.WriteString(shiftHeader(l, oldOff, newOff))
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}

// shiftHeader rewrites "@@ -a[,b] +c[,d] @@" with a+oldOff and c+newOff.
func shiftHeader(l string, oldOff, newOff int) string {
	fields := strings.Fields(l)
	if len(fields) < 4 {
		return l
	}
	shift := func(f string, sign byte, off int) string {
		if len(f) < 2 || f[0] != sign {
			return f
		}
		num, rest, _ := strings.Cut(f[1:], ",")
		n, err := strconv.Atoi(num)
		if err != nil {
			return f
		}
		s := string(sign) + strconv.Itoa(n+off)
		if rest != "" {
			s += "," + rest
		}
		return s
	}
	return "@@ " + shift(fields[1], '-', oldOff) + " " + shift(fields[2], '+', newOff) + " @@\n"
}
