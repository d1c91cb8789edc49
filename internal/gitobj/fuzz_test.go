package gitobj

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLooseObject: any bytes under a loose object's name are read without
// a panic, within the limit, and never returned as a blob they are not.
func FuzzLooseObject(f *testing.F) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 6\x00hello\n"))
	w.Close()
	f.Add(z.Bytes())
	f.Add([]byte{0x78, 0x9c})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		id := "0123456789abcdef0123456789abcdef01234567"
		os.MkdirAll(filepath.Join(dir, ".git", "objects", id[:2]), 0o755)
		os.WriteFile(filepath.Join(dir, ".git", "objects", id[:2], id[2:]), data, 0o644)
		s, err := Open(dirFS(dir), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if b, err := s.Blob(id); err == nil {
			t.Fatalf("a blob whose content has another id: %q", b)
		}
	})
}

// FuzzPack: any bytes as a pack's entry (its index naming it at offset
// 12) are read without a panic, within the limit and the delta depth.
func FuzzPack(f *testing.F) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("hello\n"))
	w.Close()
	f.Add(append([]byte{0x36}, z.Bytes()...))                       // a blob of 6 bytes
	f.Add(append([]byte{0x66, 0x0c}, z.Bytes()...))                 // an offset delta onto itself
	f.Add(append([]byte{0x76}, make([]byte, 20+len(z.Bytes()))...)) // a delta by id
	f.Fuzz(func(t *testing.T, entry []byte) {
		dir := t.TempDir()
		pack := filepath.Join(dir, ".git", "objects", "pack")
		os.MkdirAll(pack, 0o755)
		content := []byte("hello\n")
		h := sha1.New()
		h.Write([]byte("blob 6\x00"))
		h.Write(content)
		id := h.Sum(nil)
		p := append([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01"), entry...)
		os.WriteFile(filepath.Join(pack, "pack-x.pack"), p, 0o644)
		idx := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
		for i := 0; i < 256; i++ {
			n := uint32(0)
			if i >= int(id[0]) {
				n = 1
			}
			idx = binary.BigEndian.AppendUint32(idx, n)
		}
		idx = append(idx, id...)
		idx = append(idx, 0, 0, 0, 0)                // crc
		idx = binary.BigEndian.AppendUint32(idx, 12) // offset
		os.WriteFile(filepath.Join(pack, "pack-x.idx"), idx, 0o644)
		s, err := Open(dirFS(dir), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		b, err := s.Blob(hex.EncodeToString(id))
		if err == nil && !bytes.Equal(b, content) {
			t.Fatalf("blob %x read as %q", id, b)
		}
	})
}
