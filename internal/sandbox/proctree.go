//go:build linux

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procInfo is one line of the process table.
type procInfo struct {
	pid, ppid int
	zombie    bool
}

// processTable reads /proc: every process with its parent and whether it is
// a zombie.
func processTable() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procInfo, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, procInfo{pid: pid, ppid: ppid, zombie: f[0] == "Z" || f[0] == "X"})
	}
	return out
}

// tree is the set of processes a run owns: the main process and everything
// below it, and what the run left elsewhere, found one of two ways.
//
// An attributed run knows its processes without looking at hunk's other
// children: everything below its main process and below the roots its
// driver names (bwrap's pid namespace init, which comes back to hunk when
// bubblewrap exits), plus every member of its cgroup (where an orphan of
// it stays, whoever it is re-parented to). Attributed runs may run beside
// each other in one process (hunk mcp's concurrent exec calls).
//
// A run that is not attributed (landlock or none with no cgroup to put it
// in: no root, no delegated cgroup v2 subtree) counts as its own every
// child of hunk's that was not there before it started — the orphans it
// leaves come back to hunk, the child subreaper, rather than to init — and
// so must be the only run of the process while it lasts (runLock).
type tree struct {
	self       int
	mainPid    int // waited for by os/exec; never reaped here
	before     map[int]bool
	cg         *cgroup
	attributed bool         // see above
	extra      func() []int // further roots the driver names (attributed runs)
	others     bool         // a process besides the main one was ever signaled
	// mainDone is set once os/exec has reaped the main process: its pid may
	// then belong to someone else and is no longer a root of the tree.
	mainDone atomic.Bool
	killed   map[int]bool // processes sent SIGKILL
	// hadChildren: the caller had children before the run (a test binary),
	// so that "no child left" cannot be told by one system call.
	hadChildren bool
}

// hasChildren reports whether the calling process has any child, live or
// zombie, without reaping one.
func hasChildren() bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		return err != unix.ECHILD
	}
}

// settled reports, cheaply, that nothing of the run is left once its main
// process has been reaped: hunk has no child (every orphan of the tree is
// re-parented to hunk, its subreaper, so a live descendant means a child)
// and the run's cgroups are empty. False means "look closer", not "something
// is left".
func (t *tree) settled() bool {
	if t.attributed {
		return !t.others && len(t.live(t.members())) == 0
	}
	return !t.hadChildren && !t.others && !hasChildren() && t.cg.empty()
}

// newTree records the caller's children before the run's main process
// starts (not for an attributed run, which never looks at them).
func newTree(cg *cgroup, attributed bool, extra func() []int) *tree {
	t := &tree{self: os.Getpid(), before: map[int]bool{}, cg: cg, attributed: attributed, extra: extra}
	if attributed || !hasChildren() {
		return t // hunk's case: the run's processes are its only children
	}
	t.hadChildren = true
	kids, ok := childrenOf(t.self)
	if !ok {
		for _, p := range processTable() {
			if p.ppid == t.self {
				kids = append(kids, p.pid)
			}
		}
	}
	for _, k := range kids {
		t.before[k] = true
	}
	return t
}

// childrenOf lists pid's children from /proc/PID/task/*/children, which
// touches only pid's own entries (a full /proc scan costs milliseconds on a
// busy machine). ok is false when the kernel lacks that file.
func childrenOf(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid + "/children")
		if err != nil {
			if os.IsNotExist(err) {
				if _, e := os.Stat(dir + "/" + tid); e == nil {
					return nil, false // the thread exists: no children file in this kernel
				}
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// stateOf reads one process's state; ok is false when it is gone.
func stateOf(pid int) (zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false, false
	}
	return s[i+2] == 'Z' || s[i+2] == 'X', true
}

// roots are the processes the tree starts from: the main process (until
// reaped) and the driver's further roots.
func (t *tree) roots() []int {
	var roots []int
	if t.mainPid > 0 && !t.mainDone.Load() {
		roots = append(roots, t.mainPid)
	}
	if t.extra != nil {
		for _, p := range t.extra() {
			if p > 0 && p != t.mainPid {
				roots = append(roots, p)
			}
		}
	}
	return roots
}

// members returns the processes of the tree as they are now.
func (t *tree) members() []procInfo {
	roots := t.roots()
	if !t.attributed {
		kids, ok := childrenOf(t.self)
		if !ok {
			return t.membersByScan()
		}
		for _, k := range kids {
			if k != t.mainPid && !t.before[k] && !isWatchdog(k) {
				roots = append(roots, k)
			}
		}
	}
	var out []procInfo
	seen := map[int]bool{}
	queue := roots
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		zombie, ok := stateOf(p)
		if !ok {
			continue
		}
		out = append(out, procInfo{pid: p, zombie: zombie})
		ks, _ := childrenOf(p)
		queue = append(queue, ks...)
	}
	return out
}

// membersByScan is members from a scan of the whole process table.
func (t *tree) membersByScan() []procInfo {
	tab := processTable()
	kids := map[int][]procInfo{}
	isRoot := map[int]bool{}
	for _, p := range t.roots() {
		isRoot[p] = true
	}
	var roots []procInfo
	for _, p := range tab {
		kids[p.ppid] = append(kids[p.ppid], p)
		if isRoot[p.pid] || (!t.attributed && p.ppid == t.self && !t.before[p.pid] && !isWatchdog(p.pid)) {
			roots = append(roots, p)
		}
	}
	out := roots
	queue := append([]procInfo(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p.pid] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}

// live picks the live processes of ms, adding the cgroup's.
func (t *tree) live(ms []procInfo) []int {
	var pids []int
	seen := map[int]bool{}
	for _, p := range ms {
		if !p.zombie && !seen[p.pid] {
			pids = append(pids, p.pid)
			seen[p.pid] = true
		}
	}
	if t.cg != nil {
		for _, p := range t.cg.procs() {
			if !seen[p] {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// signal sends sig to every live member; it reports how many it found.
func (t *tree) signal(sig syscall.Signal) int {
	n, _ := t.signalMembers(sig, t.members())
	return n
}

// signalMembers sends sig to the live processes among ms (and the cgroup's).
func (t *tree) signalMembers(sig syscall.Signal, ms []procInfo) (int, []procInfo) {
	pids := t.live(ms)
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
		if p != t.mainPid {
			t.others = true
		}
	}
	if sig == syscall.SIGKILL {
		if t.killed == nil {
			t.killed = map[int]bool{}
		}
		for _, p := range pids {
			t.killed[p] = true
		}
	}
	return len(pids), ms
}

// leftovers double-checks, once the tree looks empty, that it is: when the
// run ever had a process killed or besides its main one, a scan of the whole
// process table (the per-process children lists the fast path reads can miss
// a child being reparented at that very moment) must find no live member —
// a process already sent SIGKILL still counts until it is dead, which on a
// loaded machine takes a while. It SIGKILLs what it finds and returns how many.
func (t *tree) leftovers() int {
	if len(t.killed) == 0 && !t.others {
		return 0
	}
	n := 0
	for _, p := range t.membersByScan() {
		if !p.zombie {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// reap collects, among ms, the zombies that are our own children (orphans
// that came back to us), except the main process, which os/exec waits for.
func (t *tree) reap(ms []procInfo) {
	for _, p := range ms {
		if p.zombie && p.pid != t.mainPid && (t.attributed || !t.before[p.pid]) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil) // ECHILD unless ours
		}
	}
}

// kill SIGKILLs the tree until nothing is left (a fork bomb is outrun by
// repeating; a v2 cgroup kills it at once), reaping our own zombies, for at
// most limit.
func (t *tree) kill(limit time.Duration) {
	deadline := time.Now().Add(limit)
	defer t.reapOrphans()
	if t.cg.killAll() {
		t.others = true
	}
	for {
		n, ms := t.signalMembers(syscall.SIGKILL, t.members())
		if n == 0 {
			n = t.leftovers()
		}
		t.reap(ms)
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reapOrphans collects the run's orphans that came back to hunk and died
// there (an attributed run with a cgroup: a zombie is told by the cgroup
// /proc still names for it). An active run's main process is never reaped
// here: its supervisor waits for it.
func (t *tree) reapOrphans() {
	if !t.attributed || t.cg == nil {
		return
	}
	kids, _ := childrenOf(t.self)
	for _, k := range kids {
		if k == t.mainPid || activeMain(k) {
			continue
		}
		if zombie, ok := stateOf(k); ok && zombie && t.cg.holds(k) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(k, &ws, syscall.WNOHANG, nil)
		}
	}
}

// terminate sends SIGTERM, waits up to grace for the tree to exit, then kills
// what is left.
func (t *tree) terminate(grace time.Duration) {
	if t.signal(syscall.SIGTERM) > 0 {
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			ms := t.members()
			t.reap(ms)
			if len(t.live(ms)) == 0 {
				break
			}
		}
	}
	t.kill(5 * time.Second)
}
