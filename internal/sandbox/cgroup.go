//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Resource limits (--memory, --pids, --cpus) are enforced through cgroups,
// the only kernel mechanism that bounds a whole process tree. hunk creates a
// child of its own cgroup (so any limit already on hunk still applies), in
// the cgroup v1 hierarchy of each controller when one is mounted, else in
// the unified (v2) hierarchy when the controller is delegated there. When
// neither works (not root, no delegation), the limit is refused.

// Controllers hunk uses.
const (
	ctrlMemory = "memory"
	ctrlPids   = "pids"
	ctrlCPU    = "cpu"
)

// cgroupPlace is where one controller's child cgroup would go.
type cgroupPlace struct {
	v2     bool
	parent string // directory of hunk's own cgroup for that controller
}

// cgroupRoot is where the cgroup hierarchies are mounted (everywhere in
// practice; reading /proc/self/mountinfo instead costs more than the rest of
// a run's set-up on a machine with many mounts).
const cgroupRoot = "/sys/fs/cgroup"

// cgroupPlaces finds, for each controller, the writable cgroup directory
// hunk itself is in. Controllers with no usable hierarchy are absent.
func cgroupPlaces() map[string]cgroupPlace {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	places := map[string]cgroupPlace{}
	v2path, hasV2 := "", false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2path, hasV2 = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != ctrlMemory && c != ctrlPids && c != ctrlCPU {
				continue
			}
			// "cpu" may be mounted as "cpu,cpuacct" (with a "cpu" symlink).
			for _, m := range []string{c, parts[1]} {
				var fs unix.Statfs_t
				if unix.Statfs(filepath.Join(cgroupRoot, m), &fs) != nil || fs.Type != unix.CGROUP_SUPER_MAGIC {
					continue
				}
				dir := filepath.Join(cgroupRoot, m, parts[2])
				if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
					places[c] = cgroupPlace{parent: dir}
					break
				}
			}
		}
	}
	if hasV2 {
		// The unified hierarchy: at the root on pure v2 systems, under
		// "unified" on hybrid ones.
		for _, m := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
			dir := filepath.Join(m, v2path)
			b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
			if err != nil {
				continue
			}
			for _, c := range strings.Fields(string(b)) {
				if _, v1 := places[c]; !v1 {
					places[c] = cgroupPlace{v2: true, parent: dir}
				}
			}
			break
		}
	}
	for c, pl := range places {
		if unix.Access(pl.parent, unix.W_OK) != nil {
			delete(places, c)
		}
	}
	return places
}

var cgroupCapsOnce = sync.OnceValues(func() (bool, [3]bool) {
	pl := cgroupPlacesOnce()
	_, memory := pl[ctrlMemory]
	_, pids := pl[ctrlPids]
	_, cpus := pl[ctrlCPU]
	return true, [3]bool{memory, pids, cpus}
})

// pidsCheap reports whether a process limit costs a run next to nothing
// here: under cgroup v2 the command is cloned straight into its cgroup.
// Under v1 the forking thread must join the cgroup and leave it, and each
// move waits for an RCU grace period (milliseconds on a busy machine), so
// only a limit asked for is paid for there.
func pidsCheap() bool {
	return cgroupPlacesOnce()[ctrlPids].v2
}

var cgroupPlacesOnce = sync.OnceValue(cgroupPlaces)

// cgroupCaps reports which limits cgroups can enforce here (computed once
// per process).
func cgroupCaps() (memory, pids, cpus bool) {
	_, c := cgroupCapsOnce()
	return c[0], c[1], c[2]
}

// cgroup is the set of child cgroups (one per hierarchy) a run's processes
// are put in.
type cgroup struct {
	dirs  []string        // created directories, one per hierarchy
	v2    map[string]bool // those of dirs in the unified (v2) hierarchy
	mem   string          // the directory holding the memory controller, if any
	memV2 bool
	// A v1 pids cgroup counts the start thread while it sits there to fork
	// the command: pids.max holds one more until the thread has left.
	pidsDir string
	pids    int

	// Opened by the start thread (see enter) before the fork.
	v2fd    int        // the v2 cgroup's directory, for CLONE_INTO_CGROUP; -1 if none
	join    []*os.File // the v1 cgroups' tasks files
	leave   []*os.File // the tasks files of hunk's own v1 cgroups
	pidsMax *os.File
}

var cgroupSeq atomic.Int64

// newCgroup creates cgroups enforcing the limits of spec. It returns nil and
// no error when spec asks for no limit, and a LIMIT_UNENFORCEABLE error
// naming the limit when one cannot be enforced here. With group, a run
// asking for no limit still gets a cgroup where a cgroup v2 hierarchy is
// writable (root, or a delegated subtree; on a hybrid system the unified
// one, controllers or not): every process of the run is found there, its
// orphans too, and killed with one write (cgroup.kill) — what lets runs of
// one process go on beside each other (tree).
func newCgroup(spec Spec, group bool) (*cgroup, error) {
	cg, err := newLimitCgroup(spec)
	if cg != nil || err != nil || !group {
		return cg, err
	}
	parent, ok := groupParent()
	if !ok {
		return nil, nil
	}
	sweepStale(parent)
	dir := filepath.Join(parent, fmt.Sprintf("hunk-exec-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if os.Mkdir(dir, 0o755) != nil {
		return nil, nil // runs as a run nothing groups (tree)
	}
	return &cgroup{dirs: []string{dir}, v2: map[string]bool{dir: true}, v2fd: -1}, nil
}

// groupParent is hunk's own cgroup in the cgroup v2 hierarchy, when hunk
// may make cgroups in it.
var groupParent = sync.OnceValues(func() (string, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		rel, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		for _, m := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
			var fs unix.Statfs_t
			if unix.Statfs(m, &fs) != nil || fs.Type != unix.CGROUP2_SUPER_MAGIC {
				continue
			}
			dir := filepath.Join(m, rel)
			if unix.Access(dir, unix.W_OK) == nil {
				return dir, true
			}
		}
	}
	return "", false
})

// newLimitCgroup is newCgroup for the limits alone.
func newLimitCgroup(spec Spec) (*cgroup, error) {
	var want []string
	if spec.Memory > 0 {
		want = append(want, ctrlMemory)
	}
	if spec.Pids > 0 {
		want = append(want, ctrlPids)
	}
	if spec.CPUs > 0 {
		want = append(want, ctrlCPU)
	}
	if len(want) == 0 {
		return nil, nil
	}
	places := cgroupPlaces()
	for _, c := range want {
		if _, ok := places[c]; !ok {
			return nil, limitError(c, "no writable cgroup hierarchy with the "+c+" controller (hunk must run as root, or with a delegated cgroup v2 subtree)")
		}
	}
	for _, c := range want {
		sweepStale(places[c].parent)
	}
	name := fmt.Sprintf("hunk-exec-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	cg := &cgroup{v2: map[string]bool{}, v2fd: -1}
	byDir := map[string][]string{} // created dir -> controllers in it
	for _, c := range want {
		pl := places[c]
		dir := filepath.Join(pl.parent, name)
		if _, done := byDir[dir]; !done {
			if pl.v2 {
				// The controller must be enabled for hunk's cgroup's children.
				_ = os.WriteFile(filepath.Join(pl.parent, "cgroup.subtree_control"), []byte("+"+c), 0)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				cg.destroy()
				return nil, limitError(c, fmt.Sprintf("creating cgroup: %v", err))
			}
			cg.dirs = append(cg.dirs, dir)
			cg.v2[dir] = pl.v2
		}
		byDir[dir] = append(byDir[dir], c)
		if err := cg.set(c, pl.v2, dir, spec); err != nil {
			cg.destroy()
			return nil, limitError(c, err.Error())
		}
	}
	return cg, nil
}

func limitError(ctrl, why string) error {
	flag := map[string]string{ctrlMemory: "--memory", ctrlPids: "--pids", ctrlCPU: "--cpus"}[ctrl]
	return &LimitError{Limit: flag, Reason: why}
}

// set writes controller c's limit into dir.
func (cg *cgroup) set(c string, v2 bool, dir string, spec Spec) error {
	w := func(file, val string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0); err != nil {
			return fmt.Errorf("setting %s: %w", file, err)
		}
		return nil
	}
	switch c {
	case ctrlMemory:
		cg.mem, cg.memV2 = dir, v2
		if v2 {
			if err := w("memory.max", strconv.FormatInt(spec.Memory, 10)); err != nil {
				return err
			}
			_ = w("memory.swap.max", "0")
			return nil
		}
		if err := w("memory.limit_in_bytes", strconv.FormatInt(spec.Memory, 10)); err != nil {
			return err
		}
		// No swapping around the limit, where swap accounting exists.
		if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
			_ = w("memory.memsw.limit_in_bytes", strconv.FormatInt(spec.Memory, 10))
		}
		_ = w("memory.swappiness", "0")
		return nil
	case ctrlPids:
		if v2 {
			return w("pids.max", strconv.Itoa(spec.Pids))
		}
		cg.pidsDir, cg.pids = dir, spec.Pids
		return w("pids.max", strconv.Itoa(spec.Pids+1))
	case ctrlCPU:
		const period = 100000
		quota := int64(spec.CPUs * period)
		if quota < 1000 {
			quota = 1000
		}
		if v2 {
			return w("cpu.max", fmt.Sprintf("%d %d", quota, period))
		}
		if err := w("cpu.cfs_period_us", strconv.Itoa(period)); err != nil {
			return err
		}
		return w("cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
	}
	return nil
}

// openForThread opens what the start thread needs to place the command in
// the cgroups: a v2 cgroup's directory (the command is cloned into it), and
// for v1, where a single thread can change cgroups, the tasks files to move
// the thread in and back out, and pids.max to tighten once it is out.
func (cg *cgroup) openForThread() error {
	for _, d := range cg.dirs {
		if cg.v2[d] {
			fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("opening cgroup %s: %w", d, err)
			}
			cg.v2fd = fd
			continue
		}
		in, err := os.OpenFile(filepath.Join(d, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
		cg.join = append(cg.join, in)
		out, err := os.OpenFile(filepath.Join(filepath.Dir(d), "tasks"), os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
		cg.leave = append(cg.leave, out)
	}
	if cg.pidsDir != "" {
		f, err := os.OpenFile(filepath.Join(cg.pidsDir, "pids.max"), os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("setting pids.max: %w", err)
		}
		cg.pidsMax = f
	}
	return nil
}

// enter prepares the fork of the command into the run's cgroups: it
// returns the v2 cgroup's descriptor to clone into (-1: none) and moves
// the calling thread into the v1 cgroups. A nil cgroup (no limits) does
// nothing.
func (cg *cgroup) enter() (int, error) {
	if cg == nil {
		return -1, nil
	}
	if err := cg.openForThread(); err != nil {
		return -1, err
	}
	return cg.v2fd, cg.enterThread()
}

// enterThread moves the calling thread into the v1 cgroups.
func (cg *cgroup) enterThread() error {
	id := tid()
	for _, f := range cg.join {
		if _, err := f.Write(id); err != nil {
			return fmt.Errorf("joining cgroup %s: %w", f.Name(), err)
		}
	}
	return nil
}

// leaveThread, once the command has started, sets the pids limit to its
// value (while the thread still counts, so the command never has more) and
// moves the calling thread back to hunk's own cgroups; it closes the files.
func (cg *cgroup) leaveThread() {
	if cg == nil {
		return
	}
	if cg.pidsMax != nil {
		_, _ = cg.pidsMax.Write([]byte(strconv.Itoa(cg.pids)))
		cg.pidsMax.Close()
		cg.pidsMax = nil
	}
	id := tid()
	for _, f := range cg.leave {
		_, _ = f.Write(id)
		f.Close()
	}
	for _, f := range cg.join {
		f.Close()
	}
	cg.join, cg.leave = nil, nil
	if cg.v2fd >= 0 {
		unix.Close(cg.v2fd)
		cg.v2fd = -1
	}
}

// empty reports whether no process is left in the cgroups.
func (cg *cgroup) empty() bool { return len(cg.procs()) == 0 }

// procs lists the processes in the cgroups.
func (cg *cgroup) procs() []int {
	if cg == nil {
		return nil
	}
	var out []int
	seen := map[int]bool{}
	self := os.Getpid()
	for _, d := range cg.dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			// hunk itself is listed while its start thread is in a v1 cgroup.
			if p, err := strconv.Atoi(f); err == nil && !seen[p] && p != self {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// oomKilled reports whether the kernel killed a process for the memory limit.
func (cg *cgroup) oomKilled() bool {
	if cg == nil || cg.mem == "" {
		return false
	}
	file := "memory.oom_control"
	if cg.memV2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(cg.mem, file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// killAll kills every process in the cgroups at once where the kernel can
// (cgroup.kill, Linux 5.14, in a v2 cgroup: new forks included, and no
// thread or memory of hunk's needed); it reports whether it could.
func (cg *cgroup) killAll() bool {
	if cg == nil {
		return false
	}
	done := false
	for _, d := range cg.dirs {
		if cg.v2[d] {
			if f, err := os.OpenFile(filepath.Join(d, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
				_, err = f.Write([]byte("1"))
				f.Close()
				done = done || err == nil
			}
		}
	}
	return done
}

// holds reports whether the process pid (a zombie too) was placed in the
// run's v2 cgroup: /proc/PID/cgroup still names it once the process has
// exited, where cgroup.procs no longer lists it.
func (cg *cgroup) holds(pid int) bool {
	if cg == nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, d := range cg.dirs {
		if !cg.v2[d] {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rel, ok := strings.CutPrefix(line, "0::"); ok && rel != "/" && strings.HasSuffix(d, rel) {
				return true
			}
		}
	}
	return false
}

// destroy kills anything left in the cgroups and removes them.
func (cg *cgroup) destroy() {
	if cg == nil {
		return
	}
	cg.killAll()
	deadline := time.Now().Add(5 * time.Second)
	for _, d := range cg.dirs {
		for {
			for _, p := range cg.procs() {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// sweepStale kills what is left in the cgroups of hunk processes that died
// without cleaning up (killed with SIGKILL: the command itself dies with
// hunk, by its parent-death signal, but what it started in a new session
// does not) and removes them. Every run does it in the hierarchies it uses.
func sweepStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if owner, ok := ownerPid(e.Name(), "hunk-exec-"); ok && !alive(owner) {
			(&cgroup{dirs: []string{filepath.Join(parent, e.Name())}}).destroy()
		}
	}
}

// ownerPid reads the pid in a name made as prefix + "<pid>-…".
func ownerPid(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

// alive reports whether a process pid exists (hunk's own pid is alive).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
