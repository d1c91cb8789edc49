// Package read owns `hunk read`: paging through a text file of any size in
// one streaming pass (line numbers, line endings, a hash of the whole file),
// cutting and continuing lines longer than a page, listing directories,
// describing and scaling images, and suggesting near names for a missing
// path. It returns the page as text for a model plus details for programs;
// it knows nothing of the terminal.
package read

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Defaults of the page caps (SPEC "read").
const (
	DefaultLimit    = 2000
	DefaultMaxBytes = 50 * 1024
	// MaxImageSide is the longest side of an image returned as data; larger
	// images are scaled down to it.
	MaxImageSide = 2000
)

// Options select what Read returns.
type Options struct {
	// Offset is the 1-based first line (or directory entry); 0 means 1.
	Offset int
	// Column is the 1-based byte position inside line Offset to start at
	// (continuing a cut line); 0 means 1.
	Column int64
	// Limit is the most lines (or entries) per page; 0 means DefaultLimit.
	Limit int
	// MaxBytes is the most bytes of text per page; 0 means DefaultMaxBytes.
	MaxBytes int
	// LineNumbers prefixes every line with its number and a tab.
	LineNumbers bool
	// ImageData asks for an image's bytes (scaled to MaxImageSide), not only
	// its description.
	ImageData bool
	// Continue says how to ask for the next page, which starts at offset
	// (and column, inside a long line; 0 otherwise), in the words of the
	// surface the reader uses (nil: hunk read's, "--offset N").
	Continue func(offset int, column int64) string
}

// next is how to ask for the page at offset and column.
func (o *Options) next(offset int, column int64) string {
	if o.Continue != nil {
		return o.Continue(offset, column)
	}
	return OffsetFlags(offset, column)
}

// offsetHint says which offsets there are (total: lines or entries), in
// the surface's words.
func (o *Options) offsetHint(total int) string {
	if o.Continue == nil {
		return fmt.Sprintf("use an --offset from 1 to %d", total)
	}
	return fmt.Sprintf("use an offset from 1 to %d: %s is the last", total, o.Continue(total, 0))
}

// columnHint says which columns line offset has (n bytes), in the
// surface's words.
func (o *Options) columnHint(n int64, offset int) string {
	if o.Continue == nil {
		return fmt.Sprintf("use a --column from 1 to %d, or --offset %d alone", n, offset)
	}
	return fmt.Sprintf("use a column from 1 to %d (%s), or the offset alone (%s)", n, o.Continue(offset, n), o.Continue(offset, 0))
}

// OffsetFlags is how hunk read and the read tool ask for the page at
// offset and column: "--offset N" (and "--column C" inside a long line).
func OffsetFlags(offset int, column int64) string {
	if column > 0 {
		return fmt.Sprintf("--offset %d --column %d", offset, column)
	}
	return fmt.Sprintf("--offset %d", offset)
}

// Result is what Read found: Text is what a person or a model reads (the
// page with its notices, a listing, an image description), Details the
// facts for programs (*TextDetails, *DirDetails or *ImageDetails), Image the
// image to hand to a model (with Options.ImageData).
type Result struct {
	Text    string
	Details any
	Image   *Image
}

// Image is an encoded image ready to be sent as a content block.
type Image struct {
	MimeType string
	Data     []byte
}

// TextDetails describe one page of a text file.
type TextDetails struct {
	Path       string `json:"path" jsonschema:"the path read"`
	Type       string `json:"type" jsonschema:"text, directory or image"` // "text"
	TotalLines int    `json:"totalLines" jsonschema:"lines in the file"`
	StartLine  int    `json:"startLine" jsonschema:"first line shown (1-based)"`
	EndLine    int    `json:"endLine" jsonschema:"last line shown"`
	// NextOffset is the --offset of the next page, 0 when this page reaches
	// the end of the file.
	NextOffset int `json:"nextOffset" jsonschema:"the offset of the next page; 0 at the end"`
	// StartColumn and NextColumn are set when a page starts or ends inside
	// a line longer than a page (--column).
	StartColumn int64  `json:"startColumn,omitempty" jsonschema:"the page starts at this byte of its first line (a long line continued)"`
	NextColumn  int64  `json:"nextColumn,omitempty" jsonschema:"the column of the next page: the page ends inside a long line"`
	Truncated   bool   `json:"truncated" jsonschema:"the page stops before the end"`
	Sha256      string `json:"sha256" jsonschema:"the file's SHA-256 (for write's and edit's ifMatch)"`
	Size        int64  `json:"size" jsonschema:"size in bytes"`
	EOL         string `json:"eol" jsonschema:"line endings: lf, crlf, cr, mixed or none"`
	BOM         bool   `json:"bom" jsonschema:"the file starts with a byte order mark"`
	UTF8        bool   `json:"utf8" jsonschema:"the file is valid UTF-8"`
}

// Validate checks the options a caller can get wrong.
func (o *Options) Validate() error {
	switch {
	case o.Offset < 0:
		return result.Usagef("--offset must be 1 or more (the first line is 1), not %d", o.Offset)
	case o.Column < 0:
		return result.Usagef("--column must be 1 or more, not %d", o.Column)
	case o.Limit < 0:
		return result.Usagef("--limit must be 1 or more, not %d", o.Limit)
	case o.MaxBytes < 0 || (o.MaxBytes > 0 && o.MaxBytes < MinMaxBytes):
		return result.Usagef("--max-bytes must be at least %d, not %d", MinMaxBytes, o.MaxBytes)
	}
	if o.Offset == 0 {
		o.Offset = 1
	}
	if o.Column == 0 {
		o.Column = 1
	}
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return nil
}

// Read reads path (as the user wrote it) inside ws.
func Read(ws *workspace.Workspace, path string, opt Options) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	name, err := ws.Resolve(path)
	if err != nil {
		return nil, err
	}
	// A FIFO, a device or a socket is refused by the workspace before it
	// could block (workspace.TypeName names it).
	f, err := ws.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, notFound(ws, name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ws.Error(name, err)
	}
	if fi.IsDir() {
		return readDir(ws, name, f, opt)
	}
	head := make([]byte, min(fi.Size()+1, sniffLen))
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, ws.Error(name, err)
	}
	head = head[:n]
	if format := sniffImage(head); format != nil {
		return readImage(ws, name, format, io.MultiReader(bytes.NewReader(head), f), opt)
	}
	if textfile.IsBinary(head) {
		return nil, binaryErr(ws.Display(name), fmt.Sprintf("NUL byte at offset %d", bytes.IndexByte(head, 0)))
	}
	return readText(ws, name, io.MultiReader(bytes.NewReader(head), f), fi.Size(), opt)
}

// sniffLen is how much of a file is read before deciding what it is: git's
// binary rule looks at the first 8000 bytes.
const sniffLen = 8000

// binaryErr refuses a file with a NUL byte; where says where it is.
func binaryErr(disp string, where string) *result.Error {
	return result.Errorf(result.BinaryFile, "%s: binary file (%s); refusing to show it as text", disp, where).
		WithHint("images (PNG, JPEG, GIF, WebP) are shown; other binary files need a hex dump (e.g. xxd " + disp + " | head)").
		At(disp)
}

func readText(ws *workspace.Workspace, name string, r io.Reader, size int64, opt Options) (*Result, error) {
	return ReadText(ws.Display(name), r, size, opt, func(err error) error { return ws.Error(name, err) })
}

// ReadText pages through r, a text of size bytes (a hint; -1 unknown)
// shown as disp; ioErr says a read error. Text that is not a file of the
// workspace (a stored exec output) is paged as a file is.
func ReadText(disp string, r io.Reader, size int64, opt Options, ioErr func(error) error) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	p, err := ReadPage(r, PageOptions{Offset: opt.Offset, Column: opt.Column, Limit: opt.Limit, MaxBytes: opt.MaxBytes, SizeHint: size})
	switch {
	case errors.Is(err, ErrOffsetPastEnd):
		e := result.Errorf(result.InvalidArgument, "%s: offset %d is past the end of the file (it has %s)", disp, opt.Offset, plural(p.TotalLines, "line", "lines")).
			WithDetail("totalLines", p.TotalLines).At(disp)
		if p.TotalLines > 0 {
			e.WithHint(opt.offsetHint(p.TotalLines))
		}
		return nil, e
	case errors.Is(err, ErrColumnPastEnd):
		return nil, result.Errorf(result.InvalidArgument, "%s: column %d is past the end of line %d (it has %s)", disp, opt.Column, opt.Offset, plural(int(p.LineLen), "byte", "bytes")).
			WithHint(opt.columnHint(max(p.LineLen, 1), opt.Offset)).
			WithDetail("totalLines", p.TotalLines).At(disp)
	case err != nil:
		return nil, ioErr(err)
	}
	d := &TextDetails{
		Path: disp, Type: "text", TotalLines: p.TotalLines, NextOffset: p.NextOffset,
		Truncated: p.NextOffset != 0, Sha256: p.Sha256, Size: p.Size,
		EOL: string(eolStyle(p)), BOM: p.BOM, UTF8: p.InvalidUTF8 < 0,
	}
	if len(p.Lines) > 0 {
		d.StartLine = p.Lines[0].No
		d.EndLine = p.Lines[len(p.Lines)-1].No
	}
	if p.StartColumn > 1 {
		d.StartColumn = p.StartColumn
	}
	if p.NextColumn > 0 {
		d.NextColumn = p.NextColumn
	}
	var b strings.Builder
	n := 256
	for _, l := range p.Lines {
		n += len(l.Text) + 8
	}
	b.Grow(n)
	for _, l := range p.Lines {
		if bytes.IndexByte(l.Text, 0) >= 0 {
			return nil, binaryErr(disp, fmt.Sprintf("NUL byte in line %d", l.No)).WithDetail("line", l.No)
		}
		if opt.LineNumbers {
			fmt.Fprintf(&b, "%d\t", l.No)
		}
		if utf8.Valid(l.Text) {
			b.Write(l.Text)
		} else {
			b.Write(bytes.ToValidUTF8(l.Text, []byte("\uFFFD")))
		}
		b.WriteByte('\n')
	}
	var notes []string
	switch {
	case p.TotalLines == 0:
		notes = append(notes, fmt.Sprintf("[%s is empty.]", disp))
	case p.NextColumn > 0:
		more := ""
		if rest := p.TotalLines - d.EndLine; rest > 0 {
			more = fmt.Sprintf("; %s after it", plural(rest, "more line", "more lines"))
		}
		notes = append(notes, fmt.Sprintf("[Line %d is cut at byte %d of %d%s. Use %s to continue.]",
			d.EndLine, p.NextColumn-1, p.CutLineLen, more, opt.next(p.NextOffset, p.NextColumn)))
	case p.NextOffset > 0:
		notes = append(notes, fmt.Sprintf("[%s in file. Use %s to continue.]", plural(p.TotalLines-d.EndLine, "more line", "more lines"), opt.next(p.NextOffset, 0)))
	}
	if p.InvalidUTF8 >= 0 {
		notes = append(notes, fmt.Sprintf("[%s is not valid UTF-8 (first bad byte at offset %d): bad bytes are shown as U+FFFD; the editing commands refuse this file.]", disp, p.InvalidUTF8))
	}
	if len(notes) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Join(notes, "\n"))
		b.WriteByte('\n')
	}
	return &Result{Text: b.String(), Details: d}, nil
}

// plural gives "1 line", "2 lines".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func eolStyle(p *Page) textfile.EOL {
	return textfile.EOLCounts{LF: p.LF, CRLF: p.CRLF, CR: p.CR}.Style()
}
