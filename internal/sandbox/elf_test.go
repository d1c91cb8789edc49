package sandbox

import (
	"debug/elf"
	"io"
	"os"
	"strings"
	"testing"
)

// TestELFInterp reads the loader of real executables as debug/elf does.
func TestELFInterp(t *testing.T) {
	exe, _ := os.Executable()
	paths := []string{exe, "/bin/sh", "/usr/bin/env", "/bin/busybox", "/etc/passwd", "/nonexistent"}
	for _, p := range paths {
		wantInterp, wantELF := "", false
		if f, err := elf.Open(p); err == nil {
			wantELF = true
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					b, _ := io.ReadAll(prog.Open())
					wantInterp = strings.TrimRight(string(b), "\x00")
				}
			}
			f.Close()
		}
		interp, isELF := ELFInterp(p)
		if interp != wantInterp || isELF != wantELF {
			t.Errorf("ELFInterp(%s) = %q, %v; debug/elf says %q, %v", p, interp, isELF, wantInterp, wantELF)
		}
	}
}
