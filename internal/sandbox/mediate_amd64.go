//go:build linux

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// decodeLegacy decodes the metadata calls amd64 has besides the *at forms
// arm64 has alone: chmod, chown, lchown, utime, utimes, futimesat.
func decodeLegacy(nr uint32, a [6]uint64, c *metaCall, mem procMem) unix.Errno {
	var err unix.Errno
	path := func(addr uint64) unix.Errno {
		c.path, err = readString(mem, addr)
		return err
	}
	switch nr {
	case unix.SYS_CHMOD:
		c.op, c.mode = 'm', uint32(a[1])
		return path(a[0])
	case unix.SYS_CHOWN, unix.SYS_LCHOWN:
		c.op, c.uid, c.gid, c.nofollow = 'o', uint32(a[1]), uint32(a[2]), nr == unix.SYS_LCHOWN
		return path(a[0])
	case unix.SYS_UTIME:
		c.op = 't'
		if a[1] != 0 {
			var ub [2]int64 // struct utimbuf: actime, modtime
			if e := readStruct(mem, a[1], unsafe.Pointer(&ub), unsafe.Sizeof(ub)); e != 0 {
				return e
			}
			c.times = &[2]unix.Timespec{{Sec: ub[0]}, {Sec: ub[1]}}
		}
		return path(a[0])
	case unix.SYS_UTIMES, unix.SYS_FUTIMESAT:
		c.op = 't'
		p, tv := a[0], a[1]
		if nr == unix.SYS_FUTIMESAT {
			c.dirfd, p, tv = int(int32(a[0])), a[1], a[2]
		}
		if tv != 0 {
			var t [2]unix.Timeval
			if e := readStruct(mem, tv, unsafe.Pointer(&t), unsafe.Sizeof(t)); e != 0 {
				return e
			}
			c.times = &[2]unix.Timespec{unix.NsecToTimespec(t[0].Nano()), unix.NsecToTimespec(t[1].Nano())}
		}
		if p == 0 && nr == unix.SYS_FUTIMESAT {
			c.fdCall = true
			return 0
		}
		return path(p)
	}
	return unix.ENOSYS
}
