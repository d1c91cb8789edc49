package workspace

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statInfo is an fs.FileInfo from a stat(2) result.
func statInfo(name string, st *unix.Stat_t) fs.FileInfo {
	return &fileStat{name: name, st: *st}
}

type fileStat struct {
	name string
	st   unix.Stat_t
}

func (f *fileStat) Name() string { return f.name }
func (f *fileStat) Size() int64  { return f.st.Size }
func (f *fileStat) Mode() fs.FileMode {
	m := fs.FileMode(f.st.Mode & 0o777)
	switch f.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	}
	if f.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if f.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if f.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
func (f *fileStat) ModTime() time.Time {
	return time.Unix(f.st.Mtim.Sec, f.st.Mtim.Nsec)
}
func (f *fileStat) IsDir() bool { return f.Mode().IsDir() }
func (f *fileStat) Sys() any {
	// The same type os.Lstat gives, for callers that read owners.
	st := &syscall.Stat_t{Uid: f.st.Uid, Gid: f.st.Gid, Mode: f.st.Mode, Size: f.st.Size, Nlink: f.st.Nlink, Ino: f.st.Ino, Dev: f.st.Dev}
	statTimes(st, &f.st) // exec --record's snapshot compares the change time
	return st
}

// ownedByUs reports whether fi (from Lstat) belongs to the effective user.
func ownedByUs(fi fs.FileInfo) bool {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return int(st.Uid) == syscall.Geteuid()
	case *unix.Stat_t:
		return int(st.Uid) == syscall.Geteuid()
	}
	return false
}
