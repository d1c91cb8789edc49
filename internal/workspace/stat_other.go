//go:build !linux

package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// statTimes copies u's access, modification and change times to st.
func statTimes(st *syscall.Stat_t, u *unix.Stat_t) {
	st.Atimespec = syscall.Timespec{Sec: u.Atim.Sec, Nsec: u.Atim.Nsec}
	st.Mtimespec = syscall.Timespec{Sec: u.Mtim.Sec, Nsec: u.Mtim.Nsec}
	st.Ctimespec = syscall.Timespec{Sec: u.Ctim.Sec, Nsec: u.Ctim.Nsec}
}
