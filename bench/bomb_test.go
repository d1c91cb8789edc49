package bench

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBinaryPatchBombs runs hunk apply-patch over binary patches of a
// few hundred bytes that stand for gigabytes — a delta stating a 16 GiB
// result its copies of a 64 KiB file would make, a delta stating 100
// bytes whose copies make 200 MiB, an 8 MiB literal of zeros under a 1 MB
// limit — and reports each refusal's peak RSS (under GNU time), failing
// when one holds more than 64 MiB: what a patch can make is bounded by
// apply-patch.max-bytes and proven before it is made.
func BenchmarkBinaryPatchBombs(b *testing.B) {
	if timeBin == "" {
		b.Skip("GNU time (/usr/bin/time) measures the peak RSS; install it")
	}
	bin := hunkBin(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "z.bin"), make([]byte, 65536), 0o644); err != nil {
		b.Fatal(err)
	}
	header := "diff --git a/z.bin b/z.bin\nindex c97c12f9b0a24bfc19c74a2b265a97c924137775..3301331bed0971ef2a52684ad73baa99ed523573 100644\nGIT binary patch\n"
	bombs := []struct {
		name  string
		hunk  string
		extra []string
	}{
		{"delta-16GiB", "delta " + binaryHunk(copies(65536, 16<<30, 262144)), nil},
		{"delta-lies", "delta " + binaryHunk(copies(65536, 100, 3200)), nil},
		{"literal-8MiB", "literal " + binaryHunk(make([]byte, 8<<20)), []string{"--max-bytes", "1000000"}},
	}
	for b.Loop() {
		for _, bomb := range bombs {
			patch := filepath.Join(dir, bomb.name+".patch")
			if err := os.WriteFile(patch, []byte(header+bomb.hunk), 0o644); err != nil {
				b.Fatal(err)
			}
			rss := refusedRSS(b, dir, append([]string{bin, "apply-patch"}, append(bomb.extra, patch)...))
			b.ReportMetric(mb(rss), bomb.name+"-maxrss-MB")
			if rss > 64<<20 {
				b.Errorf("%s: %d bytes of patch held %.0f MiB", bomb.name, len(bomb.hunk), mb(rss))
			}
		}
	}
}

// refusedRSS runs argv in dir under GNU time, expects it to fail (exit 1,
// the patch refused), and returns its peak RSS.
func refusedRSS(b *testing.B, dir string, argv []string) int64 {
	f, err := os.CreateTemp("", "hunk-bench-rss-")
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.Command(timeBin, append([]string{"-f", "%M", "-o", f.Name()}, argv...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		b.Fatalf("%v: want a refusal (exit 1), got %v\n%s", argv, err, out)
	}
	t, err := os.ReadFile(f.Name())
	if err != nil {
		b.Fatal(err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(lastLine(string(t))), 10, 64)
	if err != nil {
		b.Fatalf("GNU time said %q", t)
	}
	return kb * 1024
}

// copies is a git delta over a source of src bytes stating a result of dst
// bytes, made of n copies of the whole first 64 KiB.
func copies(src, dst, n int) []byte {
	d := append(deltaVarint(uint64(src)), deltaVarint(uint64(dst))...)
	for i := 0; i < n; i++ {
		d = append(d, 0x80) // copy: offset 0, size 0 (64 KiB)
	}
	return d
}

func deltaVarint(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// binaryHunk is data as a binary hunk's size line and data lines: zlib,
// then git's base85, 52 bytes a line.
func binaryHunk(data []byte) string {
	const b85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(data)
	w.Close()
	var s strings.Builder
	fmt.Fprintf(&s, "%d\n", len(data))
	for d := z.Bytes(); len(d) > 0; {
		line := d[:min(52, len(d))]
		d = d[len(line):]
		if len(line) <= 26 {
			s.WriteByte(byte('A' + len(line) - 1))
		} else {
			s.WriteByte(byte('a' + len(line) - 27))
		}
		for i := 0; i < len(line); i += 4 {
			var acc uint32
			for k := 0; k < 4; k++ {
				acc <<= 8
				if i+k < len(line) {
					acc |= uint32(line[i+k])
				}
			}
			var c [5]byte
			for k := 4; k >= 0; k-- {
				c[k] = b85[acc%85]
				acc /= 85
			}
			s.Write(c[:])
		}
		s.WriteByte('\n')
	}
	return s.String() + "\n"
}
