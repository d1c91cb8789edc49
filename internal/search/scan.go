package search

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// chunk is how much of a file is read at a time: a search's memory is
// bounded by it (and by the longest line), whatever the file's size.
const chunk = 256 << 10

// maxLine bounds a line held whole; a longer one is searched in pieces of
// this size (a match across a piece's edge is missed).
const maxLine = 16 << 20

// maxMultiline bounds a file searched whole for a multi-line pattern.
const maxMultiline = 64 << 20

// binaryProbe is how much of a file's start a NUL byte marks it binary
// in (git's rule): such a file is skipped.
const binaryProbe = 8000

// errBinary marks a binary file: not searched, not reported.
var errBinary = errors.New("binary file")

// scanFile searches one file, read through the workspace.
func scanFile(ws *workspace.Batch, name string, m *matcher, o *Options) fileResult {
	f, err := ws.Open(name)
	if err != nil {
		return fileResult{err: err}
	}
	defer f.Close()
	if o.MaxFilesize > 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > o.MaxFilesize {
			return fileResult{err: tooBig(fmt.Sprintf("%d bytes, over the %s bound (--max-filesize): not searched", fi.Size(), sizeText(o.MaxFilesize)))}
		}
	}
	s := &scanner{name: name, m: m, o: o}
	if m.multiline {
		err = s.whole(f)
	} else {
		err = s.stream(f)
	}
	if errors.Is(err, errBinary) {
		return fileResult{}
	}
	return fileResult{lines: s.lines, count: s.count, err: err}
}

// tooBig is a file a bound left out: said with the results (Limits), not
// among the files that could not be read.
type tooBig string

func (e tooBig) Error() string { return string(e) }

// sizeText is n bytes as a person writes it (1 GiB, 512 MiB, 1000 bytes).
func sizeText(n int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// scanner is one file's search.
type scanner struct {
	name  string
	m     *matcher
	o     *Options
	lines []Match
	count int

	line    int      // number of the last line seen
	before  [][]byte // the last o.Before lines, oldest first (copies)
	after   int      // context lines still to show after a match
	shownTo int      // the last line number added to lines
}

// buffers are the scanners' chunk buffers, reused: a search allocates a
// few, not one per file.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, chunk); return &b }}

// stream searches f a chunk at a time, whole lines only.
func (s *scanner) stream(f io.Reader) error {
	pooled := buffers.Get().(*[]byte)
	buf := (*pooled)[:0]
	defer func() {
		if cap(buf) == chunk {
			*pooled = buf[:0]
		}
		buffers.Put(pooled)
	}()
	first := true
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxLine {
				// One line longer than any held whole: search its
				// piece, go on with the rest of it.
				s.block(buf, false)
				buf = buf[:0]
			} else {
				nb := make([]byte, len(buf), 2*cap(buf))
				copy(nb, buf)
				buf = nb
			}
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if first && len(buf) > 0 {
			first = false
			if bytes.IndexByte(buf[:min(len(buf), binaryProbe)], 0) >= 0 {
				return errBinary
			}
		}
		if err == io.EOF {
			if len(buf) > 0 {
				s.block(buf, true)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if end := bytes.LastIndexByte(buf, '\n'); end >= 0 {
			s.block(buf[:end+1], false)
			rest := copy(buf, buf[end+1:])
			buf = buf[:rest]
		}
	}
}

// block searches whole lines (the last without its newline when last).
func (s *scanner) block(b []byte, last bool) {
	if s.o.Mode != Lines || (s.o.Before == 0 && s.o.After == 0) {
		if !s.m.mayMatch(b) {
			s.line += bytes.Count(b, []byte{'\n'})
			if last && len(b) > 0 && b[len(b)-1] != '\n' {
				s.line++
			}
			return
		}
	}
	for pos := 0; pos < len(b); {
		if s.after == 0 && s.o.Before == 0 {
			// Nothing to show around: jump to the next line that can match.
			next := s.m.nextCandidate(b, pos)
			if next < 0 {
				s.line += bytes.Count(b[pos:], []byte{'\n'})
				if last && b[len(b)-1] != '\n' {
					s.line++
				}
				return
			}
			s.line += bytes.Count(b[pos:next], []byte{'\n'})
			pos = next
		}
		end := bytes.IndexByte(b[pos:], '\n')
		var line []byte
		if end < 0 {
			line, pos = b[pos:], len(b)
		} else {
			line, pos = b[pos:pos+end], pos+end+1
		}
		s.line++
		s.see(line)
	}
}

// see takes one line: a match, context, or neither.
func (s *scanner) see(line []byte) {
	col, ok := s.m.matchLine(line)
	if ok {
		s.count++
		if s.o.Mode == Lines && s.o.Limit > 0 && s.count > s.o.Offset+s.o.Limit {
			// Past what a page can show of this file (offset+limit matches
			// before it): counted, not kept — ripgrep's sink. Memory follows
			// what is shown, not what was found.
			s.before = s.before[:0]
			return
		}
		if s.o.Mode == Lines {
			s.flushBefore()
			s.add(line, col+1, false)
			s.after = s.o.After
		}
		return
	}
	if s.o.Mode != Lines {
		return
	}
	if s.after > 0 {
		s.after--
		s.add(line, 0, true)
		return
	}
	if s.o.Before > 0 {
		if len(s.before) == s.o.Before {
			s.before = s.before[1:]
		}
		s.before = append(s.before, append([]byte(nil), line...))
	}
}

// flushBefore adds the kept lines before a match as its context.
func (s *scanner) flushBefore() {
	n := len(s.before)
	for i, l := range s.before {
		if no := s.line - n + i; no > s.shownTo {
			s.addAt(no, l, 0, true)
		}
	}
	s.before = s.before[:0]
}

func (s *scanner) add(line []byte, col int, context bool) { s.addAt(s.line, line, col, context) }

// addAt records line number no, cut to MaxColumns.
func (s *scanner) addAt(no int, line []byte, col int, context bool) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	cut := 0
	if mc := s.o.MaxColumns; mc > 0 && len(line) > mc {
		keep := mc
		for keep > 0 && !utf8.RuneStart(line[keep]) {
			keep--
		}
		cut, line = len(line)-keep, line[:keep]
	}
	s.lines = append(s.lines, Match{Path: s.name, Line: no, Column: col, Text: string(line), Context: context, Cut: cut})
	s.shownTo = no
}

// whole searches a file read whole, for a pattern that may match across
// lines: every line a match spans is a matching line.
func (s *scanner) whole(f io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(f, maxMultiline+1))
	if err != nil {
		return err
	}
	if len(b) > maxMultiline {
		return errors.New("larger than 64 MiB: too large for a multi-line search (--multiline)")
	}
	if bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0 {
		return errBinary
	}
	if !s.m.mayMatch(b) {
		return nil
	}
	lineStart := []int{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			lineStart = append(lineStart, i+1)
		}
	}
	lineOf := func(off int) int { // 1-based
		lo, hi := 0, len(lineStart)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if lineStart[mid] <= off {
				lo = mid
			} else {
				hi = mid
			}
		}
		return lo + 1
	}
	text := func(no int) []byte {
		start, end := lineStart[no-1], len(b)
		if no < len(lineStart) {
			end = lineStart[no] - 1
		}
		return bytes.TrimSuffix(b[start:end], []byte{'\n'})
	}
	matched := map[int]int{} // line -> column of its first match
	var order []int
	for _, loc := range s.m.re.FindAllIndex(b, -1) {
		endOff := loc[1]
		if endOff > loc[0] {
			endOff--
		}
		for no := lineOf(loc[0]); no <= lineOf(endOff); no++ {
			if _, ok := matched[no]; !ok {
				col := 0
				if no == lineOf(loc[0]) {
					col = loc[0] - lineStart[no-1] + 1
				}
				matched[no] = col
				order = append(order, no)
			}
		}
	}
	s.count = len(order)
	if s.o.Mode != Lines {
		return nil
	}
	shown := map[int]bool{}
	for _, no := range order {
		for c := max(1, no-s.o.Before); c <= min(len(lineStart), no+s.o.After); c++ {
			shown[c] = true
		}
	}
	for no := 1; no <= len(lineStart); no++ {
		if !shown[no] {
			continue
		}
		col, isMatch := matched[no]
		if isMatch && col == 0 {
			col = 1
		}
		s.addAt(no, text(no), col, !isMatch)
	}
	return nil
}
