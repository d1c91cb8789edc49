package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// keeperScript is the main process of a warm container (under the engine's
// init, which reaps). Once a second it looks at the container's processes:
// a command hunk started through exec has parent 0 (its parent is outside
// the container); a process whose parent is the init (1) was orphaned by a
// command that ended. While no command runs, orphans are killed — so a
// background process does not outlive its command, as in cold mode — and
// after $1 idle seconds the keeper exits, which stops the container.
const keeperScript = `idle=$1; left=$idle
while [ "$left" -gt 0 ]; do
  sleep 1
  busy=; orphans=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    if [ "$p" = 1 ] || [ "$p" = $$ ]; then continue; fi
    pp=
    while read -r k v; do
      if [ "$k" = PPid: ]; then pp=$v; break; fi
    done 2>/dev/null <"$d/status"
    case $pp in 0) busy=1 ;; 1) orphans="$orphans $p" ;; esac
  done
  if [ -n "$busy" ]; then
    left=$idle
  else
    if [ -n "$orphans" ]; then kill -9 $orphans 2>/dev/null; fi
    left=$((left - 1))
  fi
done
`

// runScript wraps every command exec'd in a warm container: it runs the
// command ("$@" after the run's id) as its child and, once it has ended,
// kills every process that still carries the run's HUNK_RUN_ID — what the
// command left running in the background, setsid'd or daemonized
// included — so that the next command starts in a clean process state.
// (A process that clears its environment escapes the tag; the keeper kills
// it as an orphan once no command runs.) A command not found is said in a
// line of its own that startFailure turns into hunk's message.
const runScript = `id=$1; shift
case $1 in
*/*) [ -e "$1" ] || { printf 'hunk-run: %s: No such file or directory\n' "$1" >&2; exit 127; } ;;
*) command -v "$1" >/dev/null 2>&1 || { printf 'hunk-run: %s: command not found\n' "$1" >&2; exit 127; } ;;
esac
"$@"; c=$?
for pass in 1 2; do
  for f in $(grep -lszxF "HUNK_RUN_ID=$id" /proc/[0-9]*/environ); do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] || kill -9 "$p" 2>/dev/null
  done
done
exit $c
`

// warmName is the name of the warm container for spec: one per workspace
// and configuration (image and its id, network, read-only, limits, user,
// idle period) — an image rebuilt under the same tag gets a new container.
func warmName(spec sandbox.Spec, imageID string) (string, containerConfig) {
	cfg := containerFor(spec)
	cfg.Env = []string{"HOME=/tmp"} // commands get theirs through exec
	idle := int64(spec.Idle / time.Second)
	if idle <= 0 {
		idle = 600
	}
	cfg.Cmd = []string{"/bin/sh", "-c", keeperScript, "hunk-keeper", strconv.FormatInt(idle, 10)}
	// The workspace directory itself, not just its path: a bind mount holds
	// on to the directory it was made from, so a workspace deleted and
	// created again at the same path needs a new container.
	if fi, err := os.Stat(spec.Workspace); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			imageID += fmt.Sprintf("|ws=%d:%d", st.Dev, st.Ino)
		}
	}
	hash := configHash(spec, cfg, imageID)
	cfg.Labels = map[string]string{
		labelManaged: "1", labelMode: "warm", labelWorkspace: spec.Workspace, labelConfig: hash,
	}
	return "hunk-warm-" + hash, cfg
}

// ensureWarm returns the id of the running warm container for spec,
// creating or restarting it as needed. Concurrent hunks agree on the name;
// the loser of a create race uses the winner's container.
func ensureWarm(ctx context.Context, e *engine, spec sandbox.Spec) (string, error) {
	imageID, err := imageID(ctx, e, spec)
	if err != nil {
		return "", err
	}
	name, cfg := warmName(spec, imageID)
	var lastErr error
	// Transitional states (being removed, restarting) settle within
	// seconds; give them that long.
	deadline := time.Now().Add(20 * time.Second)
	for try := 0; time.Now().Before(deadline); try++ {
		if try > 0 {
			select {
			case <-time.After(time.Duration(min(try, 10)) * 20 * time.Millisecond):
			case <-ctx.Done():
				return "", errInterrupted
			}
		}
		var info struct {
			ID    string `json:"Id"`
			State struct {
				Status  string
				Running bool
			}
		}
		err := e.do(ctx, http.MethodGet, "/containers/"+name+"/json", nil, nil, &info)
		switch {
		case isStatus(err, http.StatusNotFound):
			id, err := createContainer(ctx, e, name, spec, cfg)
			if isStatus(err, http.StatusConflict) {
				lastErr = err
				continue // another hunk created it first
			}
			if err != nil {
				return "", err
			}
			if err := e.do(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil); err != nil {
				// Removed under our feet (--gc elsewhere), or a real failure:
				// try again, and report it if it persists.
				lastErr = fmt.Errorf("starting the warm container: %w", err)
				removeContainer(e, id)
				continue
			}
			return id, nil
		case err != nil:
			return "", err
		case info.State.Running:
			return info.ID, nil
		case info.State.Status == "exited" || info.State.Status == "created":
			// Stopped after its idle period: start it again.
			err := e.do(ctx, http.MethodPost, "/containers/"+info.ID+"/start", nil, nil, nil)
			if err == nil || isStatus(err, http.StatusNotModified) {
				return info.ID, nil
			}
			lastErr = err
			removeContainer(e, info.ID)
		default: // dead, removing, paused, restarting: start afresh
			lastErr = fmt.Errorf("container is %s", info.State.Status)
			removeContainer(e, info.ID)
		}
	}
	return "", fmt.Errorf("no usable warm container %s: %v", name, lastErr)
}

// imageID is the id of spec's image, pulled first when missing and
// spec.Pull asks for it.
func imageID(ctx context.Context, e *engine, spec sandbox.Spec) (string, error) {
	var img struct {
		ID string `json:"Id"`
	}
	err := e.do(ctx, http.MethodGet, "/images/"+spec.Image+"/json", nil, nil, &img)
	if err != nil && spec.Pull && isStatus(err, http.StatusNotFound) {
		if perr := pullImage(ctx, e, spec.Image); perr != nil {
			return "", pullFailure(e, spec, perr)
		}
		err = e.do(ctx, http.MethodGet, "/images/"+spec.Image+"/json", nil, nil, &img)
	}
	return img.ID, err
}

// runWarm runs spec through exec in the warm container. Docker cannot kill
// one exec, so a timeout kills and removes the whole container; the next
// command gets a new one. A configuration change gives a different name,
// hence a new container.
func (d *Docker) runWarm(ctx context.Context, e *engine, spec sandbox.Spec, stdout, stderr io.Writer) (runState, error) {
	spec.Stdin = dockerStdin(spec)
	for try := 0; ; try++ {
		st, engineMsg, err := d.runWarmOnce(ctx, e, spec, stdout, stderr)
		// The container went away between our check and the exec (stopped
		// for idleness, or removed by --gc elsewhere): the command never
		// started, so run it in a fresh one.
		if errors.Is(err, errNotStarted) && try < 10 {
			time.Sleep(time.Duration(try) * 20 * time.Millisecond)
			continue
		}
		if errors.Is(err, errNotStarted) {
			err = fmt.Errorf("the warm container kept going away before the command could start: %s", engineMsg)
			engineMsg = ""
		}
		if engineMsg != "" && st.code != 0 {
			st.notStarted = engineMsg
		}
		return st, err
	}
}

// errNotStarted: the exec never started because its container went away.
var errNotStarted = errors.New("the command did not start: its container went away")

// runWarmOnce runs spec once in the warm container; engineMsg is the
// engine's own message when it could not start the command.
func (d *Docker) runWarmOnce(ctx context.Context, e *engine, spec sandbox.Spec, stdout, stderr io.Writer) (st runState, engineMsg string, err error) {
	runID := randomName("")
	execCfg := struct {
		AttachStdin, AttachStdout, AttachStderr, Tty bool
		Cmd                                          []string
		Env                                          []string
		WorkingDir                                   string `json:",omitempty"`
		User                                         string
	}{
		AttachStdin: spec.Stdin != nil, AttachStdout: true, AttachStderr: true,
		Cmd:        append([]string{"/bin/sh", "-c", runScript, "hunk-run", runID}, spec.Argv...),
		Env:        append(dockerEnv(spec.Env), "HUNK_RUN_ID="+runID),
		WorkingDir: spec.Workdir,
	}
	var id, execID string
	deadline := time.Now().Add(15 * time.Second)
	for try := 0; ; try++ {
		if id, err = ensureWarm(ctx, e, spec); err != nil {
			return runState{}, "", err
		}
		var out struct {
			ID string `json:"Id"`
		}
		execCfg.User = containerFor(spec).User
		err = e.do(ctx, http.MethodPost, "/containers/"+id+"/exec", nil, execCfg, &out)
		if err == nil {
			execID = out.ID
			break
		}
		// The keeper may have just stopped the container for idleness, or
		// it is going down after a command brought it down.
		if time.Now().Before(deadline) && (isStatus(err, http.StatusConflict) || isStatus(err, http.StatusNotFound)) {
			time.Sleep(time.Duration(min(try+1, 10)) * 30 * time.Millisecond)
			continue
		}
		return runState{}, "", err
	}
	started := time.Now()
	conn, err := e.hijack(ctx, "/exec/"+execID+"/start", nil, map[string]bool{"Detach": false, "Tty": false})
	if err != nil {
		var ee *engineError
		if errors.As(err, &ee) && !containerRunning(ctx, e, id) {
			return runState{}, err.Error(), errNotStarted
		}
		if c := startExitCode(err); c != 0 {
			return runState{code: c, notStarted: err.Error()}, "", nil
		}
		return runState{}, "", err
	}
	defer conn.Close()
	sniff := &execFailure{w: stdout}
	copied := pump(conn, sniff, stderr, spec.Stdin)
	var timer <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-copied:
	case <-timer:
		// Docker cannot kill a single exec: the container goes, and with it
		// every process the command started.
		removeContainer(e, id)
		drain(copied, conn)
		return runState{timedOut: true}, "", nil
	case <-ctx.Done():
		removeContainer(e, id)
		drain(copied, conn)
		return runState{}, "", errInterrupted
	}
	code, pid, err := execExitCode(ctx, e, execID)
	if isStatus(err, http.StatusNotFound) && sniff.msg != "" {
		return runState{}, sniff.msg, errNotStarted // the engine said so first
	}
	if isStatus(err, http.StatusNotFound) {
		return runState{}, "", fmt.Errorf("the warm container was removed while the command ran (hunk exec --gc elsewhere?); its outcome is unknown")
	}
	if err != nil {
		return runState{}, "", err
	}
	if pid == 0 && !containerRunning(ctx, e, id) {
		return runState{}, sniff.msg, errNotStarted
	}
	st = runState{code: code}
	if code == 126 && sniff.msg != "" {
		// The runtime could not start the command: say so the way a shell
		// does, with its exit code (127 not found, 126 not executable).
		if c := startExitCode(errors.New(sniff.msg)); c != 0 {
			st.code = c
		}
	}
	if code == 137 && spec.Memory > 0 {
		st.oom = oomKilled(e, id, started)
	}
	return st, sniff.msg, nil
}

// execFailure passes the command's stdout through, except the engine's own
// message when the runtime could not start the command (Docker writes "OCI
// runtime exec failed: ..." or "cannot exec in a stopped state" as the exec's
// first stdout frame), which it keeps in msg instead.
type execFailure struct {
	w    io.Writer
	seen bool
	msg  string
}

func (f *execFailure) Write(p []byte) (int, error) {
	if !f.seen {
		f.seen = true
		for _, prefix := range []string{"OCI runtime exec failed", "OCI runtime exec error", "cannot exec in a ", "task ", "ttrpc: ", "No such exec instance", "No such container", "container is not running"} {
			if bytes.HasPrefix(p, []byte(prefix)) {
				f.msg = strings.TrimSpace(string(p))
				return len(p), nil
			}
		}
	}
	return f.w.Write(p)
}

// execExitCode waits (briefly: the stream has ended) for the exec to be
// reported finished and returns its exit code and process id (0: the
// command never started).
func execExitCode(ctx context.Context, e *engine, execID string) (code, pid int, err error) {
	for i := 0; ; i++ {
		var info struct {
			Running  bool
			ExitCode *int
			Pid      int
		}
		if err := e.do(ctx, http.MethodGet, "/exec/"+execID+"/json", nil, nil, &info); err != nil {
			return 0, 0, err
		}
		if !info.Running && info.ExitCode != nil {
			return *info.ExitCode, info.Pid, nil
		}
		if i > 200 {
			return 0, 0, fmt.Errorf("exec %s: still running after its output ended", execID)
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return 0, 0, errInterrupted
		}
	}
}

// containerRunning reports whether container id exists and runs.
func containerRunning(ctx context.Context, e *engine, id string) bool {
	var info struct{ State struct{ Running bool } }
	return e.do(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &info) == nil && info.State.Running
}

// GC removes hunk's containers from the engine: every warm container not
// running a command at this moment, and every cold one whose hunk is gone
// (killed before it could remove it) or whose deadline passed. It never
// kills a command in flight: cold containers of hunks still running and
// busy warm ones are left alone. It returns the names removed.
func (d *Docker) GC(ctx context.Context) ([]string, error) { return d.gc(ctx, "") }

// gc is GC, limited to the containers of workspace ws when ws is not "".
func (d *Docker) gc(ctx context.Context, ws string) ([]string, error) {
	e, err := d.engine()
	if err != nil {
		return nil, err
	}
	labels := []string{labelManaged + "=1"}
	if ws != "" {
		labels = append(labels, labelWorkspace+"="+ws)
	}
	fb, _ := json.Marshal(map[string][]string{"label": labels})
	filters := string(fb)
	var list []struct {
		ID     string `json:"Id"`
		Names  []string
		Labels map[string]string
	}
	if err := e.do(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {filters}}, nil, &list); err != nil {
		return nil, engineFailure(e, sandbox.Spec{}, err)
	}
	var removed []string
	now := time.Now().Unix()
	for _, c := range list {
		switch c.Labels[labelMode] {
		case "cold":
			dl, _ := strconv.ParseInt(c.Labels[labelDeadline], 10, 64)
			if !ownerGone(c.Labels[labelOwner]) && (dl == 0 || dl > now) {
				continue
			}
		case "warm":
			// A command running in it right now is left to finish; the
			// keeper stops the container once idle, and the next --gc
			// removes it.
			var info struct{ ExecIDs []string }
			if e.do(ctx, http.MethodGet, "/containers/"+c.ID+"/json", nil, nil, &info) == nil && len(info.ExecIDs) > 0 {
				continue
			}
		}
		err := e.do(ctx, http.MethodDelete, "/containers/"+c.ID, url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
		if err != nil && !isStatus(err, http.StatusNotFound) && !isStatus(err, http.StatusConflict) {
			return removed, engineFailure(e, sandbox.Spec{}, err)
		}
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = c.Names[0][1:]
		}
		removed = append(removed, name)
	}
	return removed, nil
}
