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
			d, err := Decode("f", []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Lines, c.lines) && !(len(d.Lines) == 0 && len(c.lines) == 0) {
				t.Fatalf("lines %q, want %q", d.Lines, c.lines)
			}
			if d.EOL() != c.eol {
				t.Errorf("EOL %v, want %v", d.EOL(), c.eol)
			}
			if c.eol != Mixed && d.Dominant() != c.dom {
				t.Errorf("Dominant %q, want %q", d.Dominant(), c.dom)
			}
			if d.FinalNewline() != c.final {
				t.Errorf("FinalNewline %v, want %v", d.FinalNewline(), c.final)
			}
			if string(d.Encode()) != c.in {
				t.Errorf("Encode %q, want %q", d.Encode(), c.in)
			}
		})
	}
}

func TestDecodeRefusals(t *testing.T) {
	if _, err := Decode("bin", []byte("a\x00b")); result.As(err).Code != result.BinaryFile {
		t.Errorf("NUL: %v", err)
	}
	_, err := Decode("latin1", []byte("ok\ncaf\xe9\n"))
	if result.As(err).Code != result.NotUTF8 || result.As(err).Msg != "latin1: not valid UTF-8 (line 2, byte offset 6); refusing to edit it as text" {
		t.Errorf("latin-1: %v", err)
	}
	d, err := Decode("bom", []byte(BOM+"x\r\n"))
	if err != nil || !d.BOM || d.Lines[0].Text != "x" || string(d.Encode()) != BOM+"x\r\n" {
		t.Errorf("BOM: %+v %v", d, err)
	}
}

// FuzzDecodeRoundTrip: any text that decodes encodes back to the same bytes,
// and no line text holds a line break.
func FuzzDecodeRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\r\nb", "\r\r\n\n", BOM + "x\ry", "é\u2028\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode("f", b)
		if err != nil {
			return
		}
		if got := d.Encode(); string(got) != string(b) {
			t.Fatalf("round trip %q -> %q", b, got)
		}
		for _, l := range d.Lines {
			for i := 0; i < len(l.Text); i++ {
				if l.Text[i] == '\n' || l.Text[i] == '\r' {
					t.Fatalf("line %q holds a line break", l.Text)
				}
			}
		}
	})
}
