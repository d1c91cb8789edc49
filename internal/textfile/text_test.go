package textfile

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
)

func TestSplitTextAndEOL(t *testing.T) {
	type line struct{ text, eol string }
	cases := map[string]struct {
		in    string
		lines []line
		eol   EOL
		dom   string
		final bool
	}{
		"empty":      {"", nil, None, "\n", true},
		"lf":         {"a\nb\n", []line{{"a", "\n"}, {"b", "\n"}}, LF, "\n", true},
		"crlf":       {"a\r\nb\r\n", []line{{"a", "\r\n"}, {"b", "\r\n"}}, CRLF, "\r\n", true},
		"cr":         {"a\rb\r", []line{{"a", "\r"}, {"b", "\r"}}, CR, "\r", true},
		"mixed":      {"a\r\nb\nc\r\n", []line{{"a", "\r\n"}, {"b", "\n"}, {"c", "\r\n"}}, Mixed, "\r\n", true},
		"no final":   {"a\nb", []line{{"a", "\n"}, {"b", ""}}, LF, "\n", false},
		"only text":  {"abc", []line{{"abc", ""}}, None, "\n", false},
		"blank line": {"\n\n", []line{{"", "\n"}, {"", "\n"}}, LF, "\n", true},
		"cr then lf": {"a\r\r\n", []line{{"a", "\r"}, {"", "\r\n"}}, Mixed, "\n", true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			txt := SplitText(c.in)
			var lines []line
			for i, l := range txt.Lines {
				lines = append(lines, line{l, txt.EOLs[i]})
				if txt.Body[txt.Start[i]:txt.End(i)] != l+txt.EOLs[i] {
					t.Errorf("line %d at %d..%d is %q, want %q", i, txt.Start[i], txt.End(i), txt.Body[txt.Start[i]:txt.End(i)], l+txt.EOLs[i])
				}
			}
			if !reflect.DeepEqual(lines, c.lines) {
				t.Fatalf("lines %q, want %q", lines, c.lines)
			}
			counts := txt.Counts()
			if counts.Style() != c.eol {
				t.Errorf("EOL %v, want %v", counts.Style(), c.eol)
			}
			if c.eol != Mixed && counts.Dominant() != c.dom {
				t.Errorf("Dominant %q, want %q", counts.Dominant(), c.dom)
			}
			if final := len(lines) == 0 || lines[len(lines)-1].eol != ""; final != c.final {
				t.Errorf("final newline %v, want %v", final, c.final)
			}
			if got := join(txt); got != c.in {
				t.Errorf("joined %q, want %q", got, c.in)
			}
		})
	}
	if txt := FileText([]byte(BOM + "x\n")); !txt.BOM || txt.Body != "x\n" || len(txt.Lines) != 1 {
		t.Errorf("FileText with a BOM: %+v", txt)
	}
}

func TestCheckTextRefusals(t *testing.T) {
	if err := CheckText("bin", []byte("a\x00b")); result.As(err).Code != result.BinaryFile {
		t.Errorf("NUL: %v", err)
	}
	err := CheckText("latin1", []byte("ok\ncaf\xe9\n"))
	if result.As(err).Code != result.NotUTF8 || result.As(err).Msg != "latin1: not valid UTF-8 (line 2, byte offset 6); refusing to edit it as text" {
		t.Errorf("latin-1: %v", err)
	}
	if err := CheckText("bom", []byte(BOM+"x\r\n")); err != nil || !HasBOM([]byte(BOM+"x")) {
		t.Errorf("BOM: %v", err)
	}
}

func join(t *Text) string {
	var b []byte
	for i, l := range t.Lines {
		b = append(b, l...)
		b = append(b, t.EOLs[i]...)
	}
	return string(b)
}

// FuzzSplitTextRoundTrip: the lines of any text join back to the same
// bytes, and no line text holds a line break.
func FuzzSplitTextRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\r\nb", "\r\r\n\n", BOM + "x\ry", "é\u2028\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		txt := SplitText(string(b))
		if got := join(txt); got != string(b) {
			t.Fatalf("round trip %q -> %q", b, got)
		}
		for _, l := range txt.Lines {
			if strings.ContainsAny(l, "\r\n") {
				t.Fatalf("line %q holds a line break", l)
			}
		}
	})
}

func TestSplitLF(t *testing.T) {
	for _, c := range []struct {
		in          string
		lines, eols []string
		lone        bool
	}{
		{"a\rb\nc\r\nd", []string{"a\rb", "c", "d"}, []string{"\n", "\r\n", ""}, true},
		{"x\nend\r", []string{"x", "end"}, []string{"\n", "\r"}, false},
		{"a\r\nb\r\n", []string{"a", "b"}, []string{"\r\n", "\r\n"}, false},
		{"\r\r", []string{"\r"}, []string{"\r"}, true},
		{"", nil, nil, false},
	} {
		got := SplitLF(c.in)
		if !slices.Equal(got.Lines, c.lines) || !slices.Equal(got.EOLs, c.eols) {
			t.Errorf("SplitLF(%q) = %q %q, want %q %q", c.in, got.Lines, got.EOLs, c.lines, c.eols)
		}
		if l := LoneCR([]byte(c.in)); l != c.lone {
			t.Errorf("LoneCR(%q) = %v, want %v", c.in, l, c.lone)
		}
	}
}
