package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// statTimes copies u's access, modification and change times to st.
func statTimes(st *syscall.Stat_t, u *unix.Stat_t) {
	st.Atim = syscall.Timespec{Sec: u.Atim.Sec, Nsec: u.Atim.Nsec}
	st.Mtim = syscall.Timespec{Sec: u.Mtim.Sec, Nsec: u.Mtim.Nsec}
	st.Ctim = syscall.Timespec{Sec: u.Ctim.Sec, Nsec: u.Ctim.Nsec}
}
