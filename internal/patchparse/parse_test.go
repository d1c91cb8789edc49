package patchparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
)

var update = flag.Bool("update", false, "rewrite testdata/parse/*.json from the parser's output")

// The golden form of a parse: the AST with readable chunk lines (op + text)
// and the line numbers of headers, or the error.
type goldenPatch struct {
	Format Format         `json:",omitempty"`
	Files  []goldenFile   `json:",omitempty"`
	Notes  []string       `json:",omitempty"`
	Error  string         `json:",omitempty"`
	Hints  []string       `json:",omitempty"`
	Detail map[string]any `json:",omitempty"`
}

type goldenFile struct {
	Kind           Kind
	Path           string
	MoveTo         string        `json:",omitempty"`
	AltPath        string        `json:",omitempty"`
	Mode           string        `json:",omitempty"` // octal
	OldMode        string        `json:",omitempty"` // octal
	Full           bool          `json:",omitempty"`
	Content        []string      `json:",omitempty"`
	NoFinalNewline bool          `json:",omitempty"`
	Chunks         []goldenChunk `json:",omitempty"`
	CopyFrom       string        `json:",omitempty"`
	Link           bool          `json:",omitempty"`
	Gitlink        bool          `json:",omitempty"`
	OldHash        string        `json:",omitempty"`
	NewHash        string        `json:",omitempty"`
	Binary         []string      `json:",omitempty"` // each hunk: "literal|delta N: <data, quoted>"
	Line           int
}

type goldenChunk struct {
	Context      string `json:",omitempty"`
	Hint         string `json:",omitempty"` // "-a,b +c,d"
	Lines        []string
	EndOfFile    bool `json:",omitempty"`
	OldNoNewline bool `json:",omitempty"`
	NewNoNewline bool `json:",omitempty"`
	NoHeader     bool `json:",omitempty"`
	Line         int
}

func golden(p *Patch, err error) goldenPatch {
	if err != nil {
		e := result.As(err)
		return goldenPatch{Error: e.Msg, Hints: e.Hints, Detail: e.Details}
	}
	g := goldenPatch{Format: p.Format, Notes: p.Notes}
	for _, f := range p.Files {
		content, _ := f.Lines()
		gf := goldenFile{Kind: f.Kind, Path: f.Path, MoveTo: f.MoveTo, AltPath: f.AltPath, Content: content, NoFinalNewline: f.NoFinalNewline, Full: f.Full, Line: f.Line}
		gf.CopyFrom, gf.OldHash, gf.NewHash, gf.Link, gf.Gitlink = f.CopyFrom, f.OldHash, f.NewHash, f.Link, f.Gitlink
		if b := f.Binary; b != nil {
			for _, h := range []*BinaryHunk{b.Forward, b.Reverse} {
				if h != nil {
					kind := map[bool]string{false: "literal", true: "delta"}[h.Delta]
					gf.Binary = append(gf.Binary, fmt.Sprintf("%s %d: %q", kind, len(h.Data), h.Data))
				}
			}
		}
		if f.Mode != 0 {
			gf.Mode = fmt.Sprintf("%04o", uint32(f.Mode))
		}
		if f.OldMode != 0 {
			gf.OldMode = fmt.Sprintf("%04o", uint32(f.OldMode))
		}
		for _, c := range f.Chunks {
			gc := goldenChunk{Context: c.Context, EndOfFile: c.EndOfFile, OldNoNewline: c.OldNoNewline, NewNoNewline: c.NewNoNewline, NoHeader: c.NoHeader, Line: c.Line}
			if c.OldStart != 0 || c.OldLines != 0 || c.NewStart != 0 || c.NewLines != 0 {
				gc.Hint = fmt.Sprintf("-%d,%d +%d,%d", c.OldStart, c.OldLines, c.NewStart, c.NewLines)
			}
			for _, l := range c.Lines() {
				gc.Lines = append(gc.Lines, string(l.Op)+c.Text(l))
			}
			gf.Chunks = append(gf.Chunks, gc)
		}
		g.Files = append(g.Files, gf)
	}
	return g
}

var stripSuffix = regexp.MustCompile(`-p(\d+)$`)

// TestParse parses every testdata/parse/CASE.patch (CASE-pN: with -p N) and
// compares the result with CASE.json; go test -run TestParse -update
// rewrites the goldens (review the diff).
func TestParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/parse/*.patch")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".patch")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Strip: DefaultStrip}
			if m := stripSuffix.FindStringSubmatch(name); m != nil {
				opt.Strip, _ = strconv.Atoi(m[1])
			}
			p, perr := Parse(string(src), opt)
			if strings.HasPrefix(name, "err_") != (perr != nil) {
				t.Errorf("error = %v, want an error: %v", perr, strings.HasPrefix(name, "err_"))
			}
			if perr != nil {
				var re *result.Error
				if !errors.As(perr, &re) || re.Code != result.InvalidPatch {
					t.Errorf("error %T %v is not an INVALID_PATCH *result.Error", perr, perr)
				}
			} else {
				checkLines(t, string(src), p)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(golden(p, perr)); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			gf := strings.TrimSuffix(f, ".patch") + ".json"
			if *update {
				if err := os.WriteFile(gf, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parse of %s differs from %s:\n%s", f, gf, got)
			}
		})
	}
}

// checkLines checks the invariant that every line number in the AST points
// at the patch line it came from.
func checkLines(t *testing.T, src string, p *Patch) {
	t.Helper()
	L := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	at := func(n int) string {
		if n < 1 || n > len(L) {
			t.Fatalf("line %d out of range", n)
		}
		return L[n-1]
	}
	for _, f := range p.Files {
		if h := at(f.Line); !strings.Contains(h, f.Path) && !strings.Contains(h, "diff") && !strings.HasPrefix(h, "---") {
			t.Errorf("file %s: line %d is %q", f.Path, f.Line, h)
		}
		for _, c := range f.Chunks {
			if h := at(c.Line); !c.NoHeader && !strings.HasPrefix(h, "@@") {
				t.Errorf("chunk header line %d is %q", c.Line, h)
			}
			for _, l := range c.Lines() {
				want := string(l.Op) + c.Text(l)
				if got := at(int(l.Line)); got != want && !(got == "" && want == " ") {
					t.Errorf("chunk line %d is %q, AST has %q", l.Line, got, want)
				}
			}
		}
	}
}

func TestOldNew(t *testing.T) {
	c := &Chunk{}
	c.SetLines([]Line{{Op: ' ', Text: "a"}, {Op: '-', Text: "b"}, {Op: '+', Text: "c"}})
	if got := strings.Join(c.Old(), ","); got != "a,b" {
		t.Errorf("Old = %q", got)
	}
	if got := strings.Join(c.New(), ","); got != "a,c" {
		t.Errorf("New = %q", got)
	}
}

// A loose envelope is recovered only outside --compat codex: Codex's own
// parser refuses each of these, and so does hunk's in its mode.
func TestLooseEnvelopeStrict(t *testing.T) {
	for _, name := range []string{"codex_loose_no_end", "codex_loose_after_end", "codex_loose_prose_before"} {
		src, err := os.ReadFile("testdata/parse/" + name + ".patch")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(string(src), Options{Strip: DefaultStrip, Codex: true}); err == nil {
			t.Errorf("%s: parsed under --compat codex", name)
		}
		p, err := Parse(string(src), Options{Strip: DefaultStrip})
		if err != nil || len(p.Notes) != 1 {
			t.Errorf("%s: %v, notes %q; want it read, with one note", name, err, p.Notes)
		}
	}
}

// TestSplitLines: lines give what strings.Split gives with the one "\r"
// before each "\n" dropped, and no line after a final newline.
func TestSplitLines(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
		crs  int
	}{
		{"", nil, 0},
		{"a", []string{"a"}, 0},
		{"a\n", []string{"a"}, 0},
		{"a\r\nb\n\nc", []string{"a", "b", "", "c"}, 1},
		{"\n\n", []string{"", ""}, 0},
		{"a\r\r\nb\r", []string{"a\r", "b"}, 2},
		{"\r\n", []string{""}, 1},
	} {
		L := splitLines(c.text)
		var got []string
		for i := 0; i < L.len(); i++ {
			got = append(got, L.at(i))
		}
		if !slices.Equal(got, c.want) || L.crs != c.crs {
			t.Errorf("splitLines(%q) = %q (%d with \\r), want %q (%d)", c.text, got, L.crs, c.want, c.crs)
		}
	}
}
