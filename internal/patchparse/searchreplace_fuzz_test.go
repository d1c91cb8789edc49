package patchparse

import (
	"strconv"
	"strings"
	"testing"
)

// srLine is a content line for a block: the generator's text, or a line
// that looks like a marker but is not one (a conflict marker, a short or
// long run, a marker with a word after it).
func (g *gen) srLine() string {
	near := []string{"<<<<<<< HEAD", "======= x", ">>>>>>> main", "====", "==========", "<<<<<<< SEARCH!", "```", "```go", "*** Begin Patch", "--- a/x", "path.go", "=======", "=====", "  ======="}
	if g.n(4) == 0 {
		return near[g.n(len(near))]
	}
	return g.text(10)
}

// FuzzSearchReplace renders random SEARCH/REPLACE blocks — aider's diff or
// diff-fenced layout, marker lengths 5 to 9, prose and fences around,
// blocks that omit their path after the first — and requires Parse to
// read back exactly the blocks written: their files, their order, every
// SEARCH and REPLACE line.
func FuzzSearchReplace(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x02\x01\x00\x05abc\x01\x02\x03\x04\x09\x08"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		type blk struct {
			path            string
			search, replace []string
		}
		var blocks []blk
		var b strings.Builder
		if g.n(2) == 0 {
			b.WriteString("Here are the changes you asked for.\n\n")
		}
		paths := []string{g.path(), g.path()}
		prev := ""
		for i, n := 0, 1+g.n(4); i < n; i++ {
			k := blk{path: paths[g.n(2)]}
			for j, m := 0, 1+g.n(3); j < m; j++ {
				k.search = append(k.search, g.srLine())
			}
			if isBlank(k.search[0]) || divider(strings.TrimSpace(k.search[0])) {
				k.search[0] = "x" // a non-empty SEARCH (an Update) not begun by a divider's line
			}
			for j, m := 0, g.n(3); j < m; j++ {
				k.replace = append(k.replace, g.srLine())
			}
			// Markers of one length when the start and end agree, as a
			// model writes them (the length decides among divider lines).
			ns, nd, ne := 5+g.n(5), 5+g.n(5), 5+g.n(5)
			if ns == ne {
				nd = ns
			}
			named := k.path != prev || g.n(2) == 0
			fenced := g.n(2) == 0
			// aider's fences and a Markdown heading naming the file.
			fence := [][2]string{{"```go", "```"}, {"<source>python", "</source>"}, {"<code>", "</code>"}, {"<pre>", "</pre>"}}[g.n(4)]
			if fence[0] != "```go" {
				fenced = false // the path goes before these, as aider writes them
			}
			if named && !fenced {
				b.WriteString([]string{"", "### "}[g.n(2)] + k.path + "\n")
			}
			b.WriteString(fence[0] + "\n")
			if named && fenced {
				b.WriteString(k.path + "\n")
			}
			b.WriteString(strings.Repeat("<", ns) + " SEARCH\n")
			for _, l := range k.search {
				b.WriteString(l + "\n")
			}
			b.WriteString(strings.Repeat("=", nd) + "\n")
			for _, l := range k.replace {
				b.WriteString(l + "\n")
			}
			b.WriteString(strings.Repeat(">", ne) + " REPLACE\n")
			b.WriteString(fence[1] + "\n\n")
			prev = k.path
			blocks = append(blocks, k)
		}
		if g.n(2) == 0 {
			b.WriteString("That is all: run the tests.\n")
		}
		text := b.String()
		p, err := Parse(text, Options{Strip: DefaultStrip})
		if err != nil {
			t.Fatalf("%v\ntext:\n%s", err, text)
		}
		if p.Format != SearchReplace {
			t.Fatalf("read as %s:\n%s", p.Format, text)
		}
		// The blocks of each file, in order.
		want := map[string][]blk{}
		for _, k := range blocks {
			want[k.path] = append(want[k.path], k)
		}
		for _, f := range p.Files {
			w := want[f.Path]
			if f.Kind != Update || len(f.Chunks) != len(w) {
				t.Fatalf("%s: %s with %d chunks, want %d blocks\ntext:\n%s", f.Path, f.Kind, len(f.Chunks), len(w), text)
			}
			for i, c := range f.Chunks {
				// The block as written is its reading, or one of its
				// readings when its text holds divider lines.
				if !readsAs(c, w[i].search, w[i].replace) {
					t.Fatalf("%s block %d: read %q / %q (%d readings), want %q / %q\ntext:\n%s", f.Path, i+1, c.Old(), c.New(), len(c.Splits), w[i].search, w[i].replace, text)
				}
			}
			delete(want, f.Path)
		}
		if len(want) > 0 {
			t.Fatalf("files not read: %v\ntext:\n%s", want, text)
		}
	})
}

// FuzzBlocks renders random file-less blocks — Cline's markers, the legacy
// ones, Roo's with hints and a ------- line — whose content may hold
// marker lines escaped with a backslash, and requires ParseBlocks to read
// back every SEARCH and REPLACE line (unescaped) and every hint.
func FuzzBlocks(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		markers := []string{"=======", "------- SEARCH", "+++++++ REPLACE", "<<<<<<< SEARCH", ">>>>>>> REPLACE", "-------"}
		line := func() (raw, want string) {
			if g.n(5) == 0 {
				m := markers[g.n(len(markers))]
				return `\` + m, m
			}
			l := g.srLine()
			for {
				t := strings.TrimSpace(l)
				if !blockStart(t) && !blockEnd(t) && !isRun(t, '=') && !isRun(t, '-') && !strings.HasPrefix(t, `\`) && !strings.HasPrefix(t, ":start_line:") && !strings.HasPrefix(t, ":end_line:") {
					return l, l
				}
				l = "x" + l
			}
		}
		type blk struct {
			search, replace []string
			hint            int
		}
		var blocks []blk
		var b strings.Builder
		style := g.n(3) // 0 Cline, 1 legacy, 2 Roo
		for i, n := 0, 1+g.n(4); i < n; i++ {
			k := blk{}
			switch style {
			case 0:
				b.WriteString(strings.Repeat("-", 3+g.n(5)) + " SEARCH\n")
			default:
				b.WriteString(strings.Repeat("<", 3+g.n(5)) + " SEARCH\n")
			}
			if style == 2 {
				if g.n(2) == 0 {
					k.hint = 1 + g.n(200)
					b.WriteString(":start_line:" + strconv.Itoa(k.hint) + "\n")
				}
				b.WriteString("-------\n")
			}
			for j, m := 0, 1+g.n(3); j < m; j++ {
				raw, want := line()
				b.WriteString(raw + "\n")
				k.search = append(k.search, want)
			}
			if isBlank(strings.Join(k.search, "")) {
				b.WriteString("x\n")
				k.search = append(k.search, "x")
			}
			b.WriteString(strings.Repeat("=", 3+g.n(5)) + "\n")
			for j, m := 0, g.n(3); j < m; j++ {
				raw, want := line()
				b.WriteString(raw + "\n")
				k.replace = append(k.replace, want)
			}
			if style == 0 {
				b.WriteString(strings.Repeat("+", 3+g.n(5)) + " REPLACE\n")
			} else {
				b.WriteString(strings.Repeat(">", 3+g.n(5)) + " REPLACE\n")
			}
			blocks = append(blocks, k)
		}
		text := b.String()
		p, err := ParseBlocks(text, "f.go")
		if err != nil {
			t.Fatalf("%v\ntext:\n%s", err, text)
		}
		if len(p.Files) != 1 || len(p.Files[0].Chunks) != len(blocks) {
			t.Fatalf("read %d files, want 1 with %d chunks\ntext:\n%s", len(p.Files), len(blocks), text)
		}
		for i, c := range p.Files[0].Chunks {
			added := c.New()
			if strings.Join(c.Old(), "\n") != strings.Join(blocks[i].search, "\n") || strings.Join(added, "\n") != strings.Join(blocks[i].replace, "\n") || c.OldStart != blocks[i].hint {
				t.Fatalf("block %d: read %q / %q @%d, want %q / %q @%d\ntext:\n%s", i+1, c.Old(), added, c.OldStart, blocks[i].search, blocks[i].replace, blocks[i].hint, text)
			}
		}
	})
}

// FuzzParseBlocksText feeds ParseBlocks arbitrary text: an error or a
// patch of the one file, never a panic, and every chunk line from the text.
func FuzzParseBlocksText(f *testing.F) {
	f.Add("------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n")
	f.Add("<<<<<<< SEARCH\n:start_line:3\n-------\n\\=======\n=======\nx\n>>>>>>> REPLACE\n")
	f.Add(`{"diff": "<<<<<<< SEARCH\na\n=======\n>>>>>>> REPLACE"}`)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseBlocks(text, "f.go")
		if err != nil {
			if p != nil {
				t.Fatal("a patch and an error")
			}
			return
		}
		if len(p.Files) != 1 || p.Files[0].Path != "f.go" {
			t.Fatalf("files: %+v", p.Files)
		}
	})
}

// readsAs reports whether a block was read as search / replace: its one
// reading, or one of its Splits.
func readsAs(c *Chunk, search, replace []string) bool {
	same := func(lines []Line) bool {
		r := Chunk{}
		r.SetLines(lines)
		return strings.Join(r.Old(), "\n") == strings.Join(search, "\n") && strings.Join(r.New(), "\n") == strings.Join(replace, "\n")
	}
	if len(c.Splits) == 0 {
		return same(c.TextLines())
	}
	for _, s := range c.Splits {
		if same(s.Lines) {
			return true
		}
	}
	return false
}
