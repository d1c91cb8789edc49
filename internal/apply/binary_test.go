package apply

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// copyDelta is a git delta that makes n copies of a src of 64 KiB: one
// byte an instruction (a copy of 0x10000 bytes at offset 0), so a few
// bytes of delta stand for n × 64 KiB.
func copyDelta(n int) []byte {
	varint := func(b []byte, v int) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	d := varint(varint(nil, 1<<16), n<<16)
	return append(d, bytes.Repeat([]byte{0x80}, n)...)
}

// blobOfCopies is git's blob id of n copies of src, hashed as it streams.
func blobOfCopies(src []byte, n int) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", n*len(src))
	for i := 0; i < n; i++ {
		h.Write(src)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestBinaryDeltaHoldsNoCopy: a small delta that makes a big file is
// written from the pieces it names (slices of the old content and of the
// delta), never joined in memory first: what apply-patch holds is bounded
// by the patch and the old file, not by what the delta makes. Both the
// update and a rename with the delta are checked, each against the index
// line's blob id.
func TestBinaryDeltaHoldsNoCopy(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 1<<12) // 64 KiB
	const copies = 1024                                    // 64 MiB made
	want := blobOfCopies(src, copies)
	for _, moveTo := range []string{"", "moved.bin"} {
		t.Run("move="+moveTo, func(t *testing.T) {
			ws, dir := tree(t, map[string]string{"z.bin": string(src)})
			f := &patchparse.FileOp{Kind: patchparse.Update, Path: "z.bin", MoveTo: moveTo,
				OldHash: workspaceBlob(src), NewHash: want,
				Binary: &patchparse.Binary{Forward: &patchparse.BinaryHunk{Delta: true, Data: copyDelta(copies)}}}
			p := &patchparse.Patch{Format: patchparse.Unified, Files: []*patchparse.FileOp{f}}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Apply(workspace.Disk(ws), p, Options{})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("a %d-byte delta making 64 MiB allocated %d MiB", len(f.Binary.Forward.Data), alloc>>20)
			}
			name := "z.bin"
			if moveTo != "" {
				name = moveTo
				if _, err := os.Lstat(filepath.Join(dir, "z.bin")); !os.IsNotExist(err) {
					t.Errorf("z.bin is still there after its move (%v)", err)
				}
			}
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != copies*len(src) || !bytes.Equal(got, bytes.Repeat(src, copies)) {
				t.Errorf("%s holds %d bytes, not %d copies of the old content", name, len(got), copies)
			}
		})
	}
}

// workspaceBlob is git's blob id of data.
func workspaceBlob(data []byte) string { return gitBlobID(data, false) }
