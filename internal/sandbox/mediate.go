//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The metadata mediator of the landlock driver.
//
// Landlock confines opening, creating, removing and renaming files, but not
// a file's metadata: without more, a command could chmod, chown, touch or
// set extended attributes on any file it can name — make a host binary
// setuid as root, or another user's-eyes-only key readable. So the seccomp
// filter sends those calls (metadataCalls) to hunk with
// SECCOMP_RET_USER_NOTIF, and hunk does each one itself, on the file the
// command named, when that file lies in a place the command may write (the
// workspace unless read-only, its private TMPDIR, the caches, --rw), and
// answers EPERM otherwise.
//
// hunk never lets the kernel continue a checked call
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE would re-read the path after the check,
// and a symlink swapped in between would redirect it). It reads the
// arguments once from the command's memory, opens the file itself — the
// final component too when the call follows links, else its directory —
// checks where the opened file really is, and acts on what it opened:
// through /proc/self/fd, or relative to the opened directory with
// AT_SYMLINK_NOFOLLOW. Every access to the command's /proc entries is
// followed by a check that the call is still pending, so a recycled pid is
// never acted for.

// mediatePolicy is where the mediator lets the command change metadata.
type mediatePolicy struct {
	RW   []string // writable roots (real paths)
	Hide []string // hidden paths, never touched even inside a root
}

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif
// and struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

const seccompIoctlNotifIDValid = 0x40082102 // SECCOMP_IOCTL_NOTIF_ID_VALID (_IOW('!', 2, __u64))

// mediator serves one run's listener until the run is over.
type mediator struct {
	fd     int
	wake   int // an eventfd: close wakes serve's poll
	policy mediatePolicy
	done   sync.WaitGroup
}

// startMediator serves listener in a goroutine of its own until close,
// which closes the listener.
func startMediator(listener int, p mediatePolicy) (*mediator, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(listener)
		return nil, err
	}
	m := &mediator{fd: listener, wake: wake, policy: p}
	m.done.Add(1)
	go m.serve()
	return m, nil
}

func (m *mediator) close() {
	_, _ = unix.Write(m.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	m.done.Wait()
	unix.Close(m.fd)
	unix.Close(m.wake)
}

func (m *mediator) serve() {
	defer m.done.Done()
	pfd := []unix.PollFd{{Fd: int32(m.fd), Events: unix.POLLIN}, {Fd: int32(m.wake), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, -1)
		if err == unix.EINTR || n == 0 {
			continue
		}
		// close wakes it; POLLHUP: no process of the run is left under
		// the filter.
		if err != nil || pfd[1].Revents != 0 || pfd[0].Revents&unix.POLLIN == 0 {
			return
		}
		var req seccompNotif
		if err := ioctlPtr(m.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
			continue // ENOENT: the caller went away meanwhile
		}
		resp := seccompNotifResp{id: req.id}
		val, errno := m.handle(&req)
		if errno != 0 {
			resp.error = -int32(errno)
		} else {
			resp.val = val
		}
		_ = ioctlPtr(m.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	for {
		_, _, e := syscall.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// valid reports whether req is still pending (its caller alive, so its pid
// still names it).
func (m *mediator) valid(req *seccompNotif) bool {
	id := req.id
	return ioctlPtr(m.fd, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) == nil
}

// A metadata call, decoded.
type metaCall struct {
	op       byte   // 'm' chmod, 'o' chown, 't' times, 's' setxattr, 'r' removexattr
	dirfd    int    // base of a relative path (unix.AT_FDCWD: the cwd); for an fd call, the fd
	path     string // "" with fdCall: the descriptor itself
	fdCall   bool
	nofollow bool
	mode     uint32
	uid, gid uint32
	times    *[2]unix.Timespec // nil: now
	name     string            // xattr name
	value    []byte
	xflags   int
}

func (m *mediator) handle(req *seccompNotif) (int64, syscall.Errno) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(int(req.pid))+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, unix.EPERM
	}
	defer unix.Close(fd)
	mem := procMem(fd)
	if !m.valid(req) {
		return 0, unix.ENOENT
	}
	c, errno := decode(req, mem)
	if errno != 0 {
		return 0, errno
	}
	return m.perform(req, c)
}

// decode reads the call's arguments (from the caller's memory, once).
func decode(req *seccompNotif, mem procMem) (*metaCall, syscall.Errno) {
	a := req.args
	str := func(addr uint64) (string, syscall.Errno) { return readString(mem, addr) }
	c := &metaCall{dirfd: unix.AT_FDCWD}
	var err syscall.Errno
	atFlags := func(f uint64) {
		c.nofollow = f&unix.AT_SYMLINK_NOFOLLOW != 0
		if f&unix.AT_EMPTY_PATH != 0 && c.path == "" {
			c.fdCall = true
		}
	}
	switch nr := uint32(req.nr); {
	case nr == unix.SYS_FCHMOD:
		c.op, c.dirfd, c.fdCall, c.mode = 'm', int(int32(a[0])), true, uint32(a[1])
	case nr == unix.SYS_FCHMODAT || nr == unix.SYS_FCHMODAT2:
		c.op, c.dirfd, c.mode = 'm', int(int32(a[0])), uint32(a[2])
		if c.path, err = str(a[1]); err != 0 {
			return nil, err
		}
		if nr == unix.SYS_FCHMODAT2 {
			atFlags(a[3])
		}
	case nr == unix.SYS_FCHOWN:
		c.op, c.dirfd, c.fdCall, c.uid, c.gid = 'o', int(int32(a[0])), true, uint32(a[1]), uint32(a[2])
	case nr == unix.SYS_FCHOWNAT:
		c.op, c.dirfd, c.uid, c.gid = 'o', int(int32(a[0])), uint32(a[2]), uint32(a[3])
		if c.path, err = str(a[1]); err != 0 {
			return nil, err
		}
		atFlags(a[4])
	case nr == unix.SYS_UTIMENSAT:
		c.op, c.dirfd = 't', int(int32(a[0]))
		if a[1] == 0 {
			c.fdCall = true
		} else if c.path, err = str(a[1]); err != 0 {
			return nil, err
		}
		if a[2] != 0 {
			var ts [2]unix.Timespec
			if err := readStruct(mem, a[2], unsafe.Pointer(&ts), unsafe.Sizeof(ts)); err != 0 {
				return nil, err
			}
			c.times = &ts
		}
		atFlags(a[3])
	case nr == unix.SYS_SETXATTR || nr == unix.SYS_LSETXATTR || nr == unix.SYS_FSETXATTR,
		nr == unix.SYS_REMOVEXATTR || nr == unix.SYS_LREMOVEXATTR || nr == unix.SYS_FREMOVEXATTR:
		set := nr == unix.SYS_SETXATTR || nr == unix.SYS_LSETXATTR || nr == unix.SYS_FSETXATTR
		c.op, c.nofollow = 'r', nr == unix.SYS_LSETXATTR || nr == unix.SYS_LREMOVEXATTR
		if nr == unix.SYS_FSETXATTR || nr == unix.SYS_FREMOVEXATTR {
			c.dirfd, c.fdCall = int(int32(a[0])), true
		} else if c.path, err = str(a[0]); err != 0 {
			return nil, err
		}
		if c.name, err = str(a[1]); err != 0 {
			return nil, err
		}
		if set {
			c.op, c.xflags = 's', int(a[4])
			if a[3] > 64<<10 {
				return nil, unix.E2BIG
			}
			c.value = make([]byte, a[3])
			if len(c.value) > 0 {
				if err := readStruct(mem, a[2], unsafe.Pointer(&c.value[0]), uintptr(len(c.value))); err != 0 {
					return nil, err
				}
			}
		}
	default:
		if err := decodeLegacy(nr, a, c, mem); err != 0 {
			return nil, err
		}
	}
	return c, 0
}

// procMem is an open /proc/<pid>/mem.
type procMem int

func (m procMem) ReadAt(b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(int(m), b, off)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

// readString reads a NUL-terminated string of at most PATH_MAX bytes.
func readString(mem procMem, addr uint64) (string, syscall.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var b []byte
	buf := make([]byte, 256)
	for len(b) < unix.PathMax {
		n, err := mem.ReadAt(buf, int64(addr)+int64(len(b)))
		if n == 0 && err != nil {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(b, buf[:i]...)), 0
		}
		b = append(b, buf[:n]...)
	}
	return "", unix.ENAMETOOLONG
}

func readStruct(mem procMem, addr uint64, p unsafe.Pointer, size uintptr) syscall.Errno {
	if addr == 0 {
		return unix.EFAULT
	}
	n, _ := mem.ReadAt(unsafe.Slice((*byte)(p), size), int64(addr))
	if uintptr(n) != size {
		return unix.EFAULT
	}
	return 0
}

// perform opens the call's file the way the call would, checks where it is,
// and does the call on what it opened.
func (m *mediator) perform(req *seccompNotif, c *metaCall) (int64, syscall.Errno) {
	proc := "/proc/" + strconv.Itoa(int(req.pid))
	c.path = callersProc(c.path, proc)
	if c.fdCall {
		// The descriptor's own file (what fchmod and friends act on).
		f, err := m.openCallers(req, proc+"/fd/"+strconv.Itoa(c.dirfd), 0)
		switch {
		case err == errStale:
			return 0, unix.ENOENT
		case err != nil:
			return 0, unix.EBADF
		}
		defer unix.Close(f)
		return m.onFile(f, c)
	}
	if c.path == "" {
		return 0, unix.ENOENT
	}
	base := proc + "/fd/" + strconv.Itoa(c.dirfd)
	switch {
	case filepath.IsAbs(c.path):
		base = "/"
	case c.dirfd == unix.AT_FDCWD:
		base = proc + "/cwd"
	}
	bfd, err := m.openCallers(req, base, unix.O_DIRECTORY)
	switch {
	case err == errStale:
		return 0, unix.ENOENT
	case err != nil:
		return 0, errnoOf(err)
	}
	defer unix.Close(bfd)
	dir, name := filepath.Split(c.path)
	if !c.nofollow || name == "" || name == "." || name == ".." {
		f, err := unix.Openat(bfd, c.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, errnoOf(err)
		}
		defer unix.Close(f)
		return m.onFile(f, c)
	}
	// Not following the last component: open its directory and act on the
	// name inside it, never followed — whatever the name is by then, it is
	// in that directory.
	if dir == "" {
		dir = "."
	}
	d, err := unix.Openat(bfd, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(d)
	where, err := fdPath(d)
	if err != nil || !m.allowed(filepath.Join(where, name)) {
		return 0, unix.EPERM
	}
	self := "/proc/self/fd/" + strconv.Itoa(d) + "/" + name
	switch c.op {
	case 'm':
		f, err := unix.Openat(d, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, errnoOf(err)
		}
		defer unix.Close(f)
		var st unix.Stat_t
		if err := unix.Fstat(f, &st); err != nil {
			return 0, errnoOf(err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return 0, unix.EOPNOTSUPP // Linux has no mode on symlinks
		}
		return m.onFile(f, c)
	case 'o':
		return 0, errnoOf(unix.Fchownat(d, name, int(int32(c.uid)), int(int32(c.gid)), unix.AT_SYMLINK_NOFOLLOW))
	case 't':
		return 0, errnoOf(utimens(d, name, c.times, unix.AT_SYMLINK_NOFOLLOW))
	case 's':
		return 0, errnoOf(unix.Lsetxattr(self, c.name, c.value, c.xflags))
	case 'r':
		return 0, errnoOf(unix.Lremovexattr(self, c.name))
	}
	return 0, unix.ENOSYS
}

// openCallers opens one of the caller's /proc entries (its cwd, one of its
// descriptors) as an O_PATH descriptor, then checks that the call is still
// pending (errStale otherwise), so that a recycled pid did not lead
// elsewhere.
func (m *mediator) openCallers(req *seccompNotif, path string, flags int) (int, error) {
	f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|flags, 0)
	if !m.valid(req) {
		if err == nil {
			unix.Close(f)
		}
		return -1, errStale
	}
	return f, err
}

// errStale is a call whose caller went away while it was being handled.
var errStale = errors.New("the call is no longer pending")

// callersProc rewrites a path through /proc/self (or /dev/fd, which leads
// there) to the caller's own /proc entry: hunk resolves the path, and its
// /proc/self is its own. glibc names a descriptor this way when it emulates
// fchmodat(AT_SYMLINK_NOFOLLOW) (/proc/self/fd/N). A symlink of the
// command's that leads into /proc/self still resolves to hunk's, but what
// it names must lie in a writable place all the same.
func callersProc(path, proc string) string {
	for _, p := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(path, p); ok {
			return proc + "/" + rest
		}
	}
	if rest, ok := strings.CutPrefix(path, "/dev/fd/"); ok {
		return proc + "/fd/" + rest
	}
	return path
}

// onFile does c on the opened file f (an O_PATH descriptor) when it lies
// where the command may write.
func (m *mediator) onFile(f int, c *metaCall) (int64, syscall.Errno) {
	where, err := fdPath(f)
	if err != nil || !m.allowed(where) {
		return 0, unix.EPERM
	}
	self := "/proc/self/fd/" + strconv.Itoa(f)
	switch c.op {
	case 'm':
		return 0, errnoOf(unix.Fchmodat(unix.AT_FDCWD, self, c.mode, 0))
	case 'o':
		return 0, errnoOf(unix.Fchownat(f, "", int(int32(c.uid)), int(int32(c.gid)), unix.AT_EMPTY_PATH))
	case 't':
		return 0, errnoOf(utimens(unix.AT_FDCWD, self, c.times, 0))
	case 's':
		return 0, errnoOf(unix.Setxattr(self, c.name, c.value, c.xflags))
	case 'r':
		return 0, errnoOf(unix.Removexattr(self, c.name))
	}
	return 0, unix.ENOSYS
}

func utimens(dirfd int, path string, ts *[2]unix.Timespec, flags int) error {
	if ts == nil {
		now := [2]unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
		ts = &now
	}
	return unix.UtimesNanoAt(dirfd, path, ts[:], flags)
}

// fdPath is where the file f was opened, as the kernel names it.
func fdPath(f int) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(f))
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not a file: %s", p) // pipe:[…], anon_inode:…
	}
	return strings.TrimSuffix(p, " (deleted)"), nil
}

// allowed reports whether path (a real path) lies in a writable root and
// not in a hidden path.
func (m *mediator) allowed(path string) bool {
	return !Under(path, m.policy.Hide) && Under(path, m.policy.RW)
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// realRoots resolves paths (symlinks followed) for the mediator's checks;
// a path that does not exist is kept as it is.
func realRoots(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}
