//go:build linux

package execrun

import (
	"encoding/binary"
	"testing"
)

// FuzzEachDirent: any getdents buffer is read without a panic, every name
// within it.
func FuzzEachDirent(f *testing.F) {
	rec := func(name string, typ byte) []byte {
		n := 19 + len(name) + 1
		n = (n + 7) &^ 7
		b := make([]byte, n)
		binary.NativeEndian.PutUint16(b[16:18], uint16(n))
		b[18] = typ
		copy(b[19:], name)
		return b
	}
	f.Add(append(rec(".", 4), append(rec("..", 4), rec(".git", 4)...)...))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, buf []byte) {
		eachDirent(buf, func(name string, typ byte) {
			if len(name) > len(buf) {
				t.Fatalf("a name longer than the buffer: %q", name)
			}
		})
	})
}
