package history

import (
	"fmt"
	"io"
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

// readFile reads the history's file path whole.
func readFile(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
