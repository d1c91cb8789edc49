package patchparse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// renderCodex writes p as a Codex patch (the inverse of Parse for the ASTs
// genPatch makes).
func renderCodex(p *Patch, eol string) string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s); b.WriteString(eol) }
	w(beginPatch)
	for _, f := range p.Files {
		switch f.Kind {
		case Add:
			w(addFile + f.Path)
			lines, _ := f.Lines()
			for _, l := range lines {
				w("+" + l)
			}
		case Delete:
			w(deleteFile + f.Path)
		case Update:
			w(updateFile + f.Path)
			if f.MoveTo != "" {
				w(moveTo + f.MoveTo)
			}
			for _, c := range f.Chunks {
				switch {
				case c.NoHeader:
				case c.OldStart != 0 || c.OldLines != 0 || c.NewStart != 0 || c.NewLines != 0:
					h := fmt.Sprintf("@@ -%d,%d +%d,%d @@", c.OldStart, c.OldLines, c.NewStart, c.NewLines)
					if c.Context != "" {
						h += " " + c.Context
					}
					w(h)
				case c.Context != "":
					w("@@ " + c.Context)
				default:
					w("@@")
				}
				for _, l := range c.Lines() {
					w(string(l.Op) + c.Text(l))
				}
				if c.EndOfFile {
					w(endOfFile)
				}
			}
		}
	}
	w(endPatch)
	return b.String()
}

// gen makes random values from fuzz input bytes (zeros when they run out).
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) n(max int) int { return int(g.byte()) % max }

// text is a line of text: any bytes but line breaks, from an alphabet rich
// in the characters the grammar cares about.
func (g *gen) text(max int) string {
	const alpha = " \t*@+-abcXYZ0{}()é—“"
	runes := []rune(alpha)
	n := g.n(max + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(runes[g.n(len(runes))])
	}
	return b.String()
}

func (g *gen) path() string {
	const alpha = "abcxyz019._-/"
	n := 1 + g.n(12)
	b := []byte{'p'}
	for i := 0; i < n; i++ {
		b = append(b, alpha[g.n(len(alpha))])
	}
	return string(b)
}

// genPatch makes a random Codex AST that renderCodex writes unambiguously.
func genPatch(g *gen) *Patch {
	p := &Patch{Format: Codex}
	nf := 1 + g.n(4)
	for i := 0; i < nf; i++ {
		f := &FileOp{Path: g.path()}
		switch g.n(3) {
		case 0:
			f.Kind = Add
			for k := g.n(5); k > 0; k-- {
				f.Content = append(f.Content, g.text(8))
			}
		case 1:
			f.Kind = Delete
		default:
			f.Kind = Update
			if g.n(3) == 0 {
				f.MoveTo = g.path()
			}
			nc := 1 + g.n(3)
			for k := 0; k < nc; k++ {
				c := &Chunk{}
				switch g.n(4) {
				case 0:
					c.NoHeader = k == 0
				case 1:
					c.Context = "ctx" + g.text(6)
				case 2:
					c.OldStart, c.OldLines, c.NewStart, c.NewLines = g.n(50), g.n(9), g.n(50), g.n(9)
					if g.n(2) == 0 {
						c.Context = "f" + g.text(6)
					}
				}
				nl := 1 + g.n(5)
				var ls []Line
				for m := 0; m < nl; m++ {
					ls = append(ls, Line{Op: " +-"[g.n(3)], Text: g.text(8)})
				}
				if c.NoHeader && isBlank(string(ls[0].Op)+ls[0].Text) {
					// Codex skips blank lines before a chunk: a headerless
					// chunk cannot start with a whitespace-only context line.
					ls[0].Text = "x"
				}
				c.SetLines(ls)
				c.EndOfFile = g.n(4) == 0
				f.Chunks = append(f.Chunks, c)
			}
		}
		p.Files = append(p.Files, f)
	}
	return p
}

// clearLines zeroes the line numbers of p so ASTs compare by content.
func clearLines(p *Patch) {
	for _, f := range p.Files {
		f.Line = 0
		for _, c := range f.Chunks {
			c.Line = 0
			ls := c.TextLines()
			for i := range ls {
				ls[i].Line = 0
			}
			c.SetLines(ls) // (the texts in a string of their own, as the AST made was)
		}
	}
}

// FuzzRoundTrip: a Codex patch rendered from a random AST parses back to it,
// with LF or CRLF line endings.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x02\x01\x00\x05abc\x01\x02\x03\x04"))
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		want := genPatch(g)
		eol := "\n"
		if g.n(2) == 1 {
			eol = "\r\n"
		}
		text := renderCodex(want, eol)
		got, err := Parse(text, Options{Strip: DefaultStrip})
		if err != nil {
			t.Fatalf("%v\npatch:\n%s", err, text)
		}
		clearLines(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip differs\npatch:\n%s\ngot:  %s\nwant: %s", text, dump(got), dump(want))
		}
	})
}

func dump(p *Patch) string {
	var b strings.Builder
	for _, f := range p.Files {
		fmt.Fprintf(&b, "%+v\n", *f)
		for _, c := range f.Chunks {
			fmt.Fprintf(&b, "  %+v\n", *c)
		}
	}
	return b.String()
}

// FuzzParse: Parse never panics, and what it returns keeps the AST's
// invariants.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.patch")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), -1)
	}
	// Mixed line endings, a "\ No newline" mark, no final newline.
	f.Add("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\r\n-b\n+c\r\n\n\\ No newline at end of file\n@@ -9 +9 @@\n-y\r\n+z\r", -1)
	// Markers closed with stars.
	f.Add("*** Begin Patch ***\n*** Update File: a.rs ***\n@@\n x\n-y\n+z\n*** End Patch ***\n", -1)
	// aider's whole files: two, one in a tag fence, one naming a heading.
	f.Add("a/x.py\n```python\nx = 1\n```\n\n### y.go:\n<source>go\npackage y\n</source>\n", -1)
	f.Fuzz(func(t *testing.T, text string, strip int) {
		p, err := Parse(text, Options{Strip: strip%4 - 1, Codex: strip%8 >= 4})
		if err != nil {
			if p != nil {
				t.Fatal("a patch and an error")
			}
			return
		}
		if len(p.Files) == 0 {
			t.Fatal("no files and no error")
		}
		nlines := strings.Count(text, "\n") + 1
		for _, f := range p.Files {
			if f.Path == "" {
				t.Fatalf("empty path: %+v", f)
			}
			if f.Line < 1 || f.Line > nlines {
				t.Fatalf("file line %d out of 1..%d", f.Line, nlines)
			}
			if f.Kind == Update && len(f.Chunks) == 0 && f.MoveTo == "" && f.Mode == 0 && f.Binary == nil {
				t.Fatalf("update without chunks, move, mode or binary patch: %+v", f)
			}
			for _, c := range f.Chunks {
				if c.Len() == 0 {
					t.Fatal("chunk without lines")
				}
				for _, l := range c.Lines() {
					if l.Op != ' ' && l.Op != '+' && l.Op != '-' {
						t.Fatalf("op %q", l.Op)
					}
					if l.Line < 1 || int(l.Line) > nlines {
						t.Fatalf("chunk line %d out of 1..%d", l.Line, nlines)
					}
				}
			}
		}
		if p.Format == Unified {
			// A hunk's lines read when asked are those read at once.
			e, err := Parse(text, Options{Strip: strip%4 - 1, Codex: strip%8 >= 4, eagerHunks: true})
			if err != nil || len(e.Files) != len(p.Files) {
				t.Fatalf("read at once: %v, %d files, want %d", err, len(e.Files), len(p.Files))
			}
			for i, f := range p.Files {
				for k, c := range f.Chunks {
					d := e.Files[i].Chunks[k]
					if d.from != nil || !reflect.DeepEqual(c.TextLines(), d.TextLines()) || c.Len() != d.Len() ||
						c.OldNoNewline != d.OldNoNewline || c.NewNoNewline != d.NewNoNewline {
						t.Fatalf("file %d chunk %d: lines %q, read at once %q", i, k, c.TextLines(), d.TextLines())
					}
				}
			}
		}
		// Reverse twice is the patch again, chunk for chunk (Add comes back
		// as Delete: only patches of Updates and Adds reverse).
		r, err := Reverse(p)
		if err != nil {
			return
		}
		rr, err := Reverse(r)
		if err != nil {
			return // an Add reversed is a Delete, which does not reverse
		}
		for i, f := range p.Files {
			g := rr.Files[i]
			if f.Kind != g.Kind || len(f.Chunks) != len(g.Chunks) {
				t.Fatalf("reversed twice: %+v, want %+v", g, f)
			}
			for k, c := range f.Chunks {
				if !reflect.DeepEqual(c.Lines(), g.Chunks[k].Lines()) || c.OldStart != g.Chunks[k].OldStart {
					t.Fatalf("chunk %d reversed twice differs", k)
				}
			}
		}
	})
}

// FuzzApplyDelta: a git delta from a patch is untrusted input — any bytes
// give a result of the size the delta states, or an error; never a panic
// or a read outside the source. DeltaParts (what apply-patch writes) makes
// the same bytes, or the same error, holding at most a slice header for
// each byte of delta and 32 bytes of its own.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte{16, 18, 0x90, 16, 2, '!', '!'})
	f.Add([]byte("abc"), []byte{3, 1, 0x91, 2, 1})
	f.Add([]byte(""), []byte{0, 0})
	long := bytes.Repeat([]byte("0123456789abcdef"), 16) // 256 bytes
	f.Add(long, []byte{0x80 | 2, 0x90 | 2, 0x91, 0x80, 0x91, 0x80, 0x80, 0x91, 0x40, 0x91, 0xc0, 0x10, 3, 'x', 'y', 'z', 0x91, 0, 0x80})
	f.Fuzz(func(t *testing.T, src, delta []byte) {
		out, err := ApplyDelta(src, delta)
		parts, perr := DeltaParts(src, delta)
		if (err == nil) != (perr == nil) {
			t.Fatalf("ApplyDelta: %v; DeltaParts: %v", err, perr)
		}
		if err != nil {
			return
		}
		if joined := bytes.Join(parts, nil); !bytes.Equal(joined, out) {
			t.Fatalf("DeltaParts made %q, ApplyDelta %q", joined, out)
		}
		own := 0 // bytes in parts that are slices of neither src nor delta
		for _, p := range parts {
			if !within(p, src) && !within(p, delta) {
				own += len(p)
			}
		}
		if len(parts) > len(delta) || own > 32*len(delta) {
			t.Fatalf("%d parts (%d bytes of their own) for a delta of %d bytes", len(parts), own, len(delta))
		}
		d := delta
		varint := func() int {
			v, s := 0, 0
			for {
				c := d[0]
				d = d[1:]
				v |= int(c&0x7f) << s
				s += 7
				if c&0x80 == 0 {
					return v
				}
			}
		}
		varint()
		if want := varint(); len(out) != want {
			t.Fatalf("%d bytes, the delta states %d", len(out), want)
		}
		// What it made is what its instructions count, counted without
		// making it (readBinary refuses by this count before applying).
		if made, err := deltaMakes(delta, len(src)); err != nil || made != len(out) {
			t.Fatalf("made %d bytes, its instructions count %d (%v)", len(out), made, err)
		}
	})
}

// within reports whether p is a slice of b's memory.
func within(p, b []byte) bool {
	if len(p) == 0 || len(b) == 0 {
		return false
	}
	lo, at := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return at >= lo && at+uintptr(len(p)) <= lo+uintptr(len(b))
}
