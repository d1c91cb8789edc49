//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// The landlock driver confines only the command's own process, in the child
// between fork and exec (fork.go). Nothing of it may reach hunk: neither a
// goroutine running while the command runs, nor one after, nor a process
// hunk starts afterwards without the sandbox.
func TestConfinementStaysOnItsThread(t *testing.T) {
	d := Lookup("landlock")
	if c := d.Probe(context.Background()); !c.Available {
		if required("landlock") {
			t.Fatalf("landlock required: %s", c.Reason)
		}
		sandboxtest.Skip(t, "landlock not available: %s", c.Reason)
	}
	outside := t.TempDir()
	// Unconfined work that must keep working: a socket, a write outside the
	// workspace, a child process writing outside the workspace. Each on a
	// thread of its own (locked), so that every thread of the process is
	// eventually exercised, new ones included.
	probe := func(tag string, child bool) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ln.Close()
		if err := os.WriteFile(filepath.Join(outside, tag), []byte("x"), 0o644); err != nil {
			return err
		}
		if !child {
			return nil
		}
		out, err := exec.Command("/bin/sh", "-c", "echo y > "+filepath.Join(outside, tag+".child")+" && echo ok").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("ok")) {
			return &exec.Error{Name: "child " + tag, Err: err}
		}
		return nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				// No child process here: while a run is active, every child
				// of the process belongs to the run (see tree).
				if err := probe("during-"+string(rune('a'+i))+"-"+string(rune('0'+n%10)), false); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for i := 0; i < 5; i++ {
		s := sh(t, "exec 3<>/dev/tcp/127.0.0.1/1 2>/dev/null; echo x > "+filepath.Join(outside, "from-sandbox")+" 2>/dev/null && echo escaped")
		r := mustRun(t, d, s)
		if bytes.Contains(r.Stdout, []byte("escaped")) {
			t.Fatalf("the sandboxed command wrote outside the workspace")
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unconfined goroutine during a run: %v", err)
	}
	// After the runs, on fresh locked threads and on whatever thread runs
	// this goroutine.
	for i := 0; i < 4; i++ {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			done <- probe("after-"+string(rune('a'+i)), true)
		}()
		if err := <-done; err != nil {
			t.Errorf("after a run: %v", err)
		}
	}
	if err := probe("after-main", true); err != nil {
		t.Errorf("after a run: %v", err)
	}
}

// Under cgroup v2 the command is cloned straight into the run's cgroup
// (CLONE_INTO_CGROUP): checked on whatever v2 hierarchy is writable here
// (on a hybrid machine, the unified one, even without controllers).
func TestStartIntoV2Cgroup(t *testing.T) {
	var root string
	for _, m := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(m, "cgroup.controllers")); err == nil {
			root = m
			break
		}
	}
	if root == "" || os.Geteuid() != 0 {
		sandboxtest.Skip(t, "no cgroup v2 hierarchy writable here")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var own string
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("0::")) {
			own = string(line[3:])
		}
	}
	dir := filepath.Join(root, own, "hunk-test-v2-"+filepath.Base(t.TempDir()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		sandboxtest.Skip(t, "cannot create a v2 cgroup: %v", err)
	}
	cg := &cgroup{dirs: []string{dir}, v2: map[string]bool{dir: true}, v2fd: -1}
	defer cg.destroy()
	st := NewStreams(Spec{})
	p := command("/bin/cat", []string{"cat", "/proc/self/cgroup"}, nil, "/")
	if _, err := supervise(context.Background(), Spec{}, p, cg, st, superviseOpts{}); err != nil {
		t.Fatal(err)
	}
	st.Stdout.Close()
	out := st.Stdout.Bytes()
	want := "0::" + filepath.Join(own, filepath.Base(dir))
	if !bytes.Contains(out, []byte(want+"\n")) {
		t.Fatalf("the command's cgroups:\n%s\nwant a line %q", out, want)
	}
	// hunk itself stayed where it was.
	if b2, _ := os.ReadFile("/proc/self/cgroup"); !bytes.Equal(b, b2) {
		t.Fatalf("hunk's own cgroups changed:\n%s\nwas\n%s", b2, b)
	}
}

// Under cgroup v1 the start thread joins the cgroup to fork and leaves it
// at once: the command is in it, hunk (every thread of it) is not after.
func TestStartIntoV1CgroupLeaves(t *testing.T) {
	mem, pids, _ := cgroupCaps()
	if !mem || !pids {
		sandboxtest.Skip(t, "cgroups not writable here")
	}
	s := newSpec(t, "/bin/sh", "-c", "cat /proc/self/cgroup; sleep 60")
	s.Pids = 5
	cg, err := newCgroup(s, false)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.destroy()
	st := NewStreams(Spec{})
	p := command("/bin/sh", s.Argv, nil, "/")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := supervise(ctx, Spec{}, p, cg, st, superviseOpts{})
		done <- err
	}()
	// Looked at until the command is in the cgroup, no thread of hunk is
	// (however slow the machine: the start thread leaves once it has
	// forked) and the command has said where it is (stopped before its
	// cat ran, it says nothing: a loaded CI run found so), then it is
	// stopped.
	var procs []int
	var tasks []byte
	var inside []string
	for {
		procs, tasks, inside = cg.procs(), nil, nil
		for _, d := range cg.dirs {
			b, _ := os.ReadFile(filepath.Join(d, "tasks"))
			tasks = append(tasks, b...)
		}
		threads, _ := os.ReadDir("/proc/self/task")
		for _, th := range threads {
			if bytes.Contains(append([]byte("\n"), tasks...), []byte("\n"+th.Name()+"\n")) {
				inside = append(inside, th.Name())
			}
		}
		if len(procs) > 0 && len(inside) == 0 && bytes.Contains(st.Stdout.Bytes(), []byte("\n")) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the command ended (%v) with threads %v of hunk still in the cgroup (tasks %q) or none of its own (%v)", err, inside, tasks, procs)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-done
	st.Stdout.Close()
	if out := st.Stdout.Bytes(); !bytes.Contains(out, []byte(filepath.Base(cg.dirs[0]))) {
		t.Errorf("the command is not in the cgroup:\n%s", out)
	}
	// pids.max is back to the limit asked for.
	for _, d := range cg.dirs {
		if b, err := os.ReadFile(filepath.Join(d, "pids.max")); err == nil && string(bytes.TrimSpace(b)) != "5" {
			t.Errorf("pids.max = %q, want 5", b)
		}
	}
}
