package patchparse

import "unsafe"

// A chunk read from a patch keeps its lines' texts where they are: each
// line holds where its text lies in the patch's text (cutter), so a big
// diff's million lines copy nothing and hold no pointer.

// cutter makes the lines of chunks whose texts are cut from src (the
// patch's text, which splitLines cut into lines).
type cutter struct {
	src  string
	base uintptr // where src starts
}

func newCutter(src string) cutter {
	if len(src) > 1<<31-1 {
		return cutter{} // (offsets are 32-bit: every line is copied)
	}
	return cutter{src: src, base: uintptr(unsafe.Pointer(unsafe.StringData(src)))}
}

// at is where text lies in src; false when it is not a substring of it.
func (k cutter) at(text string) (int32, bool) {
	if text == "" {
		return 0, true
	}
	if k.src == "" {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	if p < k.base || p-k.base+uintptr(len(text)) > uintptr(len(k.src)) {
		return 0, false
	}
	return int32(p - k.base), true
}

// cutLines sets c's n lines to those each gives to add, their texts where
// they lie in k's text, or copied when one of them is not cut from it
// (each is then called again).
func (k cutter) cutLines(c *Chunk, n int, each func(add func(op byte, line int, text string))) {
	c.lines = make([]ChunkLine, 0, n)
	ok := true
	each(func(op byte, line int, text string) {
		at, in := k.at(text)
		ok = ok && in
		c.lines = append(c.lines, ChunkLine{Op: op, Line: int32(line), at: at, n: int32(len(text))})
	})
	if ok {
		c.src = k.src
		return
	}
	var ls []Line
	each(func(op byte, line int, text string) {
		ls = append(ls, Line{Op: op, Line: int32(line), Text: text})
	})
	c.SetLines(ls)
}
