package edit

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

func TestApply(t *testing.T) {
	type tc struct {
		in    string
		edits []Edit
		opt   Options
		out   string // expected content (when code is "")
		code  result.Code
		match []Rule
		msg   string // substring of the error message or of the joined hints
	}
	e := func(old, nw string) Edit { return Edit{OldText: old, NewText: nw} }
	cases := map[string]tc{
		"exact": {
			in: "a\nb\nc\n", edits: []Edit{e("b\n", "B\n")}, out: "a\nB\nc\n", match: []Rule{Exact},
		},
		"exact inside a line": {
			in: "foo(bar)\n", edits: []Edit{e("bar", "baz")}, out: "foo(baz)\n", match: []Rule{Exact},
		},
		"literal replacement": {
			in: "x = 1\n", edits: []Edit{e("1", `$1 $& \1 \\n $$`)}, out: "x = $1 $& \\1 \\\\n $$\n",
		},
		"ambiguous lists every line": {
			in: "x\ny\nx\nz\nx\n", edits: []Edit{e("x", "q")}, code: result.Ambiguous, msg: "3 places (lines 1, 3, 5)",
		},
		"replace all": {
			in: "x\ny\nx\n", edits: []Edit{{OldText: "x", NewText: "q", ReplaceAll: true}}, out: "q\ny\nq\n",
		},
		"empty old text": {
			in: "a\n", edits: []Edit{e("", "x")}, code: result.InvalidArgument, msg: "old text is empty",
		},
		"identical is a no-op": {
			in: "a\n", edits: []Edit{e("a", "a")}, out: "a\n", match: []Rule{Identical},
		},
		"already applied": {
			in: "def b():\n    x = 2\n", edits: []Edit{e("def b():\n    x = 1", "def b():\n    x = 2")}, out: "def b():\n    x = 2\n", match: []Rule{AlreadyApplied},
		},
		"a new text that keeps no line of the old is no proof: a twin elsewhere": {
			in: "def a():\n    x = 2\n", edits: []Edit{e("    x = 1", "    x = 2")}, code: result.NoMatch,
		},
		"a one-line change in place is no proof either": {
			in: "hello there\n", edits: []Edit{e("hello world", "hello there")}, code: result.NoMatch,
		},
		"a new text found in many places is no proof of application": {
			in: "y = 1\ny = 2\n", edits: []Edit{e("x = 3", "y")}, code: result.NoMatch,
		},
		"new text inside old text is not proof of application": {
			in: "foo\n", edits: []Edit{e("foo(1)", "foo")}, code: result.NoMatch,
		},
		"no match names the closest line and column": {
			in: "func a() {\n\treturn 1\n}\n", edits: []Edit{e("func a() {\n\treturn 2\n}", "x")}, code: result.NoMatch,
			msg: "first difference at line 2, column 9",
		},
		"crlf file, lf old text": {
			in: "a\r\nb\r\nc\r\n", edits: []Edit{e("a\nb\n", "x\ny\n")}, out: "x\r\ny\r\nc\r\n", match: []Rule{LineEndings},
		},
		"crlf file, exact old text, lf new text": {
			in: "a\r\nb\r\n", edits: []Edit{e("a", "x\ny")}, out: "x\r\ny\r\nb\r\n", match: []Rule{Exact},
		},
		"mixed endings matched line by line": {
			in: "a\r\nb\nc\r\n", edits: []Edit{e("a\nb\nc\n", "z\n")}, out: "z\r\n", match: []Rule{LineEndings},
		},
		"trailing whitespace": {
			in: "if x {  \n\ty()\t\n}\n", edits: []Edit{e("if x {\n\ty()\n}", "if x {\n\tz()\n}")}, out: "if x {\n\tz()\n}\n",
			match: []Rule{TrailingWhitespace},
		},
		"trailing whitespace in the old text": {
			in: "a\nb\n", edits: []Edit{e("a  \nb", "c\nd")}, out: "c\nd\n", match: []Rule{TrailingWhitespace},
		},
		"unicode quotes": {
			in: "msg := \u201chello\u201d \u2014 ok\n", edits: []Edit{e(`"hello" - ok`, `"bye"`)}, out: "msg := \"bye\"\n",
			match: []Rule{UnicodePunctuation},
		},
		"nbsp": {
			in: "a\u00a0b\n", edits: []Edit{e("a b", "c")}, out: "c\n", match: []Rule{UnicodePunctuation},
		},
		"indentation spaces to tabs": {
			in:    "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			edits: []Edit{e("if x {\n    y()\n}", "if x {\n    z()\n    w()\n}")},
			out:   "func f() {\n\tif x {\n\t\tz()\n\t\tw()\n\t}\n}\n", match: []Rule{Indentation},
		},
		"indentation constant shift": {
			in:    "class A:\n    def f(self):\n        return 1\n",
			edits: []Edit{e("def f(self):\n    return 1\n", "def f(self):\n    return 2\n")},
			out:   "class A:\n    def f(self):\n        return 2\n", match: []Rule{Indentation},
		},
		"indentation not uniform is no match": {
			in:    "a:\n    b\n  c\n",
			edits: []Edit{e("a:\n  b\n  c\n", "x\n")}, code: result.NoMatch,
		},
		"exact turns fuzzy off": {
			in: "a  \nb\n", edits: []Edit{e("a\nb", "c")}, opt: Options{Exact: true}, code: result.NoMatch,
			msg: "--exact refuses that",
		},
		"fuzzy must be unique": {
			in: "a \nb\na\t\nb\n", edits: []Edit{e("a\nb", "c")}, code: result.Ambiguous, msg: "ignoring trailing whitespace (lines 1, 3)",
		},
		"bom kept": {
			in: "\ufeffa\nb\n", edits: []Edit{e("a", "x")}, out: "\ufeffx\nb\n",
		},
		"bom in old text": {
			in: "\ufeffa\nb\n", edits: []Edit{e("\ufeffa", "x")}, out: "\ufeffx\nb\n",
		},
		"final newline kept when deleting the last line": {
			in: "a\nb\n", edits: []Edit{e("\nb\n", "")}, out: "a\n",
		},
		"missing final newline kept": {
			in: "a\nb", edits: []Edit{e("b", "c\nd\n")}, out: "a\nc\nd",
		},
		"multi edit against the original": {
			in: "a\nb\nc\n", edits: []Edit{e("a", "b"), e("b", "c")}, out: "b\nc\nc\n", match: []Rule{Exact, Exact},
		},
		"overlap names both edits": {
			in: "abc\n", edits: []Edit{e("ab", "x"), e("bc", "y")}, code: result.InvalidArgument, msg: "edits 1 and 2 overlap",
		},
		"one failing edit fails all": {
			in: "a\nb\n", edits: []Edit{e("a", "x"), e("zzz", "y")}, code: result.NoMatch, msg: "edit 2 of 2",
		},
		"binary refused": {
			in: "a\x00b", edits: []Edit{e("a", "b")}, code: result.BinaryFile,
		},
		"not utf8 refused": {
			in: "a\xffb", edits: []Edit{e("a", "b")}, code: result.NotUTF8,
		},
		"cr only file": {
			in: "a\rb\rc\r", edits: []Edit{e("b\n", "x\ny\n")}, out: "a\rx\ry\rc\r", match: []Rule{LineEndings},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, res, err := Apply("f.txt", []byte(c.in), c.edits, c.opt)
			if c.code != "" {
				var re *result.Error
				if !errors.As(err, &re) {
					t.Fatalf("got %v, want a %s error", err, c.code)
				}
				if re.Code != c.code {
					t.Fatalf("got %s (%s), want %s", re.Code, re.Msg, c.code)
				}
				all := re.Msg + "\n" + strings.Join(re.Hints, "\n")
				if !strings.Contains(all, c.msg) {
					t.Fatalf("message %q does not contain %q", all, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v (%v)", err, result.As(err).Hints)
			}
			if string(out) != c.out {
				t.Fatalf("got %q, want %q", out, c.out)
			}
			if c.match != nil && strings.Join(rules(res.Match), ",") != strings.Join(rules(c.match), ",") {
				t.Fatalf("match %v, want %v", res.Match, c.match)
			}
		})
	}
}

func rules(rs []Rule) []string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return s
}

// TestLineOf checks the incremental line counter, queried in any order,
// against a plain count over files with every kind of line ending.
func TestLineOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bc", "\n", "\r\n", "\r", "é"}
	for round := 0; round < 200; round++ {
		var b strings.Builder
		for k := rng.IntN(40); k > 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		body := []byte(b.String())
		f := newFile(body)
		for q := 0; q < 30; q++ {
			off := rng.IntN(len(body) + 1)
			want := 1
			for _, eol := range textfile.SplitText(string(body[:off])).EOLs {
				if eol != "" {
					want++
				}
			}
			// A CRLF split by off counts once its '\n' is passed.
			if off > 0 && off < len(body) && body[off-1] == '\r' && body[off] == '\n' {
				want--
			}
			if got := f.lineOf(off); got != want {
				t.Fatalf("body %q: lineOf(%d) = %d, want %d", body, off, got, want)
			}
		}
	}
}

// TestBigNotText: a big file is checked to be text while the exact search
// runs; the check's verdict wins over every outcome of the search.
func TestBigNotText(t *testing.T) {
	big := strings.Repeat("some text line\n", concurrentCheck/15+1)
	cases := map[string]struct {
		content string
		old     string
		code    result.Code
	}{
		"bad utf8 at the end, unique match":      {big + "MARK\n\xff\n", "MARK", result.NotUTF8},
		"bad utf8 at the end, no match":          {big + "\xff\n", "nothing like it", result.NotUTF8},
		"bad utf8 at the end, ambiguous":         {big + "\xff\n", "some text", result.NotUTF8},
		"NUL at the start, unique match":         {"\x00" + big + "MARK\n", "MARK", result.BinaryFile},
		"valid, unique match":                    {big + "MARK\n", "MARK", ""},
		"valid, no match gives NO_MATCH as ever": {big, "nothing like it", result.NoMatch},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := Apply("big", []byte(c.content), []Edit{{OldText: c.old, NewText: "x"}}, Options{})
			if got := result.As(err); (got == nil) != (c.code == "") || (got != nil && got.Code != c.code) {
				t.Fatalf("got %v, want %s", err, c.code)
			}
		})
	}
}
