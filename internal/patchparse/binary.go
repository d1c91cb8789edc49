package patchparse

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/result"
)

// Git's binary patches, as git diff --binary and git format-patch write
// them:
//
//	GIT binary patch
//	literal 12          (or "delta 34": the size of the inflated data)
//	<lines: a length character, then base85 of the zlib-deflated data>
//	<empty line>
//	literal 8           (the reverse hunk, for git apply -R)
//	...
//	<empty line>
//
// A line's first character is how many bytes it carries ('A'-'Z' 1 to 26,
// 'a'-'z' 27 to 52); the rest is base85, 5 characters for every 4 bytes.
// A literal hunk is the whole content; a delta hunk is git's delta format
// (ApplyDelta) against the old content. The hunks are inflated when the
// patch is parsed, so a damaged one is refused before anything is written.

// Binary is a file's binary patch: the forward hunk and, when the patch has
// one, the reverse hunk.
type Binary struct {
	Forward, Reverse *BinaryHunk
}

// BinaryHunk is one hunk of a binary patch, inflated.
type BinaryHunk struct {
	Delta bool   // Data is a delta against the old content; else the content itself
	Data  []byte // the literal content, or the delta
}

// Apply returns the content the hunk makes of old.
func (h *BinaryHunk) Apply(old []byte) ([]byte, error) {
	if !h.Delta {
		return h.Data, nil
	}
	return ApplyDelta(old, h.Data)
}

// Parts returns the content the hunk makes of old as pieces to write one
// after the other (DeltaParts): what a delta makes is never joined.
func (h *BinaryHunk) Parts(old []byte) ([][]byte, error) {
	if !h.Delta {
		return [][]byte{h.Data}, nil
	}
	return DeltaParts(old, h.Data)
}

// readBinary reads the hunks after a "GIT binary patch" line at L[i-1]; it
// returns the patch and the index of the first line after it. A hunk whose
// content would be over max bytes — as its header says, as a delta's
// instructions would make it — is TOO_LARGE, refused before it is made.
func readBinary(L lines, i, hi int, max int64) (*Binary, int, error) {
	b := &Binary{}
	for k := 0; k < 2 && i < hi; k++ {
		head := strings.TrimSuffix(L.at(i), "\r")
		kind, size, ok := strings.Cut(head, " ")
		if !ok || kind != "literal" && kind != "delta" {
			if k == 0 {
				return nil, i, hunkError(i, "make the diff again with git diff --binary; the binary patch is damaged",
					"binary patch: expected 'literal N' or 'delta N', found '%s'", head)
			}
			break // no reverse hunk
		}
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 {
			return nil, i, hunkError(i, "make the diff again with git diff --binary; the binary patch is damaged",
				"binary patch: bad size in '%s'", head)
		}
		if int64(n) > max {
			return nil, i, tooLarge(i, fmt.Sprintf("its %s is %d bytes", kind, n), max)
		}
		start := i
		i++
		end := i
		for end < hi && strings.TrimSuffix(L.at(end), "\r") != "" {
			end++
		}
		deflated := make([]byte, 0, (end-i)*52) // 52 bytes at most a line
		for ; i < end; i++ {
			deflated, err = decodeBase85Line(deflated, strings.TrimSuffix(L.at(i), "\r"))
			if err != nil {
				return nil, i, hunkError(i, "make the diff again with git diff --binary; the binary patch is damaged",
					"binary patch: %v", err)
			}
		}
		if i < hi {
			i++ // the empty line that ends the hunk
		}
		data, err := inflate(deflated, n)
		if err != nil {
			return nil, i, hunkError(start, "make the diff again with git diff --binary; the binary patch is damaged",
				"binary patch: %v", err)
		}
		h := &BinaryHunk{Delta: kind == "delta", Data: data}
		if h.Delta {
			// What the instructions make, counted before anything is made.
			src, dst, err := DeltaSizes(data)
			if err != nil {
				return nil, i, hunkError(start, "make the diff again with git diff --binary; the binary patch is damaged",
					"binary patch: %v", err)
			}
			if int64(dst) > max {
				return nil, i, tooLarge(start, fmt.Sprintf("its delta makes a file of %d bytes", dst), max)
			}
			if made, err := deltaMakes(data, src); err != nil || made != dst {
				if err == nil {
					err = fmt.Errorf("the delta's instructions make %d bytes, not the %d it says", made, dst)
				}
				return nil, i, hunkError(start, "make the diff again with git diff --binary; the binary patch is damaged",
					"binary patch: %v", err)
			}
		}
		if k == 0 {
			b.Forward = h
		} else {
			b.Reverse = h
		}
	}
	if b.Forward == nil {
		return nil, i, hunkError(i-1, "make the diff again with git diff --binary; the binary patch is damaged",
			"binary patch without data")
	}
	return b, i, nil
}

// tooLarge refuses a binary hunk (at line index idx) whose content would
// be over max bytes.
func tooLarge(idx int, what string, max int64) *result.Error {
	return result.Errorf(result.TooLarge, "Invalid patch hunk on line %d: binary patch: %s, over the limit of %d bytes", idx+1, what, max).
		WithHint("raise the limit with --max-bytes (apply-patch.max-bytes in the config) if the patch is one you trust").
		WithDetail("line", idx+1)
}

// inflaters keeps zlib readers for reuse: each holds a 32 KiB window, and
// a diff of a tree's binary files has thousands of hunks (1,249 files of
// k8s.io/api's testdata, two hunks each: 98 MB of windows made anew).
var inflaters sync.Pool

// inflate decompresses zlib data that must come to exactly n bytes.
func inflate(data []byte, n int) ([]byte, error) {
	var r io.ReadCloser
	var err error
	if z, ok := inflaters.Get().(io.ReadCloser); ok {
		r, err = z, z.(zlib.Resetter).Reset(bytes.NewReader(data), nil)
	} else {
		r, err = zlib.NewReader(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("the data does not inflate (%v)", err)
	}
	defer inflaters.Put(r)
	// deflate compresses at most 1032:1, so the data bounds what it can
	// inflate to: the stated size is trusted only that far.
	buf := bytes.NewBuffer(make([]byte, 0, min(n, 1032*len(data)+64)+1))
	if _, err := io.Copy(buf, io.LimitReader(r, int64(n)+1)); err != nil {
		return nil, fmt.Errorf("the data does not inflate (%v)", err)
	}
	if buf.Len() != n {
		return nil, fmt.Errorf("the data inflates to %d bytes, not the %d its header says", buf.Len(), n)
	}
	return buf.Bytes(), nil
}

// base85 is git's base85 alphabet.
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

var base85Value = func() (v [256]byte) {
	for i := range v {
		v[i] = 0xff
	}
	for i := 0; i < len(base85); i++ {
		v[base85[i]] = byte(i)
	}
	return v
}()

// decodeBase85Line decodes one line of a binary hunk (its length
// character, then base85) and appends the bytes to dst.
func decodeBase85Line(dst []byte, l string) ([]byte, error) {
	if l == "" {
		return dst, fmt.Errorf("empty data line")
	}
	var n int
	switch c := l[0]; {
	case c >= 'A' && c <= 'Z':
		n = int(c-'A') + 1
	case c >= 'a' && c <= 'z':
		n = int(c-'a') + 27
	default:
		return dst, fmt.Errorf("bad length character %q in a data line", c)
	}
	enc := l[1:]
	if len(enc) != (n+3)/4*5 {
		return dst, fmt.Errorf("a data line of %d characters for %d bytes", len(enc), n)
	}
	start := len(dst)
	for j := 0; j < len(enc); j += 5 {
		var acc uint64
		for k := 0; k < 5; k++ {
			d := base85Value[enc[j+k]]
			if d == 0xff {
				return dst[:start], fmt.Errorf("bad base85 character %q", enc[j+k])
			}
			acc = acc*85 + uint64(d)
		}
		if acc > 0xffffffff {
			return dst[:start], fmt.Errorf("base85 overflow")
		}
		dst = append(dst, byte(acc>>24), byte(acc>>16), byte(acc>>8), byte(acc))
	}
	return dst[:start+n], nil
}

// DeltaSizes reads a git delta's header: the size of the source it applies
// to and of the result it makes, as it states them.
func DeltaSizes(delta []byte) (src, dst int, err error) {
	d := delta
	varint := func() (int, bool) {
		v, shift := 0, 0
		for len(d) > 0 {
			c := d[0]
			d = d[1:]
			v |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				return v, true
			}
			if shift > 56 {
				return 0, false
			}
		}
		return 0, false
	}
	src, ok1 := varint()
	dst, ok2 := varint()
	if !ok1 || !ok2 || src < 0 || dst < 0 {
		return 0, 0, fmt.Errorf("a damaged delta")
	}
	return src, dst, nil
}

// deltaOps walks a git delta's instructions after its header: each copy
// of size bytes at off of the source (inside a source of srcLen bytes), or
// insert of the bytes lit; f stops the walk with an error.
func deltaOps(delta []byte, srcLen int, f func(off, size int, lit []byte) error) error {
	// Skip the two varints.
	for k := 0; k < 2; k++ {
		for len(delta) > 0 && delta[0]&0x80 != 0 {
			delta = delta[1:]
		}
		if len(delta) == 0 {
			return fmt.Errorf("a damaged delta")
		}
		delta = delta[1:]
	}
	for len(delta) > 0 {
		c := delta[0]
		delta = delta[1:]
		switch {
		case c&0x80 != 0:
			// Bits 0-3 say which bytes of the offset follow, bits 4-6
			// which bytes of the size (little-endian, absent ones zero).
			gather := func(bits byte, n int) (int, bool) {
				v := 0
				for k := 0; k < n; k++ {
					if bits&(1<<k) != 0 {
						if len(delta) == 0 {
							return 0, false
						}
						v |= int(delta[0]) << (8 * k)
						delta = delta[1:]
					}
				}
				return v, true
			}
			off, ok1 := gather(c, 4)
			size, ok2 := gather(c>>4, 3)
			if !ok1 || !ok2 {
				return fmt.Errorf("a damaged delta")
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > srcLen || off+size < off {
				return fmt.Errorf("a delta copy out of bounds")
			}
			if err := f(off, size, nil); err != nil {
				return err
			}
		case c != 0:
			n := int(c)
			if n > len(delta) {
				return fmt.Errorf("a damaged delta")
			}
			if err := f(0, n, delta[:n]); err != nil {
				return err
			}
			delta = delta[n:]
		default:
			return fmt.Errorf("a damaged delta (opcode 0)")
		}
	}
	return nil
}

// deltaMakes is how many bytes a delta's instructions make from a source
// of srcLen bytes, counted without making them (stopping past 1<<62).
func deltaMakes(delta []byte, srcLen int) (int, error) {
	n := 0
	err := deltaOps(delta, srcLen, func(_, size int, _ []byte) error {
		if n += size; n > 1<<62 {
			return fmt.Errorf("a delta that makes more than it can say")
		}
		return nil
	})
	return n, err
}

// ApplyDelta applies a git delta (the format of packs and binary patches)
// to src: the source's size and the result's size as varints, then copy
// instructions (high bit set: offset and size bytes as the low bits say)
// and insert instructions (1 to 127 literal bytes). What the instructions
// make is counted first and must be the size the header states: the
// result is allocated once, never grown past it.
func ApplyDelta(src, delta []byte) ([]byte, error) {
	dstSize, err := checkDelta(src, delta)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, dstSize)
	err = deltaOps(delta, len(src), func(off, size int, lit []byte) error {
		if lit != nil {
			out = append(out, lit...)
		} else {
			out = append(out, src[off:off+size]...)
		}
		return nil
	})
	return out, err
}

// checkDelta checks a delta against its source: the size its header
// states for it, and the size of the result against what the instructions
// make (counted, not made). It returns the result's size.
func checkDelta(src, delta []byte) (int, error) {
	srcSize, dstSize, err := DeltaSizes(delta)
	if err != nil {
		return 0, err
	}
	if srcSize != len(src) {
		return 0, fmt.Errorf("the delta is for a file of %d bytes, not %d", srcSize, len(src))
	}
	made, err := deltaMakes(delta, len(src))
	if err != nil {
		return 0, err
	}
	if made != dstSize {
		return 0, fmt.Errorf("the delta makes %d bytes, not %d", made, dstSize)
	}
	return dstSize, nil
}

// minPart is the shortest piece DeltaParts keeps as a slice of its own;
// shorter ones are copied together into one.
const minPart = 64

// DeltaParts is ApplyDelta's result as pieces to write one after the
// other: each copy a slice of src (adjacent copies one slice), each insert
// a slice of the delta, pieces under minPart bytes copied together. A
// delta of a few bytes can make hundreds of megabytes (each byte a copy of
// 64 KiB); its parts hold a slice header for each copy of minPart bytes
// or more (at least one byte of delta each) and at most 32 bytes for each
// byte of delta in the short ones: they are bounded by the delta, never by
// what it makes.
func DeltaParts(src, delta []byte) ([][]byte, error) {
	if _, err := checkDelta(src, delta); err != nil {
		return nil, err
	}
	var parts [][]byte
	var short []byte
	start, end := -1, -1 // the copy parts' last element is src[start:end], or -1
	err := deltaOps(delta, len(src), func(off, size int, lit []byte) error {
		p := lit
		if p == nil {
			if off == end && len(short) == 0 {
				end += size
				parts[len(parts)-1] = src[start:end:end]
				return nil
			}
			p = src[off : off+size : off+size]
		}
		if len(p) < minPart {
			short = append(short, p...)
			start, end = -1, -1
			return nil
		}
		if len(short) > 0 {
			parts, short = append(parts, short), nil
		}
		parts = append(parts, p)
		start, end = -1, -1
		if lit == nil {
			start, end = off, off+size
		}
		return nil
	})
	if len(short) > 0 {
		parts = append(parts, short)
	}
	return parts, err
}
