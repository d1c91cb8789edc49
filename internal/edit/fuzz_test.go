package edit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// FuzzEdit takes a random file and a random span of it: the span's exact
// text, replaced by a random one-line text, either applies — changing that
// span and nothing else — or is refused as AMBIGUOUS because it occurs more
// than once. Nothing panics. Binary and non-UTF-8 files are refused.
func FuzzEdit(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), uint(2), uint(1), "B")
	f.Add([]byte("x = 1\r\ny = 2\r\n"), uint(0), uint(6), "z")
	f.Add([]byte("\ufeffhello “world”\n"), uint(3), uint(4), "$&")
	f.Add([]byte("no final newline"), uint(3), uint(100), "")
	f.Add([]byte("dup dup dup\n"), uint(0), uint(2), "x")
	f.Add([]byte("\tindented\n\t\tmore\n"), uint(1), uint(12), "y")
	f.Fuzz(func(t *testing.T, content []byte, i, j uint, nw string) {
		_, _, err := Apply("f", content, []Edit{{OldText: "x", NewText: "y"}}, Options{})
		if textfile.CheckText("f", content) != nil {
			if c := result.As(err).Code; c != result.BinaryFile && c != result.NotUTF8 {
				t.Fatalf("bad text: got %v", err)
			}
			return
		}
		b := 0
		if textfile.HasBOM(content) {
			b = len(textfile.BOM)
		}
		if len(content) == b {
			return
		}
		s := b + int(i%uint(len(content)-b))
		e := s + 1 + int(j%uint(len(content)-s))
		for s > b && !utf8.RuneStart(content[s]) {
			s--
		}
		for e < len(content) && !utf8.RuneStart(content[e]) {
			e++
		}
		old := string(content[s:e])
		if strings.HasPrefix(old, textfile.BOM) {
			return // a leading BOM is stripped from old texts by design
		}
		nw = strings.NewReplacer("\r", "", "\n", "", textfile.BOM, "").Replace(strings.ToValidUTF8(nw, ""))
		out, res, err := Apply("f", content, []Edit{{OldText: old, NewText: nw}}, Options{Brief: j%2 == 0})
		body := content[b:]
		if err != nil {
			var re *result.Error
			if !errors.As(err, &re) || re.Code != result.Ambiguous {
				t.Fatalf("span %d:%d %q: got %v, want success or AMBIGUOUS", s, e, old, err)
			}
			if n := len(newFile(body).findAll([]byte(old))); n < 2 {
				t.Fatalf("AMBIGUOUS for a text that occurs %d time(s)", n)
			}
			return
		}
		switch res.Match[0] {
		case Identical:
			if !bytes.Equal(out, content) {
				t.Fatalf("identical edit changed the file")
			}
			return
		case Exact:
		default:
			t.Fatalf("span's own text matched by %s", res.Match[0])
		}
		want := append(append(append([]byte{}, content[:s]...), nw...), content[e:]...)
		if e == len(content) && len(want) > b {
			// The final line break is kept as it was.
			had, _ := endsWithBreak(body)
			has, k := endsWithBreak(want[b:])
			switch {
			case had && !has:
				f := newFile(body)
				f.scanEOL()
				want = append(want, f.eol...)
			case !had && has:
				want = want[:len(want)-k]
			}
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("span %d:%d %q -> %q:\n got %q\nwant %q", s, e, old, nw, out, want)
		}
	})
}

// FuzzMatch runs any old and new text, fuzzy rules on, against any file:
// nothing panics, every failure is a typed error with a message, and a
// success that changes nothing says so.
func FuzzMatch(f *testing.F) {
	f.Add([]byte("if x {  \n\ty()\n}\n"), "if x {\n    y()\n}", "z", false)
	f.Add([]byte("a\r\nb\r\n"), "a\nb\n", "c\n", true)
	f.Add([]byte("“q” — x\u00a0y\n"), `"q" - x y`, "w", false)
	f.Add([]byte("x\nx\n"), "x", "y", true)
	f.Fuzz(func(t *testing.T, content []byte, old, nw string, all bool) {
		out, res, err := Apply("f", content, []Edit{{OldText: old, NewText: nw, ReplaceAll: all}}, Options{})
		if err != nil {
			var re *result.Error
			if !errors.As(err, &re) || re.Code == "" || re.Msg == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if res.Changed == bytes.Equal(out, content) {
			t.Fatalf("Changed=%v but content equal=%v", res.Changed, bytes.Equal(out, content))
		}
	})
}

// FuzzParseEdits feeds any text to ParseEdits: it never panics, and what it
// accepts is a non-empty list.
func FuzzParseEdits(f *testing.F) {
	f.Add(`[{"oldText":"a","newText":"b"}]`)
	f.Add(`{"edits":[{"old_string":"a","new_string":"b","replace_all":true}]}`)
	f.Add(`{"old_str":"a","new_str":""}`)
	f.Add(`[{"oldText":"a","old_text":"b","newText":"c"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		edits, err := ParseEdits(strings.NewReader(s))
		if err == nil && len(edits) == 0 {
			t.Fatalf("accepted %q with no edits", s)
		}
	})
}
