package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// descendants returns the processes below root (not root itself).
func descendants(root int) []procInfo {
	tab := processTable()
	kids := map[int][]procInfo{}
	for _, p := range tab {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// tree is the set of processes a run owns: everything below the calling
// process (which is a child subreaper while a run is active, so orphaned
// grandchildren, setsid'd or daemonized, come back to it rather than to
// init), plus everything in the run's cgroup when it has one.
type tree struct {
	self    int
	mainPid int // waited for by os/exec; never reaped here
	cg      *cgroup
}

// alive returns the live (non-zombie) members of the tree.
func (t *tree) alive() []int {
	var pids []int
	seen := map[int]bool{}
	for _, p := range descendants(t.self) {
		if !p.zombie {
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
	pids := t.alive()
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
	return len(pids)
}

// reap collects the zombies that are our own children (orphans that came
// back to us), except the main process, which os/exec waits for.
func (t *tree) reap() {
	for _, p := range processTable() {
		if p.ppid == t.self && p.zombie && p.pid != t.mainPid {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// kill SIGKILLs the tree until nothing is left (a fork bomb is outrun by
// repeating), reaping our own zombies, for at most limit.
func (t *tree) kill(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		n := t.signal(syscall.SIGKILL)
		t.reap()
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// terminate sends SIGTERM, waits up to grace for the tree to exit, then kills
// what is left.
func (t *tree) terminate(grace time.Duration) {
	if t.signal(syscall.SIGTERM) > 0 {
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			t.reap()
			if len(t.alive()) == 0 {
				break
			}
		}
	}
	t.kill(5 * time.Second)
}
