package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// benchWrite measures one small write through a workspace, recorded in
// the history or not: what recording costs in process (BenchmarkWrite-
// Recorded against BenchmarkWritePlain; bench/history_test.go measures
// whole hunk processes).
func benchWrite(b *testing.B, rec bool) {
	dir := b.TempDir()
	b.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "f"), []byte("hello\n"), 0o644)
	w, err := Open(ws, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	contents := [][]byte{[]byte("one\n"), []byte("two\n")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var fsys FS
		if rec {
			fsys = Recorded(Disk(w), &Recording{Command: "write"})
		} else {
			fsys = Disk(w)
		}
		fsys.ReadFile("f")
		if err := fsys.WriteFile("f", [][]byte{contents[i%2]}, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		fsys.Done()
	}
}

func BenchmarkWriteRecorded(b *testing.B) { benchWrite(b, true) }
func BenchmarkWritePlain(b *testing.B)    { benchWrite(b, false) }
