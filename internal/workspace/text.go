package workspace

import (
	"bytes"
	"unicode/utf8"

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

// Seq is the byte sequence of a single style ("\n" for None and Mixed's default).
func (e EOL) Seq() string {
	switch e {
	case CRLF:
		return "\r\n"
	case CR:
		return "\r"
	}
	return "\n"
}

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

// Line is one line of a text without its ending, and the ending that
// followed it in the file ("" for a last line with no final newline).
type Line struct {
	Text string
	EOL  string
}

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

// SplitLines splits s after each "\n", "\r\n" or lone "\r". A text that ends
// with a line break has no empty last line; an empty text has no lines.
func SplitLines(s string) []Line {
	lines := make([]Line, 0, bytes.Count([]byte(s), []byte{'\n'})+1)
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, Line{s[start:i], "\n"})
			start = i + 1
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				lines = append(lines, Line{s[start:i], "\r\n"})
				i++
			} else {
				lines = append(lines, Line{s[start:i], "\r"})
			}
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, Line{s[start:], ""})
	}
	return lines
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
