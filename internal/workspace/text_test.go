package workspace

import (
	"reflect"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
)

func TestSplitLinesAndEOL(t *testing.T) {
	cases := map[string]struct {
		in    string
		lines []Line
		eol   EOL
		dom   string
		final bool
	}{
		"empty":      {"", []Line{}, None, "\n", true},
		"lf":         {"a\nb\n", []Line{{"a", "\n"}, {"b", "\n"}}, LF, "\n", true},
		"crlf":       {"a\r\nb\r\n", []Line{{"a", "\r\n"}, {"b", "\r\n"}}, CRLF, "\r\n", true},
		"cr":         {"a\rb\r", []Line{{"a", "\r"}, {"b", "\r"}}, CR, "\r", true},
		"mixed":      {"a\r\nb\nc\r\n", []Line{{"a", "\r\n"}, {"b", "\n"}, {"c", "\r\n"}}, Mixed, "\r\n", true},
		"no final":   {"a\nb", []Line{{"a", "\n"}, {"b", ""}}, LF, "\n", false},
		"only text":  {"abc", []Line{{"abc", ""}}, None, "\n", false},
		"blank line": {"\n\n", []Line{{"", "\n"}, {"", "\n"}}, LF, "\n", true},
		"cr then lf": {"a\r\r\n", []Line{{"a", "\r"}, {"", "\r\n"}}, Mixed, "\n", true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			lines := SplitLines(c.in)
			if !reflect.DeepEqual(lines, c.lines) && !(len(lines) == 0 && len(c.lines) == 0) {
				t.Fatalf("lines %q, want %q", lines, c.lines)
			}
			var counts EOLCounts
			for _, l := range lines {
				counts.Add(l.EOL)
			}
			if counts.Style() != c.eol {
				t.Errorf("EOL %v, want %v", counts.Style(), c.eol)
			}
			if c.eol != Mixed && counts.Dominant() != c.dom {
				t.Errorf("Dominant %q, want %q", counts.Dominant(), c.dom)
			}
			if final := len(lines) == 0 || lines[len(lines)-1].EOL != ""; final != c.final {
				t.Errorf("final newline %v, want %v", final, c.final)
			}
			if got := join(lines); got != c.in {
				t.Errorf("joined %q, want %q", got, c.in)
			}
		})
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

func join(lines []Line) string {
	var b []byte
	for _, l := range lines {
		b = append(b, l.Text...)
		b = append(b, l.EOL...)
	}
	return string(b)
}

// FuzzSplitLinesRoundTrip: the lines of any text join back to the same
// bytes, and no line text holds a line break.
func FuzzSplitLinesRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\r\nb", "\r\r\n\n", BOM + "x\ry", "é\u2028\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := SplitLines(string(b))
		if got := join(lines); got != string(b) {
			t.Fatalf("round trip %q -> %q", b, got)
		}
		for _, l := range lines {
			for i := 0; i < len(l.Text); i++ {
				if l.Text[i] == '\n' || l.Text[i] == '\r' {
					t.Fatalf("line %q holds a line break", l.Text)
				}
			}
		}
	})
}
