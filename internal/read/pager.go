package read

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// PageOptions select one page of a text stream.
type PageOptions struct {
	// Offset is the 1-based number of the first line of the page.
	Offset int
	// Column is the 1-based byte position inside line Offset where the page
	// starts (1: the whole line). Pages cut a line only between characters,
	// so a NextColumn never falls inside one; a column chosen by hand may
	// (the partial character then shows as invalid UTF-8).
	Column int64
	// Limit is the most lines a page holds (>= 1).
	Limit int
	// MaxBytes is the most bytes of text a page holds, counting one newline
	// per line (>= MinMaxBytes). A first line longer than that is cut.
	MaxBytes int
	// SizeHint is the stream's expected size, to size the read buffer (0:
	// unknown).
	SizeHint int64
}

// MinMaxBytes is the smallest page size: it must hold any UTF-8 character.
const MinMaxBytes = utf8.UTFMax

// PageLine is one line (or piece of a line) of a page.
type PageLine struct {
	// No is the line's 1-based number in the file.
	No int
	// Text is the line's bytes as they are in the file, without the ending;
	// for the first line of a page that starts at a column, only the rest.
	Text []byte
	// EOL is the line ending the file has after this line ("\n", "\r\n",
	// "\r", or "" for a last line without one, or for a line cut by the page).
	EOL string
	// Cut reports that the page ends inside this line.
	Cut bool
}

// Page is one page of a text stream plus what a single pass over the whole
// stream learned about it.
type Page struct {
	Lines []PageLine
	// TotalLines is the number of lines of the whole stream.
	TotalLines int
	// StartColumn is where the page starts inside its first line (1-based).
	StartColumn int64
	// NextOffset and NextColumn are where the next page starts; NextOffset is
	// 0 when the page reaches the end of the stream.
	NextOffset int
	NextColumn int64
	// CutLineLen is the full length in bytes of the line the page ends
	// inside (when the last line is Cut).
	CutLineLen int64
	// Sha256 is the hex SHA-256 of every byte of the stream (BOM included).
	Sha256 string
	// Size is the number of bytes of the stream.
	Size int64
	// BOM reports a leading UTF-8 byte order mark (never part of a line).
	BOM bool
	// LF, CRLF and CR count the line endings of each kind in the stream.
	LF, CRLF, CR int
	// InvalidUTF8 is the byte offset of the first byte that is not valid
	// UTF-8, or -1 when the whole stream is valid.
	InvalidUTF8 int64
	// LineLen is the length in bytes of line Offset when Column lies past
	// its end (ErrColumnPastEnd).
	LineLen int64
}

// ErrOffsetPastEnd is returned (with the Page, whose TotalLines is set) when
// Offset names a line after the last one.
var ErrOffsetPastEnd = errors.New("offset past the end")

// ErrColumnPastEnd is returned (with the Page, whose LineLen is set) when
// Column lies beyond the end of line Offset.
var ErrColumnPastEnd = errors.New("column past the end of the line")

const (
	phaseSeek    = iota // before line Offset
	phaseColumn         // inside line Offset, before Column
	phaseCollect        // filling the page
	phaseRest           // after the page: counting only
)

// pager is the state of one pass. Line endings are "\n", "\r\n" and a lone
// "\r"; a "\r" ends its line at once and a "\n" that follows it (possibly in
// the next chunk) is absorbed as part of the same ending.
type pager struct {
	opt    PageOptions
	phase  int
	line   int   // number of the line the next byte belongs to
	col    int64 // bytes of that line already consumed
	cr     bool  // the previous byte was a "\r" that ended a line
	crMark int   // the page line that "\r" ended, or -1

	skip   int64 // bytes still to skip in phaseColumn
	colErr bool  // line Offset ends before Column

	buf   []byte // text of the page's lines, back to back
	marks []mark // where each finished line of buf ends
	start int    // where the current line starts in buf
	used  int    // bytes the finished lines cost (text + 1 each)

	p     Page
	cutNo int // the line the page is cut inside, or 0
	pos   int64
	u8    utf8State
}

type mark struct {
	end int
	eol string
}

// ReadPage reads r to its end once and returns the page opt selects. It
// holds at most about MaxBytes plus one read buffer in memory, whatever the
// size of r.
func ReadPage(r io.Reader, opt PageOptions) (*Page, error) {
	if opt.Offset < 1 {
		opt.Offset = 1
	}
	if opt.Column < 1 {
		opt.Column = 1
	}
	if opt.Limit < 1 {
		opt.Limit = 1
	}
	if opt.MaxBytes < MinMaxBytes {
		opt.MaxBytes = MinMaxBytes
	}
	h := sha256.New()
	pg := &pager{opt: opt, line: 1, crMark: -1}
	pg.p.InvalidUTF8 = -1
	pg.p.StartColumn = 1
	if opt.Offset == 1 {
		pg.enterLine()
	}
	size := int64(256 << 10)
	if opt.SizeHint > 0 && opt.SizeHint < size {
		size = max(opt.SizeHint+1, 16)
	}
	chunk := make([]byte, size)
	// The first read gets at least the 3 bytes a BOM needs.
	n, err := io.ReadAtLeast(r, chunk, 3)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	b := chunk[:n]
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		pg.p.BOM = true
		h.Write(b[:3])
		b = b[3:]
		pg.pos = 3
	}
	for {
		if len(b) > 0 {
			h.Write(b)
			pg.u8.check(b, pg.pos, &pg.p.InvalidUTF8)
			pg.feed(b)
			pg.pos += int64(len(b))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n, err = r.Read(chunk)
		b = chunk[:n]
	}
	pg.u8.finish(pg.pos, &pg.p.InvalidUTF8)
	pg.p.Sha256 = hex.EncodeToString(h.Sum(nil))
	pg.p.Size = pg.pos
	return pg.finish()
}

// enterLine is called when the next byte belongs to line opt.Offset.
func (pg *pager) enterLine() {
	if pg.opt.Column > 1 {
		pg.phase = phaseColumn
		pg.skip = pg.opt.Column - 1
	} else {
		pg.phase = phaseCollect
	}
}

// feed consumes one chunk.
func (pg *pager) feed(b []byte) {
	if pg.cr {
		pg.cr = false
		if b[0] == '\n' {
			pg.p.CR--
			pg.p.CRLF++
			if pg.crMark >= 0 {
				pg.marks[pg.crMark].eol = "\r\n"
			}
			b = b[1:]
		}
	}
	for len(b) > 0 {
		switch pg.phase {
		case phaseSeek:
			b = pg.seek(b)
		case phaseColumn:
			b = pg.column(b)
		case phaseCollect:
			b = pg.collect(b)
		default:
			pg.count(b)
			b = nil
		}
	}
}

// eol finds the first line ending in b (textfile.NextBreak): its index,
// length (0 when none) and kind; a "\r" at the very end counts as a lone
// "\r" (feed absorbs a following "\n").
func eol(b []byte) (int, int, string) {
	i, e := textfile.NextBreak(b)
	return i, len(e), e
}

// endLine records an ending of kind e and moves to the next line.
func (pg *pager) endLine(e string) {
	switch e {
	case "\n":
		pg.p.LF++
	case "\r\n":
		pg.p.CRLF++
	case "\r":
		pg.p.CR++
	}
	pg.line++
	pg.col = 0
}

// seek skips lines before opt.Offset, whole chunks at a time when it can.
func (pg *pager) seek(b []byte) []byte {
	if need := pg.opt.Offset - pg.line; bytes.IndexByte(b, '\r') < 0 && bytes.Count(b, []byte{'\n'}) < need {
		pg.count(b)
		return nil
	}
	for len(b) > 0 {
		i, n, e := eol(b)
		if i < 0 {
			pg.col += int64(len(b))
			return nil
		}
		pg.endLine(e)
		b = b[i+n:]
		if e == "\r" && len(b) == 0 {
			pg.cr, pg.crMark = true, -1
		}
		if pg.line == pg.opt.Offset {
			pg.enterLine()
			return b
		}
	}
	return nil
}

// column skips the bytes of line opt.Offset before opt.Column.
func (pg *pager) column(b []byte) []byte {
	if pg.skip > 1 {
		// Skip in bulk up to the first line ending.
		n := min(pg.skip-1, int64(len(b)))
		if i, _, _ := eol(b[:n]); i >= 0 {
			n = int64(i)
		}
		pg.skip -= n
		pg.col += n
		b = b[n:]
	}
	for len(b) > 0 {
		c := b[0]
		if c == '\n' || c == '\r' {
			// The line ends before the column: let finish report it.
			pg.p.LineLen = pg.col
			pg.phase = phaseRest
			pg.colErr = true
			return b
		}
		if pg.skip == 0 {
			pg.p.StartColumn = pg.col + 1
			pg.phase = phaseCollect
			return b
		}
		pg.skip--
		pg.col++
		b = b[1:]
	}
	return nil
}

// collect adds the bytes of b to the page until it is full.
func (pg *pager) collect(b []byte) []byte {
	i, n, e := eol(b)
	piece := b
	if i >= 0 {
		piece = b[:i]
	}
	pg.buf = append(pg.buf, piece...)
	pg.col += int64(len(piece))
	cur := len(pg.buf) - pg.start
	first := len(pg.marks) == 0
	if first && cur > pg.opt.MaxBytes {
		pg.cut()
		return b[len(piece):]
	}
	if !first && pg.used+cur+1 > pg.opt.MaxBytes {
		pg.buf = pg.buf[:pg.start]
		pg.p.NextOffset = pg.line
		pg.phase = phaseRest
		return b[len(piece):]
	}
	if i < 0 {
		return nil
	}
	pg.marks = append(pg.marks, mark{len(pg.buf), e})
	pg.used += cur + 1
	pg.start = len(pg.buf)
	pg.endLine(e)
	b = b[i+n:]
	if e == "\r" && len(b) == 0 {
		pg.cr, pg.crMark = true, len(pg.marks)-1
	}
	if len(pg.marks) == pg.opt.Limit {
		pg.p.NextOffset = pg.line // confirmed or cleared by finish
		pg.phase = phaseRest
	}
	return b
}

// cut ends the page inside the current (first) line, at a character
// boundary at most MaxBytes into it (MinMaxBytes guarantees one exists
// unless the bytes there are not UTF-8, when the cut is at MaxBytes).
func (pg *pager) cut() {
	text := pg.buf[pg.start:]
	k := pg.opt.MaxBytes
	for j := k; j > k-utf8.UTFMax && j > 0; j-- {
		if text[j]&0xC0 != 0x80 {
			k = j
			break
		}
	}
	over := int64(len(text) - k)
	pg.buf = pg.buf[:pg.start+k]
	pg.marks = append(pg.marks, mark{len(pg.buf), ""})
	pg.cutNo = pg.line
	pg.p.NextOffset = pg.line
	pg.p.NextColumn = pg.col - over + 1
	pg.phase = phaseRest
}

// count consumes b after the page: line numbers, endings, the cut line's length.
func (pg *pager) count(b []byte) {
	lf := bytes.Count(b, []byte{'\n'})
	crlf, cr := 0, 0
	hasCR := bytes.IndexByte(b, '\r') >= 0
	if hasCR {
		crlf = bytes.Count(b, []byte("\r\n"))
		cr = bytes.Count(b, []byte{'\r'}) - crlf
		lf -= crlf
		if b[len(b)-1] == '\r' {
			pg.cr, pg.crMark = true, -1
		}
	}
	ends := lf + crlf + cr
	if ends == 0 {
		pg.col += int64(len(b))
		return
	}
	if pg.cutNo == pg.line {
		i, _, _ := eol(b)
		pg.p.CutLineLen = pg.col + int64(i)
	}
	pg.p.LF += lf
	pg.p.CRLF += crlf
	pg.p.CR += cr
	pg.line += ends
	// (LastIndexByte is a plain loop: only look for a "\r" known to be there.)
	last := bytes.LastIndexByte(b, '\n')
	if hasCR {
		last = max(last, bytes.LastIndexByte(b, '\r'))
	}
	pg.col = int64(len(b) - last - 1)
}

// finish settles the counts once the stream has ended.
func (pg *pager) finish() (*Page, error) {
	p := &pg.p
	p.TotalLines = pg.line - 1
	if pg.col > 0 {
		p.TotalLines++
	}
	if pg.phase == phaseCollect && len(pg.buf) > pg.start {
		// A last line without an ending.
		cur := len(pg.buf) - pg.start
		if len(pg.marks) == 0 && cur > pg.opt.MaxBytes {
			pg.cut()
		} else if len(pg.marks) > 0 && pg.used+cur+1 > pg.opt.MaxBytes {
			pg.buf = pg.buf[:pg.start]
			p.NextOffset = pg.line
		} else {
			pg.marks = append(pg.marks, mark{len(pg.buf), ""})
		}
	}
	if pg.cutNo != 0 && pg.cutNo == pg.line {
		p.CutLineLen = pg.col
	}
	switch {
	case pg.colErr:
		return p, ErrColumnPastEnd
	case pg.phase == phaseColumn:
		p.LineLen = pg.col
		return p, ErrColumnPastEnd
	case pg.opt.Offset > p.TotalLines && !(pg.opt.Offset == 1 && p.TotalLines == 0):
		return p, ErrOffsetPastEnd
	}
	if p.NextOffset > p.TotalLines {
		p.NextOffset = 0
	}
	start := 0
	for i, m := range pg.marks {
		p.Lines = append(p.Lines, PageLine{
			No:   pg.opt.Offset + i,
			Text: pg.buf[start:m.end:m.end],
			EOL:  m.eol,
			Cut:  pg.cutNo != 0 && i == len(pg.marks)-1,
		})
		start = m.end
	}
	return p, nil
}

// utf8State checks UTF-8 validity across chunk boundaries.
type utf8State struct {
	tail [utf8.UTFMax]byte
	n    int
}

// check validates b (at stream offset pos), carrying an incomplete final
// character over to the next chunk; it records the first invalid offset.
func (u *utf8State) check(b []byte, pos int64, first *int64) {
	if *first >= 0 {
		return
	}
	if u.n > 0 {
		// Complete the carried character with the first bytes of b.
		var tmp [2 * utf8.UTFMax]byte
		k := copy(tmp[:], u.tail[:u.n])
		k += copy(tmp[k:], b[:min(len(b), utf8.UTFMax)])
		r, size := utf8.DecodeRune(tmp[:k])
		if !utf8.FullRune(tmp[:k]) {
			copy(u.tail[:], tmp[:k])
			u.n = k
			return
		}
		if r == utf8.RuneError && size <= 1 {
			*first = pos - int64(u.n)
			return
		}
		b = b[size-u.n:]
		pos += int64(size - u.n)
		u.n = 0
	}
	// Hold back a final character that may continue in the next chunk.
	keep := 0
	for j := len(b) - 1; j >= 0 && j >= len(b)-utf8.UTFMax; j-- {
		if b[j]&0xC0 != 0x80 {
			if !utf8.FullRune(b[j:]) {
				keep = len(b) - j
			}
			break
		}
	}
	body := b[:len(b)-keep]
	if !utf8.Valid(body) {
		for i := 0; i < len(body); {
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size <= 1 {
				*first = pos + int64(i)
				return
			}
			i += size
		}
	}
	u.n = copy(u.tail[:], b[len(b)-keep:])
}

// finish reports a character left incomplete at the end of the stream.
func (u *utf8State) finish(pos int64, first *int64) {
	if *first < 0 && u.n > 0 {
		*first = pos - int64(u.n)
	}
}
