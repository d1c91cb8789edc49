package edit

import (
	"testing"
)

func TestInsert(t *testing.T) {
	for name, tc := range map[string]struct {
		content string
		after   int
		text    string
		want    string
	}{
		"start":                {"a\nb\n", 0, "x", "x\na\nb\n"},
		"middle":               {"a\nb\n", 1, "x", "a\nx\nb\n"},
		"end":                  {"a\nb\n", 2, "x\n", "a\nb\nx\n"},
		"several lines":        {"a\nb\n", 1, "x\ny", "a\nx\ny\nb\n"},
		"crlf file":            {"a\r\nb\r\n", 1, "x\ny\n", "a\r\nx\r\ny\r\nb\r\n"},
		"no final newline":     {"a\nb", 2, "x", "a\nb\nx"},
		"no final newline mid": {"a\nb", 1, "x", "a\nx\nb"},
		"empty file":           {"", 0, "x", "x\n"},
		"bom kept":             {"\uFEFFa\n", 0, "x", "\uFEFFx\na\n"},
	} {
		t.Run(name, func(t *testing.T) {
			parts, res, err := insert("f", []byte(tc.content), tc.after, tc.text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(join(parts)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if !res.Changed || res.Diff == "" {
				t.Errorf("changed %v, diff %q", res.Changed, res.Diff)
			}
		})
	}
	if _, _, err := insert("f", []byte("a\n"), 2, "x", Options{}); err == nil {
		t.Error("inserting after line 2 of a one-line file: no error")
	}
	if _, _, err := insert("f", []byte("a\x00\n"), 0, "x", Options{}); err == nil {
		t.Error("inserting into a binary file: no error")
	}
}
