//go:build linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRaceDirectorySwappedForSymlink: while writes to d/f.txt run, another
// goroutine keeps exchanging the directory d with a symlink to a directory
// outside the workspace (atomically, renameat2 RENAME_EXCHANGE). Not one write
// may land outside; each either lands inside or is refused.
func TestRaceDirectorySwappedForSymlink(t *testing.T) {
	top := t.TempDir()
	top, _ = filepath.EvalSymlinks(top)
	ws := filepath.Join(top, "ws")
	out := filepath.Join(top, "outside")
	for _, d := range []string{filepath.Join(ws, "d"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(ws, "alt")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	iterations := 5000
	if testing.Short() {
		iterations = 500
	}
	const minSwaps = 200
	var stop atomic.Bool
	var swaps atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		a, b := filepath.Join(ws, "d"), filepath.Join(ws, "alt")
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			// Varying pauses, so that writes meet both states and swaps in
			// every phase of a write (open, sync, rename).
			n := swaps.Add(1)
			time.Sleep(time.Duration((n+1)%2*2000+n%7*20) * time.Microsecond)
		}
	}()
	var inside, refused int
	// At least `iterations` writes, and on until the swapper has swapped
	// often enough that every phase of a write met a swap (bounded).
	i := 0
	for ; (i < iterations || swaps.Load() < minSwaps) && i < 100*iterations; i++ {
		err := w.WriteFile("d/f.txt", []byte("payload"), WriteOptions{})
		if err == nil {
			inside++
		} else {
			refused++
			if refused == 1 {
				t.Logf("first refusal: %v", err)
			}
		}
		if _, err := os.Lstat(filepath.Join(out, "f.txt")); !errors.Is(err, os.ErrNotExist) {
			stop.Store(true)
			<-done
			t.Fatalf("iteration %d: a write landed outside the workspace", i)
		}
	}
	stop.Store(true)
	<-done
	ents, _ := os.ReadDir(out)
	if len(ents) != 0 {
		t.Fatalf("outside directory holds %d entries after the race (%v)", len(ents), ents[0].Name())
	}
	t.Logf("%d writes: %d inside, %d refused; %d swaps", i, inside, refused, swaps.Load())
	if swaps.Load() < minSwaps || inside == 0 || refused == 0 {
		t.Fatalf("%d swaps, %d writes inside, %d refused: the race was not exercised", swaps.Load(), inside, refused)
	}
}
