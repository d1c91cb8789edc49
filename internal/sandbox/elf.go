package sandbox

import (
	"encoding/binary"
	"io"
	"os"
	"strings"
)

// ELFInterp reads the dynamic loader an ELF executable names (its
// PT_INTERP program header): "" for a static one; elf false when the file
// is not ELF at all (a script). It reads the header and the program
// headers only — debug/elf would link DWARF, compression and their
// package initialisation into every hunk run for one field.
func ELFInterp(path string) (interp string, elf bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var h [64]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "\x7fELF" {
		return "", false
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if h[5] == 2 {
		bo = binary.BigEndian
	}
	var phoff, phentsize, phnum uint64
	switch h[4] {
	case 1: // 32-bit
		phoff, phentsize, phnum = uint64(bo.Uint32(h[28:])), uint64(bo.Uint16(h[42:])), uint64(bo.Uint16(h[44:]))
	case 2: // 64-bit
		phoff, phentsize, phnum = bo.Uint64(h[32:]), uint64(bo.Uint16(h[54:])), uint64(bo.Uint16(h[56:]))
	default:
		return "", false
	}
	if phentsize < 32 || phnum > 4096 {
		return "", true
	}
	ph := make([]byte, phentsize)
	for i := uint64(0); i < phnum; i++ {
		if _, err := f.ReadAt(ph, int64(phoff+i*phentsize)); err != nil {
			return "", true
		}
		if bo.Uint32(ph[0:]) != 3 { // PT_INTERP
			continue
		}
		var off, size uint64
		if h[4] == 1 {
			off, size = uint64(bo.Uint32(ph[4:])), uint64(bo.Uint32(ph[16:]))
		} else {
			off, size = bo.Uint64(ph[8:]), bo.Uint64(ph[32:])
		}
		b := make([]byte, min(size, 4096))
		n, _ := f.ReadAt(b, int64(off))
		return strings.TrimRight(string(b[:n]), "\x00"), true
	}
	return "", true
}
