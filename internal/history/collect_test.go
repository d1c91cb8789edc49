package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// collectRoot makes histories below a root, one per name, each with one
// operation of size bytes, its workspace a directory of its own, used
// (its log's time) idle ago.
func collectRoot(t *testing.T, now time.Time, hs map[string]struct {
	idle time.Duration
	size int
	gone bool
}) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "history")
	for name, h := range hs {
		s, err := Open(filepath.Join(root, name), Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(t.TempDir(), name)
		os.Mkdir(ws, 0o755)
		s.NoteOwner(ws)
		if h.gone {
			os.Remove(ws)
		}
		o, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		pre, err := o.Put([]byte(strings.Repeat("x", h.size)))
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Prepare(&Entry{Command: "write", Time: now, Files: []FileChange{{Path: "f", Pre: pre}}}); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		s.writeSummary([]*Entry{{Time: now, Files: []FileChange{{Path: "f", Pre: pre}}}}, sweepState{})
		at := now.Add(-h.idle)
		os.Chtimes(filepath.Join(root, name, "log"), at, at)
	}
	return root
}

func present(root string) []string {
	var names []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCollect: the histories of workspaces gone for a day and of those
// unused past the age limit go, then the least recently used while the
// total is over its limit; the run's own and one used in the last hour
// stay, however large; a second run within the hour does nothing.
func TestCollect(t *testing.T) {
	now := time.Now()
	type h = struct {
		idle time.Duration
		size int
		gone bool
	}
	root := collectRoot(t, now, map[string]h{
		"self":      {idle: 100 * 24 * time.Hour, size: 5000},
		"gone-old":  {idle: 48 * time.Hour, size: 10, gone: true},
		"gone-new":  {idle: 10 * time.Minute, size: 10, gone: true}, // used just now: stays
		"gone-hour": {idle: 2 * time.Hour, size: 10, gone: true},    // gone, but not for a day
		"aged":      {idle: 40 * 24 * time.Hour, size: 10},
		"lru-1":     {idle: 20 * 24 * time.Hour, size: 3000},
		"lru-2":     {idle: 10 * 24 * time.Hour, size: 3000},
		"lru-3":     {idle: 5 * 24 * time.Hour, size: 3000},
		"busy":      {idle: 3 * time.Minute, size: 9000}, // over the total alone: recent, stays
	})
	self := filepath.Join(root, "self")
	c, err := Collect(root, self, Limits{Age: 30 * 24 * time.Hour, Total: 16000}, now)
	if err != nil || !c.Ran {
		t.Fatal(c, err)
	}
	got := strings.Join(present(root), " ")
	if want := "busy gone-hour gone-new lru-3 self"; got != want {
		t.Fatalf("after the collection: %s, want %s (%+v)", got, want, c)
	}
	if c.Removed != 4 || c.Left > 16000 {
		t.Fatalf("%+v", c)
	}
	// Within the hour: not again.
	os.RemoveAll(filepath.Join(root, "gone-new", "log"))
	if c, _ := Collect(root, self, Limits{Total: 1}, now.Add(10*time.Minute)); c.Ran {
		t.Fatalf("a second collection within the hour ran: %+v", c)
	}
}

// TestCollectInUse: a history whose lock an operation holds is passed
// over.
func TestCollectInUse(t *testing.T) {
	now := time.Now()
	root := collectRoot(t, now, map[string]struct {
		idle time.Duration
		size int
		gone bool
	}{"old": {idle: 90 * 24 * time.Hour, size: 10}})
	f, err := os.OpenFile(filepath.Join(root, "old", "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	c, err := Collect(root, filepath.Join(root, "self"), Limits{Age: time.Hour}, now)
	if err != nil || c.Removed != 0 {
		t.Fatal(c, err)
	}
	if _, err := os.Stat(filepath.Join(root, "old", "log")); err != nil {
		t.Fatal("a history in use was removed")
	}
}
