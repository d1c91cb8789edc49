package history

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A recorded command's snapshot (exec --record): the content of every
// file of the workspace as the last recorded run found it, with what its
// stat said then, so that the next run reads and stores only the files
// that changed since — git's index, for hunk's history. The contents are
// appended to a pack of their own, pack.s<gen> (Image.Pack "s<gen>:OFF"),
// and the index (snapshot: a line of its own, then a line a file, fields
// separated by tabs — read in a few milliseconds for thousands of files,
// where JSON took many) names them:
//
//	snapshot   hunk-snapshot 1 GEN TIME
//	           "path" INO SIZE MTIME CTIME MODE HASH OFF
//	pack.sN    the contents, appended one after another
//
// A file whose inode, size, mode, modification and change times are those
// the index holds is taken as unchanged — but for one changed within two
// seconds of the scan that stored it, which is read again (a write in the
// same clock tick as the read leaves the times as they were: git's "racy"
// case). The pack is rewritten with only what the index names once it
// holds more dead bytes than live ones (and 32 MiB of them), and never
// while another recorded run may read it. Entries of the history never
// name the snapshot's pack: a recorded run copies the old contents of the
// files it changed into the history's own (RecordAfter).

// SnapFile is a file as a recorded run's scan found it.
type SnapFile struct {
	Ino          uint64
	Size         int64
	Mtime, Ctime int64 // UnixNano (the change time: the modification time where the system has none)
	Mode         uint32
	Hash         string
	Off          int64
}

// Snapshot is the index of a workspace's last recorded scan.
type Snapshot struct {
	Gen   int
	Time  int64 // UnixNano: when the scan that wrote it began
	Files map[string]SnapFile
}

const snapMagic = "hunk-snapshot 1"

// encode writes the index.
func (sn *Snapshot) encode() []byte {
	b := fmt.Appendf(nil, "%s\t%d\t%d\n", snapMagic, sn.Gen, sn.Time)
	for name, f := range sn.Files {
		b = strconv.AppendQuote(b, name)
		b = fmt.Appendf(b, "\t%d\t%d\t%d\t%d\t%d\t%s\t%d\n", f.Ino, f.Size, f.Mtime, f.Ctime, f.Mode, f.Hash, f.Off)
	}
	return b
}

// decodeSnapshot reads an index; false when it is not one (every file is
// then read again).
func decodeSnapshot(b []byte) (*Snapshot, bool) {
	head, rest, _ := strings.Cut(string(b), "\n")
	h := strings.Split(head, "\t")
	if len(h) != 3 || h[0] != snapMagic {
		return nil, false
	}
	sn := &Snapshot{Files: map[string]SnapFile{}}
	var err1, err2 error
	sn.Gen, err1 = strconv.Atoi(h[1])
	sn.Time, err2 = strconv.ParseInt(h[2], 10, 64)
	if err1 != nil || err2 != nil || sn.Gen <= 0 {
		return nil, false
	}
	for line := range strings.Lines(rest) {
		fs := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fs) != 8 || !validHash(fs[6]) {
			return nil, false
		}
		name, err := strconv.Unquote(fs[0])
		if err != nil {
			return nil, false
		}
		var f SnapFile
		var errs [6]error
		f.Ino, errs[0] = strconv.ParseUint(fs[1], 10, 64)
		f.Size, errs[1] = strconv.ParseInt(fs[2], 10, 64)
		f.Mtime, errs[2] = strconv.ParseInt(fs[3], 10, 64)
		f.Ctime, errs[3] = strconv.ParseInt(fs[4], 10, 64)
		var mode uint64
		mode, errs[4] = strconv.ParseUint(fs[5], 10, 32)
		f.Off, errs[5] = strconv.ParseInt(fs[7], 10, 64)
		for _, err := range errs {
			if err != nil {
				return nil, false
			}
		}
		f.Mode, f.Hash = uint32(mode), fs[6]
		sn.Files[name] = f
	}
	return sn, true
}

// racyWindow: a file changed this close before the scan that stored it
// may have changed again unseen.
const racyWindow = 2 * time.Second

// Unchanged reports whether f, stored by the snapshot's last scan, is
// still what the file is, by its stat: then its content need not be read.
func (sn *Snapshot) Unchanged(name string, ino uint64, size int64, mtime, ctime time.Time, mode fs.FileMode) (*Image, bool) {
	f, ok := sn.Files[name]
	if !ok || f.Ino != ino || f.Size != size || f.Mtime != mtime.UnixNano() || f.Ctime != ctime.UnixNano() || f.Mode != uint32(mode) {
		return nil, false
	}
	if max(f.Mtime, f.Ctime) >= sn.Time-int64(racyWindow) {
		return nil, false
	}
	return sn.image(f), true
}

func (sn *Snapshot) image(f SnapFile) *Image {
	if f.Size == 0 {
		return &Image{Hash: emptyHash}
	}
	return &Image{Hash: f.Hash, Size: f.Size, Pack: fmt.Sprintf("s%d:%d", sn.Gen, f.Off)}
}

func snapGen(g string) bool {
	n, ok := strings.CutPrefix(g, "s")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// Snapshot reads the workspace's snapshot (an empty one when there is
// none or it cannot be read: every file is then read and stored again).
func (o *Op) Snapshot() *Snapshot {
	sn := &Snapshot{Gen: 1, Files: map[string]SnapFile{}}
	b, err := readFile(filepath.Join(o.s.dir, "snapshot"))
	if err != nil {
		return sn
	}
	if read, ok := decodeSnapshot(b); ok {
		return read
	}
	return sn
}

// PutSnap stores data, the content of file name as its stat says, in the
// snapshot's pack and index; the image names it there.
func (o *Op) PutSnap(sn *Snapshot, name string, data []byte, ino uint64, mtime, ctime time.Time, mode fs.FileMode) (*Image, error) {
	f := SnapFile{Ino: ino, Size: int64(len(data)), Mtime: mtime.UnixNano(), Ctime: ctime.UnixNano(), Mode: uint32(mode), Hash: Hash(data)}
	if len(data) > 0 {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.snap == nil {
			var err error
			if o.snap, o.snapAt, err = openAppend(filepath.Join(o.s.dir, fmt.Sprintf("pack.s%d", sn.Gen))); err != nil {
				return nil, err
			}
		}
		var err error
		if f.Off, err = appendTo(o.snap, &o.snapAt, data); err != nil {
			return nil, err
		}
	}
	sn.Files[name] = f
	return sn.image(f), nil
}

// Forget drops the files of the snapshot a scan did not find.
func (sn *Snapshot) Forget(found func(name string) bool) {
	for name := range sn.Files {
		if !found(name) {
			delete(sn.Files, name)
		}
	}
}

// SaveSnapshot writes the snapshot's index, its scan begun at start.
func (o *Op) SaveSnapshot(sn *Snapshot, start time.Time) error {
	if o.snap != nil {
		if err := o.snap.Close(); err != nil {
			return err
		}
		o.snap = nil
	}
	sn.Time = start.UnixNano()
	return writeAtomic(filepath.Join(o.s.dir, "snapshot"), sn.encode())
}

// CompactSnapshot rewrites the snapshot's pack with only the contents its
// index names, as a new generation, when the pack holds more dead bytes
// than live ones (and 32 MiB of them); the old generation goes. Call it
// before the scan hands out images, and only when no other recorded run
// is under way (it may be reading the old generation).
func (o *Op) CompactSnapshot(sn *Snapshot) error {
	var live int64
	for _, f := range sn.Files {
		live += f.Size
	}
	fi, err := os.Stat(filepath.Join(o.s.dir, fmt.Sprintf("pack.s%d", sn.Gen)))
	if err != nil {
		return nil // no pack yet
	}
	dead := fi.Size() - live
	if dead < 32<<20 || dead < live {
		return nil
	}
	old := *sn
	sn.Gen++
	sn.Files = make(map[string]SnapFile, len(old.Files))
	src, err := openFile(filepath.Join(o.s.dir, fmt.Sprintf("pack.s%d", old.Gen)), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	for name, f := range old.Files {
		data := make([]byte, f.Size)
		if _, err := src.ReadAt(data, f.Off); err != nil || Hash(data) != f.Hash {
			continue // lost: read again by the next scan
		}
		if _, err := o.PutSnap(sn, name, data, f.Ino, time.Unix(0, f.Mtime), time.Unix(0, f.Ctime), fs.FileMode(f.Mode)); err != nil {
			return err
		}
	}
	if o.snap != nil {
		if err := o.snap.Close(); err != nil {
			return err
		}
		o.snap = nil
	}
	sn.Time = old.Time
	if err := writeAtomic(filepath.Join(o.s.dir, "snapshot"), sn.encode()); err != nil {
		return err
	}
	return os.Remove(filepath.Join(o.s.dir, fmt.Sprintf("pack.s%d", old.Gen)))
}

// RunsUnderWay reports whether a recorded run other than mine (MarkRun's
// name) is under way: marked, and its process alive.
func (s *Store) RunsUnderWay(mine string) bool {
	ents, _ := os.ReadDir(filepath.Join(s.dir, "runs"))
	busy := false
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.Split(e.Name(), ".")[0])
		switch {
		case e.Name() == mine:
		case err == nil && alive(pid):
			busy = true
		default:
			os.Remove(filepath.Join(s.dir, "runs", e.Name())) // a killed run's mark
		}
	}
	return busy
}

// MarkRun marks a recorded run under way until done is called, so that
// no other rewrites the snapshot's pack meanwhile; name is the mark's.
func (s *Store) MarkRun() (name string, done func(), err error) {
	dir := filepath.Join(s.dir, "runs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	name = fmt.Sprintf("%d.%d", os.Getpid(), privateSeq.Add(1))
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return "", nil, err
	}
	return name, func() { os.Remove(p) }, nil
}
