package read

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hunk-dev/hunk/internal/textfile"
)

// render shows a page compactly: "No:text|eol" per line, "~" for a cut line.
func render(p *Page) string {
	var b strings.Builder
	for _, l := range p.Lines {
		fmt.Fprintf(&b, "%d:%s%q", l.No, l.Text, l.EOL)
		if l.Cut {
			b.WriteString("~")
		}
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "total=%d next=%d", p.TotalLines, p.NextOffset)
	if p.NextColumn > 0 {
		fmt.Fprintf(&b, ":%d", p.NextColumn)
	}
	if p.StartColumn > 1 {
		fmt.Fprintf(&b, " start=%d", p.StartColumn)
	}
	if p.CutLineLen > 0 {
		fmt.Fprintf(&b, " cutlen=%d", p.CutLineLen)
	}
	return b.String()
}

func TestReadPage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  PageOptions
		want string
		err  error
	}{
		{"empty", "", PageOptions{}, "total=0 next=0", nil},
		{"one line no eol", "abc", PageOptions{}, `1:abc"" total=1 next=0`, nil},
		{"lf", "a\nb\n", PageOptions{}, `1:a"\n" 2:b"\n" total=2 next=0`, nil},
		{"crlf", "a\r\nb\r\n", PageOptions{}, `1:a"\r\n" 2:b"\r\n" total=2 next=0`, nil},
		{"cr", "a\rb\rc", PageOptions{}, `1:a"\r" 2:b"\r" 3:c"" total=3 next=0`, nil},
		{"mixed", "a\r\n\rb\n", PageOptions{}, `1:a"\r\n" 2:"\r" 3:b"\n" total=3 next=0`, nil},
		{"bom", "\ufeffa\nb", PageOptions{}, `1:a"\n" 2:b"" total=2 next=0`, nil},
		{"limit", "1\n2\n3\n4\n", PageOptions{Limit: 2}, `1:1"\n" 2:2"\n" total=4 next=3`, nil},
		{"limit exact", "1\n2\n", PageOptions{Limit: 2}, `1:1"\n" 2:2"\n" total=2 next=0`, nil},
		{"offset", "1\n2\n3\n4\n", PageOptions{Offset: 3, Limit: 1}, `3:3"\n" total=4 next=4`, nil},
		{"offset last", "1\n2\n3", PageOptions{Offset: 3}, `3:3"" total=3 next=0`, nil},
		{"offset past end", "1\n2\n", PageOptions{Offset: 3}, "", ErrOffsetPastEnd},
		{"offset past empty", "", PageOptions{Offset: 2}, "", ErrOffsetPastEnd},
		{"bytes stop before line", "aaaa\nbbbb\ncc\n", PageOptions{MaxBytes: 9}, `1:aaaa"\n" total=3 next=2`, nil},
		{"bytes fit exactly", "aaaa\nbbb\ncc\n", PageOptions{MaxBytes: 9}, `1:aaaa"\n" 2:bbb"\n" total=3 next=3`, nil},
		{"long first line cut", "abcdefghij\nx\n", PageOptions{MaxBytes: 4}, `1:abcd""~ total=2 next=1:5 cutlen=10`, nil},
		{"line of max bytes not cut", "abcd\nx\n", PageOptions{MaxBytes: 4}, `1:abcd"\n" total=2 next=2`, nil},
		{"continue at column", "abcdefghij\nx\n", PageOptions{Offset: 1, Column: 5, MaxBytes: 4}, `1:efgh""~ total=2 next=1:9 start=5 cutlen=10`, nil},
		{"continue to end of line", "abcdefghij\nx\n", PageOptions{Offset: 1, Column: 9, MaxBytes: 4}, `1:ij"\n" total=2 next=2 start=9`, nil},
		{"continue then more lines", "abcdefghij\nx\n", PageOptions{Offset: 1, Column: 9, MaxBytes: 6}, `1:ij"\n" 2:x"\n" total=2 next=0 start=9`, nil},
		{"column past end", "abc\nx\n", PageOptions{Offset: 1, Column: 4}, "", ErrColumnPastEnd},
		{"column past end at eof", "abc", PageOptions{Offset: 1, Column: 5}, "", ErrColumnPastEnd},
		{"cut keeps characters whole", "ééé\n", PageOptions{MaxBytes: 5}, `1:éé""~ total=1 next=1:5 cutlen=6`, nil},
		{"column inside character", "ééé\n", PageOptions{Column: 2, MaxBytes: 50}, "1:\xa9éé\"\\n\" total=1 next=0 start=2", nil},
		{"cut line without eol", "abcdefgh", PageOptions{MaxBytes: 4}, `1:abcd""~ total=1 next=1:5 cutlen=8`, nil},
		{"last line without eol too big", "ab\ncdefgh", PageOptions{MaxBytes: 5}, `1:ab"\n" total=2 next=2`, nil},
		{"empty lines", "\n\n\n", PageOptions{Limit: 2}, `1:"\n" 2:"\n" total=3 next=3`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opt.Limit == 0 {
				tt.opt.Limit = 2000
			}
			if tt.opt.MaxBytes == 0 {
				tt.opt.MaxBytes = 50 << 10
			}
			for _, small := range []bool{false, true} {
				r := strings.NewReader(tt.in)
				var p *Page
				var err error
				if small {
					p, err = ReadPage(iotest.OneByteReader(r), tt.opt)
				} else {
					p, err = ReadPage(r, tt.opt)
				}
				if !errors.Is(err, tt.err) {
					t.Fatalf("small=%v: err = %v, want %v", small, err, tt.err)
				}
				if err != nil {
					continue
				}
				if got := render(p); got != tt.want {
					t.Errorf("small=%v:\n got %s\nwant %s", small, got, tt.want)
				}
			}
		})
	}
}

func TestReadPageFacts(t *testing.T) {
	in := "\ufeffa\r\nb\nc\rd\xff\n"
	p, err := ReadPage(strings.NewReader(in), PageOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(in))
	if p.Sha256 != hex.EncodeToString(sum[:]) || p.Size != int64(len(in)) || !p.BOM {
		t.Errorf("sha %s size %d bom %v", p.Sha256, p.Size, p.BOM)
	}
	if p.LF != 2 || p.CRLF != 1 || p.CR != 1 {
		t.Errorf("endings lf=%d crlf=%d cr=%d", p.LF, p.CRLF, p.CR)
	}
	if p.InvalidUTF8 != int64(strings.IndexByte(in, 0xff)) {
		t.Errorf("invalid at %d", p.InvalidUTF8)
	}
}

// pageAll reads data page by page from the start, following NextOffset and
// NextColumn, and checks the invariants every page must keep.
func pageAll(t *testing.T, data []byte, limit, maxBytes int, oneByte bool) {
	t.Helper()
	if maxBytes < MinMaxBytes {
		maxBytes = MinMaxBytes
	}
	if limit < 1 {
		limit = 1
	}
	body := data
	if textfile.HasBOM(body) {
		body = body[3:]
	}
	want := textfile.SplitText(string(body))
	var got bytes.Buffer
	off, col := 1, int64(1)
	for pages := 0; ; pages++ {
		if pages > len(data)+2 {
			t.Fatalf("no progress after %d pages", pages)
		}
		var r = bytes.NewReader(data)
		var p *Page
		var err error
		opt := PageOptions{Offset: off, Column: col, Limit: limit, MaxBytes: maxBytes}
		if oneByte {
			p, err = ReadPage(iotest.OneByteReader(r), opt)
		} else {
			p, err = ReadPage(r, opt)
		}
		if err != nil {
			t.Fatalf("page at %d:%d: %v", off, col, err)
		}
		if p.TotalLines != len(want.Lines) {
			t.Fatalf("total %d, want %d", p.TotalLines, len(want.Lines))
		}
		if len(p.Lines) > limit {
			t.Fatalf("%d lines > limit %d", len(p.Lines), limit)
		}
		cost := 0
		for i, l := range p.Lines {
			if l.No != off+i {
				t.Fatalf("line number %d, want %d", l.No, off+i)
			}
			if i > 0 || col == 1 {
				if w, weol := want.Lines[l.No-1], want.EOLs[l.No-1]; !l.Cut && (string(l.Text) != w || l.EOL != weol) {
					t.Fatalf("line %d = %q%q, want %q%q", l.No, l.Text, l.EOL, w, weol)
				}
			}
			cost += len(l.Text) + 1
			got.Write(l.Text)
			got.WriteString(l.EOL)
		}
		if len(p.Lines) > 1 && cost > maxBytes {
			t.Fatalf("page of %d lines costs %d > %d", len(p.Lines), cost, maxBytes)
		}
		if len(p.Lines) == 1 && len(p.Lines[0].Text) > maxBytes && p.Lines[0].Cut {
			t.Fatalf("cut line of %d bytes > %d", len(p.Lines[0].Text), maxBytes)
		}
		if len(want.Lines) > 0 && len(p.Lines) == 0 {
			t.Fatalf("empty page at %d:%d", off, col)
		}
		if p.NextOffset == 0 {
			break
		}
		if p.NextColumn > 0 {
			if p.NextOffset != p.Lines[len(p.Lines)-1].No || p.CutLineLen != int64(len(want.Lines[p.NextOffset-1])) {
				t.Fatalf("cut: next %d:%d, cut line len %d", p.NextOffset, p.NextColumn, p.CutLineLen)
			}
			off, col = p.NextOffset, p.NextColumn
		} else {
			off, col = p.NextOffset, 1
		}
	}
	if !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("pages concatenate to\n%q\nwant\n%q", got.Bytes(), body)
	}
}

func TestPageAll(t *testing.T) {
	inputs := []string{
		"", "a", "a\n", "a\r\nbb\rccc\n\n\r\r\n", strings.Repeat("x", 100) + "\n" + strings.Repeat("é", 50),
		"\ufeff" + strings.Repeat("line\r\n", 30), "\xff\xfe\x80\x80\x80\x80abc\n",
	}
	for i, in := range inputs {
		for _, limit := range []int{1, 2, 7, 2000} {
			for _, mb := range []int{4, 5, 9, 64, 1 << 20} {
				t.Run(fmt.Sprintf("%d/%d/%d", i, limit, mb), func(t *testing.T) {
					pageAll(t, []byte(in), limit, mb, false)
					pageAll(t, []byte(in), limit, mb, true)
				})
			}
		}
	}
}

// FuzzPager: for any content, limit and page size, paging from the start
// never fails or panics, always makes progress, and the pages put together
// give back the file (BOM aside). A random start must either work or be
// refused with one of the two typed errors.
func FuzzPager(f *testing.F) {
	f.Add([]byte("a\nb\r\nc\rd"), 1, 4, 2, int64(1))
	f.Add([]byte("\ufeffééé\r\r\n"), 3, 5, 1, int64(2))
	f.Add([]byte(strings.Repeat("abc", 40)), 2000, 7, 1, int64(30))
	f.Fuzz(func(t *testing.T, data []byte, limit, maxBytes, off int, col int64) {
		if len(data) > 1<<16 {
			return
		}
		limit = 1 + abs(limit)%50
		maxBytes = MinMaxBytes + abs(maxBytes)%200
		pageAll(t, data, limit, maxBytes, len(data) < 64)
		p, err := ReadPage(bytes.NewReader(data), PageOptions{Offset: abs(off) % 100, Column: col % 300, Limit: limit, MaxBytes: maxBytes})
		if err != nil && !errors.Is(err, ErrOffsetPastEnd) && !errors.Is(err, ErrColumnPastEnd) {
			t.Fatal(err)
		}
		if err == nil && p.TotalLines > 0 && len(p.Lines) == 0 {
			t.Fatal("empty page")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}
