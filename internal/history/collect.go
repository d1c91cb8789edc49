package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The collection bounds hunk's histories as a whole (the directory that
// holds one per workspace), where each history's prune bounds only its
// own: a workspace used once — a temporary checkout, a CI job's — leaves a
// history no later run of it would prune. Any run that opens a history
// collects, at most once an hour (the time of the root's .collected file):
// the histories of workspaces gone (their directory no longer there) and
// unused for a day, those unused for longer than the age limit, and, while
// the histories together hold more than the total limit, the least recently
// used — never the run's own, nor one used in the last hour. A history is
// taken away whole, under its lock (one in use is passed over): renamed out
// of the way, then removed.

const (
	collectEvery   = time.Hour
	collectGone    = 24 * time.Hour // a workspace gone this long: its history goes
	collectRecent  = time.Hour      // a history used since is never collected
	collectRemoves = 256            // histories removed by one run at most
	ownerFile      = "workspace"    // the workspace's path, as the history was opened for it
	collectedFile  = ".collected"
)

// Collected is what a collection did.
type Collected struct {
	Ran     bool  // false: the last one is recent
	Removed int   // histories removed
	Freed   int64 // their bytes, as their summaries count them
	Left    int64 // the bytes the histories hold after it
}

// NoteOwner records the workspace a history belongs to (once), so that a
// collection can tell a workspace that is gone.
func (s *Store) NoteOwner(path string) {
	p := filepath.Join(s.dir, ownerFile)
	if _, err := os.Lstat(p); err == nil {
		return
	}
	_ = writeAtomic(p, []byte(path))
}

// historyDir is one history as a collection sees it.
type historyDir struct {
	name  string
	used  time.Time // its log's (or the directory's) modification time
	bytes int64     // its summary's contents and its log
	gone  bool      // its workspace no longer exists
}

// Collect collects the histories below root (one directory per workspace)
// other than self's, as the package comment says, within limits (Age, and
// Total: 0 for none).
func Collect(root, self string, limits Limits, now time.Time) (Collected, error) {
	var c Collected
	marker := filepath.Join(root, collectedFile)
	if fi, err := os.Lstat(marker); err == nil && now.Sub(fi.ModTime()) < collectEvery && fi.Size() == 0 {
		return c, nil // (a marker with content: the last one stopped at its budget)
	}
	if err := writeAtomic(marker, nil); err != nil {
		return c, err
	}
	c.Ran = true
	entries, err := os.ReadDir(root)
	if err != nil {
		return c, err
	}
	var dirs []historyDir
	var total int64
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".collected-") {
			os.RemoveAll(filepath.Join(root, e.Name())) // one an earlier collection did not finish removing
			continue
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == filepath.Base(self) {
			continue
		}
		h := readHistoryDir(filepath.Join(root, e.Name()))
		h.name = e.Name()
		dirs = append(dirs, h)
		total += h.bytes
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].used.Before(dirs[j].used) }) // least recently used first
	for _, h := range dirs {
		if c.Removed >= collectRemoves {
			_ = writeAtomic(marker, []byte("more\n"))
			break
		}
		idle := now.Sub(h.used)
		switch {
		case idle < collectRecent:
			continue
		case h.gone && idle >= collectGone, limits.Age > 0 && idle > limits.Age, limits.Total > 0 && total > limits.Total:
		default:
			continue
		}
		if removeHistory(root, h.name) {
			c.Removed++
			c.Freed += h.bytes
			total -= h.bytes
		}
	}
	c.Left = total
	return c, nil
}

// readHistoryDir reads what a collection needs of the history at dir.
func readHistoryDir(dir string) historyDir {
	var h historyDir
	if fi, err := os.Lstat(filepath.Join(dir, "log")); err == nil {
		h.used, h.bytes = fi.ModTime(), fi.Size()
	} else if fi, err := os.Lstat(dir); err == nil {
		h.used = fi.ModTime()
	}
	if b, err := readFile(filepath.Join(dir, "log.sum")); err == nil {
		var sum summary
		if json.Unmarshal(b, &sum) == nil {
			h.bytes += sum.Bytes
		}
	}
	if b, err := readFile(filepath.Join(dir, ownerFile)); err == nil && filepath.IsAbs(string(b)) {
		if _, err := os.Lstat(string(b)); os.IsNotExist(err) {
			h.gone = true
		}
	}
	return h
}

// removeHistory takes the history root/name away, unless it is in use (its
// lock held): renamed under its lock, then removed.
func removeHistory(root, name string) bool {
	dir := filepath.Join(root, name)
	f, err := openFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // an operation records in it now
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	away := filepath.Join(root, ".collected-"+name+"-"+hex.EncodeToString(r[:]))
	if os.Rename(dir, away) != nil {
		return false
	}
	return os.RemoveAll(away) == nil
}
