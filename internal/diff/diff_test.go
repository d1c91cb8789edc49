package diff

import "testing"

func TestUnified(t *testing.T) {
	cases := map[string]struct{ old, new, want string }{
		"equal": {"a\n", "a\n", ""},
		"change": {"a\nb\nc\n", "a\nB\nc\n",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		"no final newline": {"a\nb", "a\nc",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Unified("a/f", "b/f", []byte(c.old), []byte(c.new)); got != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}
