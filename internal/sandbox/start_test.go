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
)

// The landlock driver confines the thread it starts the command from. The
// confinement must not leak to the rest of the process: neither to a
// goroutine running while the command runs, nor to one after, nor to a
// process hunk starts afterwards without the sandbox.
func TestConfinementStaysOnItsThread(t *testing.T) {
	d := Lookup("landlock")
	if c := d.Probe(context.Background()); !c.Available {
		if required("landlock") {
			t.Fatalf("landlock required: %s", c.Reason)
		}
		t.Skipf("SKIPPED: landlock not available: %s", c.Reason)
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
