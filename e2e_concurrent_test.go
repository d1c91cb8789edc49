package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestConcurrentWriters: many hunk processes replace one file at once. The
// file always ends up exactly one writer's content (never torn), no temporary
// file is left, and among writers guarded by --if-match with the same hash
// exactly one wins (compare-and-swap under the lock: no lost update).
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared.txt")
	initial := []byte("initial\n")
	if err := os.WriteFile(target, initial, 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 24
	contents := map[string]bool{}
	for i := 0; i < n; i++ {
		contents[strings.Repeat(fmt.Sprintf("writer %02d\n", i), 2000+i)] = true
	}

	run := func(skip string, extra ...string) (ok, stale int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for c := range contents {
			if c == skip {
				continue
			}
			wg.Add(1)
			go func(c string) {
				defer wg.Done()
				cmd := exec.Command("hunk", append([]string{"-C", dir, "write", "shared.txt", "--content", c}, extra...)...)
				out, err := cmd.CombinedOutput()
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case strings.Contains(string(out), "changed since it was read"):
					stale++
				default:
					t.Errorf("writer failed: %v\n%s", err, out)
				}
			}(c)
		}
		wg.Wait()
		return ok, stale
	}

	if ok, _ := run(""); ok != n {
		t.Fatalf("%d of %d unguarded writers succeeded", ok, n)
	}
	got, _ := os.ReadFile(target)
	if !contents[string(got)] {
		t.Fatalf("file holds a torn or foreign content (%d bytes)", len(got))
	}

	// Every guarded writer changes the file: the one whose content is
	// already there would be a no-op, which succeeds without changing
	// anything and so lets a second writer's hash still match.
	h := sha256.Sum256(got)
	ok, stale := run(string(got), "--if-match", hex.EncodeToString(h[:]))
	if ok != 1 || stale != n-2 {
		t.Fatalf("guarded writers: %d succeeded, %d stale; want exactly 1 and %d", ok, stale, n-2)
	}
	got, _ = os.ReadFile(target)
	if !contents[string(got)] {
		t.Fatalf("file holds a torn or foreign content after guarded writes")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if workspace.IsTemp(e.Name()) {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}
