package merge

import (
	"bytes"
	"testing"
)

// FuzzMerge: no input panics; a side that changed nothing gives the other
// side whole, and the same change on both sides merges to it without a
// conflict; a conflict's text has its three markers.
func FuzzMerge(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nX\nc\n"), []byte("a\nY\nc\n"))
	f.Add([]byte("a\r\nb"), []byte("a\r\nb\r\nc"), []byte("x\r\nb"))
	f.Add([]byte("}\n\n}\n\n"), []byte("}\n}\n\n"), []byte("\n}\n\n}\n"))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		opt := Options{Ours: "ours", Theirs: "theirs"}
		r := Merge(base, ours, theirs, opt)
		if r.Conflicts > 0 && (!bytes.Contains(r.Text, []byte("<<<<<<< ours")) || !bytes.Contains(r.Text, []byte(">>>>>>> theirs"))) {
			t.Fatalf("%d conflicts without markers: %q", r.Conflicts, r.Text)
		}
		for _, c := range []struct {
			b, o, th, want []byte
		}{{base, ours, base, ours}, {base, base, theirs, theirs}, {base, ours, ours, ours}} {
			if r := Merge(c.b, c.o, c.th, opt); r.Conflicts != 0 || !bytes.Equal(r.Text, c.want) {
				t.Fatalf("Merge(%q, %q, %q) = %d conflicts %q, want %q", c.b, c.o, c.th, r.Conflicts, r.Text, c.want)
			}
		}
	})
}
