// Package textfile is hunk's model of a text file: its lines and their
// endings (LF, CRLF or CR, each line's own kept), a UTF-8 byte order mark, the
// refusal of binary and non-UTF-8 content, the SHA-256 a file is named by
// (read reports it; --if-match checks it), how alike two lines are, and the
// Unicode punctuation a near match folds. The engines that read and change
// text (read, write, edit, apply) share it; the workspace never looks inside
// a file.
package textfile

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hunk-dev/hunk/internal/result"
)

// BOM is the UTF-8 byte order mark.
const BOM = "\ufeff"

// EOL names a file's line-ending style.
type EOL string

// Line-ending styles. Mixed means more than one kind occurs; None that the
// text has no line break at all.
const (
	LF    EOL = "lf"
	CRLF  EOL = "crlf"
	CR    EOL = "cr"
	Mixed EOL = "mixed"
	None  EOL = "none"
)

// sniffLen is how much of a file IsBinary looks at, as git does.
const sniffLen = 8000

// IsBinary reports whether data looks binary: a NUL byte in its first 8000
// bytes (git's rule).
func IsBinary(data []byte) bool {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// HasBOM reports whether data starts with a UTF-8 BOM.
func HasBOM(data []byte) bool { return bytes.HasPrefix(data, []byte(BOM)) }

// CheckText refuses binary and non-UTF-8 data with a message naming the file.
func CheckText(name string, data []byte) error {
	if IsBinary(data) {
		return result.Errorf(result.BinaryFile, "%s: binary file (it contains NUL bytes); refusing to edit it as text", name)
	}
	if !utf8.Valid(data) {
		off := invalidOffset(data)
		line := bytes.Count(data[:off], []byte{'\n'}) + 1
		return result.Errorf(result.NotUTF8, "%s: not valid UTF-8 (line %d, byte offset %d); refusing to edit it as text", name, line, off).
			WithHint("convert the file to UTF-8 first (e.g. iconv -t UTF-8)")
	}
	return nil
}

func invalidOffset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// Text is a text split into lines without copying: line i is
// Body[Start[i]:Start[i]+len(Lines[i])], followed by its ending EOLs[i]. A
// line ends at "\n", "\r\n" or a lone "\r" (NextBreak); a text that ends
// with a line break has no empty last line, an empty text has no lines.
// Every engine that works on lines (apply, edit, read) sees a file this way.
// (Diffs do not: as in git, only "\n" ends a line there, see internal/diff.)
type Text struct {
	Body  string   // the text, without the BOM
	BOM   bool     // the content started with a UTF-8 BOM (FileText)
	Lines []string // each line without its ending
	EOLs  []string // each line's ending; "" for a last line without one
	Start []int    // each line's offset in Body
}

// SplitText splits s into lines that are substrings of it: one allocation
// per slice, none per line.
func SplitText(s string) *Text {
	if strings.IndexByte(s, '\r') < 0 {
		return SplitLF(s) // LF only (the usual case): git's view is the same
	}
	t := &Text{Body: s}
	n := strings.Count(s, "\n") + 1
	t.Lines = make([]string, 0, n)
	t.EOLs = make([]string, 0, n)
	t.Start = make([]int, 0, n)
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for begin := 0; begin < len(s); {
		i, eol := NextBreak(b[begin:])
		if i < 0 {
			t.add(begin, s[begin:], "")
			break
		}
		t.add(begin, s[begin:begin+i], eol)
		begin += i + len(eol)
	}
	return t
}

// SplitLF is SplitText as git sees a text: only "\n" ends a line (its
// ending "\r\n" when a "\r" is before it); a lone "\r" is part of its
// line (but a last one, which ends the last line as in SplitText). The
// lines a git diff was made from, where a file holds a lone "\r" (a
// classic Mac text pasted into a Unix one, an Illustrator file).
func SplitLF(s string) *Text {
	t := &Text{Body: s}
	n := strings.Count(s, "\n") + 1
	t.Lines = make([]string, 0, n)
	t.EOLs = make([]string, 0, n)
	t.Start = make([]int, 0, n)
	for begin := 0; begin < len(s); {
		i := strings.IndexByte(s[begin:], '\n')
		switch {
		case i < 0 && strings.HasSuffix(s, "\r"):
			// A last "\r" is its line's ending, as SplitText has it
			// (the patch's "\ No newline" makes it text again).
			t.add(begin, s[begin:len(s)-1], "\r")
			return t
		case i < 0:
			t.add(begin, s[begin:], "")
			return t
		case i > 0 && s[begin+i-1] == '\r':
			t.add(begin, s[begin:begin+i-1], "\r\n")
		default:
			t.add(begin, s[begin:begin+i], "\n")
		}
		begin += i + 1
	}
	return t
}

// LoneCR reports whether data holds a "\r" that is neither before a
// "\n" nor its last byte: a line break to SplitText, text to git
// (SplitLF).
func LoneCR(data []byte) bool {
	for i := bytes.IndexByte(data, '\r'); i >= 0; {
		if i+1 >= len(data) {
			return false
		}
		if data[i+1] != '\n' {
			return true
		}
		j := bytes.IndexByte(data[i+1:], '\r')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func (t *Text) add(start int, line, eol string) {
	t.Lines = append(t.Lines, line)
	t.EOLs = append(t.EOLs, eol)
	t.Start = append(t.Start, start)
}

// FileText is SplitText for a file's content, less its BOM. The content is
// viewed in place, never copied: it must not change while the Text is in
// use.
func FileText(content []byte) *Text {
	bom := HasBOM(content)
	if bom {
		content = content[len(BOM):]
	}
	t := SplitText(unsafe.String(unsafe.SliceData(content), len(content)))
	t.BOM = bom
	return t
}

// TextEnd is the offset in Body where line i's text ends (its ending starts).
func (t *Text) TextEnd(i int) int { return t.Start[i] + len(t.Lines[i]) }

// End is the offset in Body where line i, ending included, ends.
func (t *Text) End(i int) int { return t.TextEnd(i) + len(t.EOLs[i]) }

// Counts counts the text's line endings by kind.
func (t *Text) Counts() EOLCounts {
	var c EOLCounts
	for _, e := range t.EOLs {
		c.Add(e)
	}
	return c
}

// NextBreak finds the first line break in b: its offset and the ending
// ("\n", "\r\n" or "\r"; -1 and "" when there is none). A "\r" that is
// the last byte of b counts as a lone "\r": a reader of a stream that ends
// a chunk there must look at the next byte itself.
func NextBreak(b []byte) (int, string) {
	i := bytes.IndexByte(b, '\n')
	j := i
	if j < 0 {
		j = len(b)
	}
	if k := bytes.IndexByte(b[:j], '\r'); k >= 0 {
		if k+1 < len(b) && b[k+1] == '\n' {
			return k, "\r\n"
		}
		return k, "\r"
	}
	if i < 0 {
		return -1, ""
	}
	return i, "\n"
}

// EOLCounts counts line endings by kind.
type EOLCounts struct{ LF, CRLF, CR int }

// Add counts one line ending ("" counts nothing).
func (c *EOLCounts) Add(eol string) {
	switch eol {
	case "\n":
		c.LF++
	case "\r\n":
		c.CRLF++
	case "\r":
		c.CR++
	}
}

// Style is the line-ending style the counts describe.
func (c EOLCounts) Style() EOL {
	kinds := 0
	for _, n := range []int{c.LF, c.CRLF, c.CR} {
		if n > 0 {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		return None
	case kinds > 1:
		return Mixed
	case c.CRLF > 0:
		return CRLF
	case c.CR > 0:
		return CR
	}
	return LF
}

// Dominant is the ending new lines should get: the most common one (LF when
// there is none; ties go to LF, then CRLF).
func (c EOLCounts) Dominant() string {
	switch {
	case c.CRLF > c.LF && c.CRLF >= c.CR:
		return "\r\n"
	case c.CR > c.LF && c.CR > c.CRLF:
		return "\r"
	}
	return "\n"
}
