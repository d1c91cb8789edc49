package docker

// A cold run: a container of its own for one command, removed when it
// ends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/egress"
	"github.com/moby/moby/api/pkg/stdcopy"
)

// runCold runs spec in a container of its own, created, attached, started,
// waited for and removed (by the engine: AutoRemove, so it also goes away
// when hunk is killed, once the command ends; `hunk exec --gc` removes
// containers whose hunk is gone before that).
func (d *Docker) runCold(ctx context.Context, e *engine, spec sandbox.Spec, stdout, stderr io.Writer) (runState, error) {
	spec.Stdin = dockerStdin(spec)
	cfg := coldConfig(spec)
	created := time.Now()
	id, err := createContainer(ctx, e, randomName("hunk-"), spec, cfg)
	if err != nil {
		return runState{}, err
	}
	defer sandbox.Watch("container", id)() // removed by the watchdog, should hunk die
	started := false
	defer func() {
		if !started {
			removeContainer(e, id)
		}
	}()
	q := url.Values{"stream": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	if spec.Stdin != nil {
		q.Set("stdin", "1")
	}
	conn, err := e.hijack(ctx, "/containers/"+id+"/attach", q, nil)
	if err != nil {
		return runState{}, err
	}
	defer conn.Close()

	// Wait for removal, not just exit, so the container is gone when hunk
	// returns (as `docker run --rm` does).
	waitCtx, cancelWait := context.WithCancel(context.Background())
	defer cancelWait()
	waitc := waitRemoved(ctx, waitCtx, e, id)

	if err := e.do(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil); err != nil {
		if c := startExitCode(err); c != 0 {
			return runState{code: c, notStarted: err.Error()}, nil
		}
		return runState{}, err
	}
	started = true

	copied := pump(conn, stdout, stderr, spec.Stdin)

	var timer <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timer = t.C
	}
	var st runState
	select {
	case w := <-waitc:
		if w.err != nil {
			// Lost track of the container: do not let it run on.
			removeContainer(e, id)
			return runState{}, w.err
		}
		st.code = w.code
	case <-timer:
		st.timedOut = true
		killContainer(e, id)
	case <-ctx.Done():
		killContainer(e, id)
		awaitRemoval(waitc)
		return runState{}, errInterrupted
	}
	if st.timedOut {
		w := awaitRemoval(waitc)
		if w != nil {
			removeContainer(e, id)
		}
	}
	drain(copied, conn)
	if st.code == 137 && spec.Memory > 0 && !st.timedOut {
		st.oom = oomKilled(e, id, created)
	}
	return st, nil
}

// coldConfig is the container for a cold run of spec: attached, removed by
// the engine when the command ends, labelled with its owner and a deadline
// past which --gc removes it.
func coldConfig(spec sandbox.Spec) containerConfig {
	cfg := containerFor(spec)
	cfg.Cmd = spec.Argv
	if spec.Egress != nil {
		cfg.Cmd = egress.DoorArgv(spec.Egress.Loops, spec.Argv)
	}
	cfg.AttachStdout, cfg.AttachStderr = true, true
	if spec.Stdin != nil {
		cfg.AttachStdin, cfg.OpenStdin, cfg.StdinOnce = true, true, true
	}
	cfg.HostConfig.AutoRemove = true
	deadline := time.Now().Add(spec.Timeout + time.Minute)
	if spec.Timeout <= 0 {
		deadline = time.Now().Add(7 * 24 * time.Hour)
	}
	cfg.Labels = map[string]string{
		labelManaged: "1", labelMode: "cold", labelWorkspace: spec.Workspace,
		labelOwner: selfOwner(), labelDeadline: strconv.FormatInt(deadline.Unix(), 10),
	}
	return cfg
}

// waitResult is how a container ended: its exit code, or why that is not
// known.
type waitResult struct {
	code int
	err  error
}

// waitRemoved waits (under waitCtx) for container id to be removed, and
// returns once the engine registered the wait (or ctx ended): a wait
// registered after the start could miss a fast command's removal; the
// engine registers it before it answers with the headers.
func waitRemoved(ctx, waitCtx context.Context, e *engine, id string) <-chan waitResult {
	waitc := make(chan waitResult, 1)
	waitReady := make(chan struct{})
	go func() {
		var w struct {
			StatusCode int
			Error      *struct{ Message string }
		}
		resp, err := e.send(waitCtx, http.MethodPost, "/containers/"+id+"/wait", url.Values{"condition": {"removed"}}, nil, "")
		close(waitReady)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&w)
			resp.Body.Close()
			if err == nil && w.Error != nil && w.Error.Message != "" {
				err = errors.New(w.Error.Message)
			}
		}
		waitc <- waitResult{w.StatusCode, err}
	}()
	select {
	case <-waitReady:
	case <-ctx.Done():
	}
	return waitc
}

// awaitRemoval waits (bounded) for the wait goroutine after a kill; it
// returns an error when the container did not go away in time.
func awaitRemoval[T any](waitc <-chan T) error {
	select {
	case <-waitc:
		return nil
	case <-time.After(20 * time.Second):
		return errors.New("container not removed in time")
	}
}

// drain waits for the output copier to reach the end of the stream; a stream
// the engine keeps open after the command ended is cut after a grace period.
func drain(copied <-chan error, conn io.Closer) {
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		conn.Close()
		<-copied
	}
}

// oomKilled asks the engine's event log whether container id was killed by
// the memory limit since since (the "oom" event; it works also after the
// container was removed).
func oomKilled(e *engine, id string, since time.Time) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	filters, _ := json.Marshal(map[string][]string{"container": {id}, "event": {"oom"}})
	// The event can lag the exit on a busy engine (seen: more than 2 s while
	// the race-enabled test suite ran beside it): look for up to 6 s. Only a
	// run that exited 137 under --memory pays for it.
	for try := 0; try < 120; try++ {
		until := time.Now()
		q := url.Values{
			"since":   {fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())},
			"until":   {fmt.Sprintf("%d.%09d", until.Unix(), until.Nanosecond())},
			"filters": {string(filters)},
		}
		resp, err := e.send(ctx, http.MethodGet, "/events", q, nil, "")
		if err != nil {
			return false
		}
		var ev struct{ Action, Status string }
		found := json.NewDecoder(resp.Body).Decode(&ev) == nil && (ev.Action == "oom" || ev.Status == "oom")
		resp.Body.Close()
		if found {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// pump copies a hijacked attach or exec stream: the engine's multiplexed
// output to stdout and stderr, and stdin (if any) to the command, closing
// the write side at its end. The channel reports when the output has ended.
func pump(conn *hijacked, stdout, stderr io.Writer, stdin io.Reader) <-chan error {
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, conn)
		copied <- err
	}()
	if stdin != nil {
		go func() {
			_, _ = io.Copy(conn, stdin)
			_ = conn.CloseWrite()
		}()
	}
	return copied
}
