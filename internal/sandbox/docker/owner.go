package docker

// Who owns a container: the hunk process that made it, known by pid and
// start time, so that --gc removes only those whose hunk is gone.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	ownerOnce sync.Once
	ownerID   string
)

// selfOwner identifies this hunk process for `--gc`: boot id, pid and start
// time (so a reused pid is not mistaken for it).
func selfOwner() string {
	ownerOnce.Do(func() { ownerID = processOwner(os.Getpid()) })
	return ownerID
}

func processOwner(pid int) string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return fmt.Sprintf("%s/%d/%s", strings.TrimSpace(string(boot)), pid, procStart(pid))
}

// procStart is field 22 of /proc/PID/stat (start time in clock ticks), or ""
// when the process does not exist.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// ownerGone reports whether the hunk process named by an owner label has
// certainly exited (same machine, that pid no longer the same process).
func ownerGone(owner string) bool {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 {
		return false
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if parts[0] != strings.TrimSpace(string(boot)) {
		return false // another machine: only the deadline decides
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	return procStart(pid) != parts[2]
}
