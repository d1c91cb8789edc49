//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// What one hunk process holds while its runs go on beside each other (hunk
// mcp answers exec calls concurrently): a bound on how many run at once,
// the rest queued in order; a run that cannot tell its processes from
// hunk's other children (tree: not attributed) runs alone; and the main
// processes being waited for, which no clean-up may reap.

var runSlots = semaphore.NewWeighted(MaxRuns)

// takeTurn waits for the run's turn: one slot for an attributed run, every
// slot for one that must be alone. It returns the release, or ctx's error
// when hunk is interrupted while the run waits (nothing of it started).
func takeTurn(ctx context.Context, attributed bool) (func(), error) {
	n := int64(1)
	if !attributed {
		n = MaxRuns
	}
	if err := runSlots.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { runSlots.Release(n) }, nil
}

var (
	mainsMu sync.Mutex
	mains   = map[int]bool{}
)

// watchMain registers pid as a run's main process, which its supervisor
// waits for (unwatchMain once reaped).
func watchMain(pid int) {
	mainsMu.Lock()
	mains[pid] = true
	mainsMu.Unlock()
}

func unwatchMain(pid int) {
	mainsMu.Lock()
	delete(mains, pid)
	mainsMu.Unlock()
}

// activeMain reports whether pid is a run's main process not reaped yet.
func activeMain(pid int) bool {
	mainsMu.Lock()
	defer mainsMu.Unlock()
	return mains[pid]
}

// ProcessBound says how a run's processes are bounded here when --pids
// asks for nothing, for --drivers.
func ProcessBound() string {
	_, pids, _ := cgroupCaps()
	switch {
	case pidsCheap():
		return fmt.Sprintf("every run is bounded to %d processes and threads unless --pids (exec.pids) says otherwise (cgroup v2, at no cost)", DefaultPids)
	case pids:
		return fmt.Sprintf("no default bound here (cgroup v1, where a bound costs a run about 5 ms): --pids N or exec.pids sets one; docker bounds every container to %d", DefaultPids)
	}
	return fmt.Sprintf("no bound here (cgroups need root or a delegated cgroup v2 subtree; hunk keeps threads of its own in reserve, and times the command out); docker bounds every container to %d", DefaultPids)
}
