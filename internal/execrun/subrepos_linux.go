package execrun

import (
	"bytes"
	"encoding/binary"
	"path"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// SubRepoRisks lists the repositories below the workspace's root that the
// run (begun at since) made or changed, with what git would run there;
// partial reports that the look stopped at maxRepoScan directories.
func SubRepoRisks(ws *workspace.Workspace, since time.Time, driver string) (repos []SubRepo, partial bool) {
	if driver == "none" {
		return nil, false // no sandbox: the command could do anything anyway
	}
	root, err := unix.Open(ws.Dir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	// Names only, by the directories' descriptors (each opened from its
	// parent, never by a path, no link followed): getdents' types, no
	// stat but of a .git found. The door is not needed to read names that
	// are only reported; what is reported is read by NewRepoRisks.
	var (
		mu    sync.Mutex // repos, partial
		seen  atomic.Int64
		wg    sync.WaitGroup
		slots = make(chan struct{}, runtime.GOMAXPROCS(0)) // subtrees looked at beside this one
	)
	var look func(fd int, name string, depth int, buf []byte)
	look = func(fd int, name string, depth int, buf []byte) {
		defer unix.Close(fd)
		if seen.Add(1) > maxRepoScan || depth > maxRepoDepth {
			mu.Lock()
			partial = true
			mu.Unlock()
			return
		}
		var dirs []string
		git := false
		for {
			n, err := unix.Getdents(fd, buf)
			if err != nil || n <= 0 {
				break
			}
			eachDirent(buf[:n], func(child string, typ byte) {
				switch {
				case child == ".git":
					git = true
				case typ == unix.DT_DIR && child != "." && child != "..":
					dirs = append(dirs, child)
				}
			})
			if n < len(buf)-512 {
				break // room for another entry was left: the directory is read whole
			}
		}
		if git && name != "." && changedSince(fd, since) {
			if risks := sandbox.NewRepoRisks(ws.Abs(path.Join(name, ".git"))); len(risks) > 0 {
				mu.Lock()
				repos = append(repos, SubRepo{Path: name, Risks: risks})
				mu.Unlock()
			}
		}
		for _, child := range dirs {
			sub, err := unix.Openat(fd, child, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			select {
			case slots <- struct{}{}: // a core is free: the subtree beside this one
				wg.Add(1)
				go func(sub int, name string) {
					defer func() { <-slots; wg.Done() }()
					look(sub, name, depth+1, make([]byte, len(buf)))
				}(sub, path.Join(name, child))
			default:
				look(sub, path.Join(name, child), depth+1, buf)
			}
		}
	}
	look(root, ".", 0, make([]byte, 32<<10))
	wg.Wait()
	sort.Slice(repos, func(i, j int) bool { return repos[i].Path < repos[j].Path })
	return repos, partial
}

// eachDirent gives each entry of a getdents buffer: its name and d_type
// (DT_UNKNOWN where the file system does not say: such a directory is
// not looked into).
func eachDirent(buf []byte, f func(name string, typ byte)) {
	for len(buf) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < 19 || reclen > len(buf) {
			return
		}
		typ, raw := buf[18], buf[19:reclen]
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		f(string(raw), typ)
		buf = buf[reclen:]
	}
}

// changedSince reports whether the .git in the directory fd, its hooks or
// its config changed (inode change time) at or after since.
func changedSince(fd int, since time.Time) bool {
	for _, p := range []string{".git", ".git/hooks", ".git/config"} {
		var st unix.Stat_t
		if unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && !time.Unix(st.Ctim.Unix()).Before(since) {
			return true
		}
	}
	return false
}
