//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog: what a run started must not outlive hunk, even hunk killed
// with SIGKILL. bwrap's pid namespace dies with hunk (--die-with-parent);
// a landlock or none run's processes (a setsid'd daemon escapes the
// parent-death signal) and a docker container do not. So a hunk process
// that runs those keeps a small helper — its own binary again, started
// once, in a session of its own so that no terminal signal reaches it —
// and tells it over a pipe what each run holds: its cgroup, its private
// temporary directory (which marks its processes), its container. The
// helper does nothing while the pipe is open. When it closes — hunk ended,
// or was killed — the helper kills and removes whatever is still listed,
// and exits: a run that ended took its entry back.

// WatchdogCommand starts the helper: the hunk binary in its watchdog role,
// reading the pipe on its stdin. Set by the command line; nil (tests of
// this package): no watchdog.
var WatchdogCommand func() *exec.Cmd

// watchdogCleanups are the ways an entry is cleaned up, by kind; a driver
// package adds its own (docker: "container").
var watchdogCleanups = map[string]func(id string){
	"cgroup": func(dir string) { (&cgroup{dirs: []string{dir}, v2: map[string]bool{dir: isV2Dir(dir)}}).destroy() },
	"tmp": func(dir string) {
		killTagged("TMPDIR=" + dir)
		_ = os.RemoveAll(dir)
	},
}

// OnWatchdog registers how the watchdog cleans up an entry of kind.
func OnWatchdog(kind string, cleanup func(id string)) { watchdogCleanups[kind] = cleanup }

var (
	watchdogMu    sync.Mutex
	watchdogPipe  *os.File      // the write end; entries are written at once
	watchdogPid   int           // the helper, once started
	watchdogReady chan struct{} // closed once the start is over (or failed)
)

// Watch tells the watchdog that a run holds id (of kind) until unwatch is
// called. The helper is started the first time, beside the run (its entries
// wait in the pipe): starting a process costs milliseconds a run should not
// wait for. Without a watchdog (none could start) nothing is watched: the
// next run's sweep takes over.
func Watch(kind, id string) (unwatch func()) {
	watchdogMu.Lock()
	defer watchdogMu.Unlock()
	if watchdogReady == nil && WatchdogCommand != nil {
		startWatchdog()
	}
	if watchdogPipe == nil {
		return func() {}
	}
	line := kind + " " + id + "\n"
	_, _ = io.WriteString(watchdogPipe, "+"+line)
	return func() {
		watchdogMu.Lock()
		defer watchdogMu.Unlock()
		_, _ = io.WriteString(watchdogPipe, "-"+line)
	}
}

// watchDelay is how long a run goes before the watchdog watches it: a
// command that ends sooner (most of an agent's: ls, cat, git status) never
// pays for starting the helper; one killed with hunk in that moment is
// left to the next run's sweep.
const watchDelay = 50 * time.Millisecond

// WatchSoon is Watch once the run has lasted watchDelay.
func WatchSoon(kind, id string) (unwatch func()) {
	var mu sync.Mutex
	var un func()
	done := false
	t := time.AfterFunc(watchDelay, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			un = Watch(kind, id)
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		done = true
		if un != nil {
			un()
		}
	}
}

// startWatchdog starts the helper with the read end of a pipe as its
// stdin, on a goroutine of its own (watchdogMu held).
func startWatchdog() {
	watchdogReady = make(chan struct{})
	r, w, err := os.Pipe()
	if err != nil {
		close(watchdogReady)
		return
	}
	watchdogPipe = w
	cmd := WatchdogCommand()
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	go func() {
		defer close(watchdogReady)
		err := cmd.Start()
		r.Close()
		if err != nil {
			return // entries go nowhere; the pipe is never read
		}
		watchdogMu.Lock()
		watchdogPid = cmd.Process.Pid
		watchdogMu.Unlock()
		go func() { _ = cmd.Wait() }() // reaped when it ends; no run's clean-up counts it (isWatchdog)
	}()
}

// waitWatchdog waits for a start of the helper under way: a run that
// counts hunk's children as its own (tree: not attributed) must know it.
func waitWatchdog() {
	watchdogMu.Lock()
	ready := watchdogReady
	watchdogMu.Unlock()
	if ready != nil {
		<-ready
	}
}

// isWatchdog reports whether pid is this process's watchdog.
func isWatchdog(pid int) bool {
	watchdogMu.Lock()
	defer watchdogMu.Unlock()
	return pid == watchdogPid && pid != 0
}

// WatchdogMain is the helper's role: read entries from in until it ends,
// then clean up those still listed. Terminal signals are ignored: only the
// pipe's end says that hunk is gone.
func WatchdogMain(in io.Reader) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	held := map[string]bool{}
	var order []string
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if len(l) < 2 {
			continue
		}
		switch entry := l[1:]; l[0] {
		case '+':
			if !held[entry] {
				order = append(order, entry)
			}
			held[entry] = true
		case '-':
			delete(held, entry)
		}
	}
	for _, e := range order {
		if !held[e] {
			continue
		}
		kind, id, _ := strings.Cut(e, " ")
		if f := watchdogCleanups[kind]; f != nil {
			f(id)
		} else {
			fmt.Fprintf(os.Stderr, "hunk: watchdog: no clean-up for %s\n", e)
		}
	}
	return 0
}

// isV2Dir reports whether dir lies in a cgroup v2 hierarchy.
func isV2Dir(dir string) bool {
	var fs syscall.Statfs_t
	return syscall.Statfs(dir, &fs) == nil && fs.Type == 0x63677270 // CGROUP2_SUPER_MAGIC
}
