//go:build unix

package edit

import (
	"syscall"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// mapMin is the size from which a file is mapped rather than read: mapping
// skips copying a big file into fresh memory (most of the cost of reading
// it), and the unchanged parts are written out straight from the page cache.
const mapMin = 1 << 20

// readContent returns the content of name (whose size is size) and a
// function that releases it. Big files are mapped read-only; a fault on the
// mapping (the file truncated under us by a writer that does not take
// hunk's lock) is turned into an error by Run.
func readContent(files workspace.FS, name string, size int64) ([]byte, func(), error) {
	if size < mapMin || int64(int(size)) != size {
		b, err := files.ReadFile(name)
		return b, func() {}, err
	}
	f, err := files.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < mapMin {
		b, err := files.ReadFile(name)
		return b, func() {}, err
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		b, err := files.ReadFile(name)
		return b, func() {}, err
	}
	return m, func() { _ = syscall.Munmap(m) }, nil
}

// mapPopulate asks Linux to map the whole (cached) file at once: one call
// instead of a page fault per 64 KB on the first pass over it.
const mapPopulate = 0x8000 // MAP_POPULATE; ignored where unknown
