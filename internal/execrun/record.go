package execrun

import (
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// A recorded command (exec --record, exec.record): what it changes in the
// workspace becomes one operation of the history, so hunk undo takes it
// back. Before it runs, the workspace is scanned and every file the
// command may change has its content kept — in the history's snapshot,
// read and stored only when the file changed since the last recorded run
// (history.Snapshot; the history's lock not held while the command
// runs); after it, a
// second scan finds what changed — size, modification time, inode or mode
// first, the content's hash where they differ — and the entry names those
// files' old contents (copied into the history's pack) and new hashes.
// The scan leaves out .git (undo never touches it), hunk's temporary
// files and whatever the path policy keeps the command from writing. The
// cost is a stat of every file and a read and a copy of those changed
// since the last recorded run (docs/exec.md).

// scanned is one entry of the workspace as a scan found it.
type scanned struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	ctime time.Time
	ino   uint64
	link  string
	pre   *history.Image // a file's content, stored before the command ran
}

// Scan is the workspace before a recorded command, and where its
// contents went. Drop lets them go (a run that did not start).
type Scan struct {
	store  *history.Store
	files  map[string]scanned
	unmark func() // ends the mark that keeps the snapshot's pack as it is
}

// Drop ends the scan's hold on the snapshot (a run that did not start,
// or one recorded).
func (s *Scan) Drop() {
	if s != nil { // a run that records nothing has no scan
		s.unmark()
	}
}

// scanWorkspace lists the workspace's files, links and directories that
// a command may change (above), with their metadata.
func scanWorkspace(ws *workspace.Workspace) (map[string]scanned, error) {
	out := map[string]scanned{}
	var walk func(dir string) error
	walk = func(dir string) error {
		// Through the workspace's root: a directory the command swapped
		// for a link to elsewhere is never listed.
		ents, err := ws.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			n := e.Name()
			name := n
			if dir != "." {
				name = dir + "/" + n
			}
			if strings.EqualFold(n, ".git") || workspace.IsTemp(n) || n == workspace.JournalDir || ws.CheckWrite(name) != nil {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // gone meanwhile
			}
			s := scanned{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
			s.ctime, s.ino = changeTime(fi)
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				if s.link, err = ws.Readlink(name); err != nil {
					continue
				}
			case fi.IsDir():
				if err := walk(name); err != nil {
					return err
				}
			case !fi.Mode().IsRegular():
				continue // a device, a socket, a FIFO: not a file to keep
			}
			out[name] = s
		}
		return nil
	}
	return out, walk(".")
}

// RecordBefore scans the workspace and keeps every file's content before
// a recorded command runs: from the snapshot the last recorded run left,
// where the file's stat says it is unchanged since, read and stored in the
// snapshot otherwise (history.Snapshot).
func RecordBefore(ws *workspace.Workspace) (*Scan, error) {
	store, err := ws.History()
	if err != nil {
		return nil, result.Errorf(result.NotFound, "exec --record: no history: %v", err).
			WithHint("hunk records into $XDG_STATE_HOME/hunk/history unless --no-history or history: false")
	}
	start := time.Now()
	files, err := scanWorkspace(ws)
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "exec --record: scanning the workspace")
	}
	var total int64
	for _, f := range files {
		if f.mode.IsRegular() {
			total += f.size
		}
	}
	if max := ws.HistoryLimit().Bytes; max > 0 && total > max {
		return nil, result.Errorf(result.TooLarge, "exec --record: the workspace's files hold %d bytes, more than the history keeps (%d)", total, max).
			WithHint("raise history-max-bytes in the config, or run the command without --record")
	}
	op, err := store.Begin() // the lock, while the snapshot is read and written
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "exec --record: the history")
	}
	defer op.Release()
	mark, unmark, err := store.MarkRun()
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "exec --record: the history")
	}
	scan := &Scan{store: store, files: files, unmark: unmark}
	fail := func(err error, what string) (*Scan, error) {
		scan.Drop()
		return nil, result.Wrap(result.IOError, err, "exec --record: "+what)
	}
	sn := op.Snapshot()
	if !store.RunsUnderWay(mark) {
		if err := op.CompactSnapshot(sn); err != nil {
			return fail(err, "the history's snapshot")
		}
	}
	for name, f := range files {
		if !f.mode.IsRegular() {
			continue
		}
		im, ok := sn.Unchanged(name, f.ino, f.size, f.mtime, f.ctime, f.mode)
		if !ok {
			data, err := ws.ReadFileRaw(name)
			if err != nil {
				delete(files, name) // gone or unreadable: not kept, not compared
				continue
			}
			if im, err = op.PutSnap(sn, name, data, f.ino, f.mtime, f.ctime, f.mode); err != nil {
				return fail(err, "storing "+name)
			}
		}
		im.Mode = f.mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		f.pre = im
		files[name] = f
	}
	sn.Forget(func(name string) bool { f, ok := files[name]; return ok && f.mode.IsRegular() })
	if err := op.SaveSnapshot(sn, start); err != nil {
		return fail(err, "the history's snapshot")
	}
	return scan, nil
}

// RecordAfter compares the workspace with the scan before the command and
// records what changed as one operation of rec's command, session and kind
// (its id; "" when nothing did).
func RecordAfter(ws *workspace.Workspace, before *Scan, argv []string, rec *workspace.Recording) (string, error) {
	defer before.Drop()
	after, err := scanWorkspace(ws)
	if err != nil {
		return "", err
	}
	names := map[string]bool{}
	for n := range before.files {
		names[n] = true
	}
	for n := range after {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var changes []history.FileChange
	for _, n := range sorted {
		b, hadB := before.files[n]
		a, hasA := after[n]
		if hadB && hasA && b.mode == a.mode && b.link == a.link && (a.mode.IsDir() ||
			a.mode&fs.ModeSymlink != 0 || b.size == a.size && b.mtime.Equal(a.mtime) && b.ctime.Equal(a.ctime) && b.ino == a.ino) {
			continue // unchanged by its metadata
		}
		fc := history.FileChange{Path: n}
		if hadB {
			fc.Pre = imageOf(b)
		}
		if hasA {
			post, err := ws.Image(n)
			if err != nil || post == nil {
				continue // gone meanwhile
			}
			fc.Post = post
		}
		if fc.Pre != nil && fc.Post != nil && workspace.SameImage(fc.Post, fc.Pre) && fc.Post.Mode == fc.Pre.Mode {
			continue // touched, not changed
		}
		changes = append(changes, fc)
	}
	if len(changes) == 0 {
		return "", nil
	}
	// The entry names its old contents in the history's own pack (the
	// private one goes when this process ends).
	op, err := before.store.Begin()
	if err != nil {
		return "", err
	}
	for i, fc := range changes {
		if fc.Pre == nil || !fc.Pre.Stored() {
			continue
		}
		data, err := before.store.Blob(fc.Pre)
		if err != nil {
			op.Abort()
			return "", err
		}
		im, err := op.Put(data)
		if err != nil {
			op.Abort()
			return "", err
		}
		im.Mode = fc.Pre.Mode
		changes[i].Pre = im
	}
	e := &history.Entry{Command: rec.Command + " " + strings.Join(argv, " "), Session: rec.Session, Tool: rec.Tool, Files: changes}
	if len(e.Command) > 200 {
		e.Command = e.Command[:200] + "…"
	}
	if err := op.Prepare(e); err != nil {
		op.Abort()
		return "", err
	}
	return e.ID, op.Commit()
}

// imageOf is the image a scan's entry had (its stored content for a file).
func imageOf(s scanned) *history.Image {
	switch {
	case s.mode&fs.ModeSymlink != 0:
		return &history.Image{Link: s.link}
	case s.mode.IsDir():
		return &history.Image{Dir: true, Mode: s.mode.Perm()}
	}
	return s.pre
}
