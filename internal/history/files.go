package history

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Every file of the history is opened here: never through a symbolic
// link (O_NOFOLLOW), never waiting on one that is not a regular file (a
// FIFO, a device such as /dev/zero put in a file's place would block or
// never end), refused then with an error that says what to remove.

// openFile opens the history's file path with flag (os.OpenFile's) and,
// for a new file, perm.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%v): remove it", path, fi.Mode().Type())
	}
	return f, nil
}

// readFile reads the history's file path whole (into a buffer of its
// size: io.ReadAll's doubling cost a log of 1.2 MB twice that in copies).
func readFile(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// readAll reads f whole into a buffer of its size (io.ReadAll grows one
// from 512 bytes, copying and clearing it each time: a third of the time
// a big patch's old contents took to copy into a history on another file
// system).
func readAll(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(int(min(fi.Size(), 1<<30)) + bytes.MinRead) // (ReadFrom grows it only when less is free)
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}
