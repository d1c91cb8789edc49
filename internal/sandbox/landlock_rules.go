//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls, called directly: go-landlock (a fine binding)
// enforces on every thread of the process, which needs libpsx under cgo;
// here the ruleset is built in hunk and only the command's child restricts
// itself (landlock_restrict_self, in fork.go), so raw system calls do.

type rulesetAttr struct {
	fs, net, scoped uint64
}

const (
	accessFSExecute     = unix.LANDLOCK_ACCESS_FS_EXECUTE
	accessFSWriteFile   = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	accessFSReadFile    = unix.LANDLOCK_ACCESS_FS_READ_FILE
	accessFSReadDir     = unix.LANDLOCK_ACCESS_FS_READ_DIR
	accessFSMakeSym     = unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	accessFSRefer       = unix.LANDLOCK_ACCESS_FS_REFER
	accessFSTruncate    = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	accessFSIoctlDev    = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	accessFSResolveUnix = unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
)

func llCreateRuleset(attr *rulesetAttr) (int, error) {
	fd, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr), 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func llAddPathRule(rulesetFd int, allowed uint64, parentFd int) error {
	var buf [12]byte // struct landlock_path_beneath_attr is packed
	binary.NativeEndian.PutUint64(buf[0:], allowed)
	binary.NativeEndian.PutUint32(buf[8:], uint32(int32(parentFd)))
	_, _, e := syscall.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// landlockPolicy is what the landlock driver enforces on the command.
type landlockPolicy struct {
	RO      []string `json:"ro"`      // directories readable and executable
	RW      []string `json:"rw"`      // directories with every right (the workspace, the private temp dir)
	RWFiles []string `json:"rwFiles"` // device files that may be written (/dev/null, …)
	List    []string `json:"list"`    // directories whose entries may be listed, no more (above hidden paths)
	Ioctl   []string `json:"ioctl"`   // device paths whose ioctls are allowed (terminals)
	Network bool     `json:"network"` // leave TCP/UDP unhandled
}

// landlockABI is the kernel's Landlock ABI version; 0 when absent or disabled.
func landlockABI() int {
	v, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 || int(v) < 0 {
		return 0
	}
	return int(v)
}

// Rights by the ABI version that introduced them.
func handledFS(abi int) uint64 {
	var h uint64
	switch {
	case abi >= 9:
		h = accessFSResolveUnix<<1 - 1
	case abi >= 5:
		h = accessFSIoctlDev<<1 - 1
	case abi >= 3:
		h = accessFSTruncate<<1 - 1
	case abi >= 2:
		h = accessFSRefer<<1 - 1
	case abi >= 1:
		h = accessFSMakeSym<<1 - 1
	}
	return h
}

func handledNet(abi int) uint64 {
	switch {
	case abi >= 10:
		return unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP | unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
	case abi >= 4:
		return unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	return 0
}

func scoped(abi int) uint64 {
	if abi >= 6 {
		return unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	return 0
}

// landlockConfinesUnix reports whether Landlock can confine connections to
// pathname unix sockets (ABI 9, LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
func landlockConfinesUnix(abi int) bool { return abi >= 9 }

const fileRights = accessFSExecute | accessFSWriteFile | accessFSReadFile | accessFSTruncate | accessFSIoctlDev

// landlockRuleset builds p's ruleset, best effort by the kernel's ABI, for
// the child to restrict itself to (fork.go). The workspace and the private
// temporary directory get every right but making device nodes.
func landlockRuleset(p landlockPolicy) (int, error) {
	abi := landlockABI()
	if abi < 1 {
		return -1, fmt.Errorf("the kernel has no Landlock")
	}
	fs := handledFS(abi)
	attr := rulesetAttr{fs: fs, scoped: scoped(abi)}
	if !p.Network {
		attr.net = handledNet(abi)
	}
	fd, err := llCreateRuleset(&attr)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	add := func(path string, access uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // a path that does not exist here needs no rule
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= fileRights
		}
		access &= fs
		if access == 0 {
			return nil
		}
		if err := llAddPathRule(fd, access, pfd); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", path, err)
		}
		return nil
	}
	read := uint64(accessFSExecute | accessFSReadFile | accessFSReadDir)
	rw := fs &^ (unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK)
	rules := []struct {
		paths  []string
		access uint64
	}{
		{p.List, accessFSReadDir},
		{p.RO, read},
		{p.RW, rw},
		{p.RWFiles, accessFSReadFile | accessFSWriteFile | accessFSTruncate},
		{p.Ioctl, read | accessFSWriteFile | accessFSIoctlDev},
	}
	for _, r := range rules {
		for _, path := range r.paths {
			if err := add(path, r.access); err != nil {
				unix.Close(fd)
				return -1, err
			}
		}
	}
	return fd, nil
}

// readableExcept returns the rules that make the whole host readable but
// the hidden paths: Landlock only grants, so "/" cannot be granted with
// holes. Instead every directory on the way from "/" to a hidden path may
// only be listed (list), and each of its other entries is granted whole
// (ro). Entries that are symbolic links are skipped: what they point to is
// granted where it lives. Without hidden paths: ro is just "/".
func readableExcept(hidden []string) (list, ro []string) {
	blocked := map[string]bool{}
	partial := map[string]bool{}
	for _, h := range hidden {
		real, err := filepath.EvalSymlinks(h)
		if err != nil || real == "/" {
			continue // nothing there to hide
		}
		blocked[real] = true
		for d := filepath.Dir(real); ; d = filepath.Dir(d) {
			partial[d] = true
			if d == "/" {
				break
			}
		}
	}
	if len(blocked) == 0 {
		return nil, []string{"/"}
	}
	for d := range partial {
		list = append(list, d)
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			c := filepath.Join(d, e.Name())
			if blocked[c] || partial[c] || e.Type()&os.ModeSymlink != 0 {
				continue
			}
			ro = append(ro, c)
		}
	}
	sort.Strings(list)
	sort.Strings(ro)
	return list, ro
}
