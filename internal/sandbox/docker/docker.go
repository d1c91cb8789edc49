// Package docker is hunk exec's docker driver: each command in a container
// of a Docker (or Podman) engine, spoken to over its socket with a small
// Engine API client of its own, cold or kept warm. It depends only on the
// sandbox package's core types and registers itself there.
package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/mount"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// Labels every hunk container carries, so `hunk exec --gc` finds them.
const (
	labelManaged   = "dev.hunk.managed"   // "1"
	labelMode      = "dev.hunk.mode"      // cold or warm
	labelWorkspace = "dev.hunk.workspace" // host path of the workspace
	labelOwner     = "dev.hunk.owner"     // cold: boot id/pid/start time of the hunk that runs it
	labelDeadline  = "dev.hunk.deadline"  // cold: unix time after which it is surely a leftover
	labelConfig    = "dev.hunk.config"    // warm: hash of the configuration
)

// Register adds the docker driver to the sandbox's drivers, and the removal
// of a cold run's container to the watchdog's duties. hunk's composition
// root (cmd.Main) calls it: the sandbox itself knows no driver that needs
// an engine.
func Register() {
	sandbox.Register("docker", func() sandbox.Driver { return &Docker{} })
	// A cold run's container, should hunk die during the run.
	sandbox.OnWatchdog("container", func(id string) {
		if e, err := (&Docker{}).engine(); err == nil {
			removeContainer(e, id)
		}
	})
}

// Docker runs each command in a container of the Docker engine at Host
// (DOCKER_HOST when empty; Podman's Docker-compatible socket works too).
//
// Every container: no network (host network with sandbox.Spec.Network), read-only
// root filesystem, a tmpfs /tmp, all capabilities dropped, no-new-privileges,
// an init process, the caller's uid:gid, the workspace bind-mounted at its
// own path (read-only with sandbox.Spec.ReadOnly), memory = memory+swap, pids and cpu
// limits, logging off. Cold (default): one container per command, removed
// by the engine when it ends and killed on timeout or cancellation. Warm
// (sandbox.Spec.KeepWarm): one container per workspace and configuration, commands
// run in it through exec; see runWarm.
type Docker struct {
	Host string // engine address; "" = $DOCKER_HOST or the default socket
}

// Name implements sandbox.Driver.
func (d *Docker) Name() string { return "docker" }

func (d *Docker) engine() (*engine, error) {
	h := d.Host
	if h == "" {
		h = os.Getenv("DOCKER_HOST")
	}
	return newEngine(h)
}

// Probe implements Driver: the driver works when the engine answers a ping.
// With an engine every limit is enforced by its cgroups; a limit this
// engine's kernel cannot apply is refused at sandbox.Run (the engine warns that it
// discarded it).
func (d *Docker) Probe(ctx context.Context) sandbox.Caps {
	e, err := d.engine()
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		err = e.ping(ctx)
	}
	if err != nil {
		return sandbox.Caps{Reason: err.Error()}
	}
	c := sandbox.Caps{Available: true, Reason: "Docker engine at " + e.host,
		Filesystem: true, Network: true, Egress: sandbox.DoorBinary != nil, Timeout: true, Memory: true, Pids: true, CPUs: true}
	// A container: its own namespaces, no capabilities, the engine's
	// default seccomp profile (which refuses the keyrings). A container
	// outlives a hunk killed with SIGKILL until hunk exec --gc.
	c.SetGuards(map[string]bool{
		sandbox.GuardProcesses: true, sandbox.GuardProcessList: true, sandbox.GuardSockets: true, sandbox.GuardMetadata: true, sandbox.GuardGit: true, sandbox.GuardOwnState: true, sandbox.GuardPolicy: true, sandbox.GuardPrivileges: true, sandbox.GuardKeyring: true,
		sandbox.GuardCleanup:  true, // a cold run's container: removed by hunk's watchdog should hunk die
		sandbox.GuardTerminal: true, sandbox.GuardDescriptors: true,
	})
	return c
}

// containerConfig is the body of POST /containers/create: the fields hunk
// sets (a subset of the Engine API's ContainerConfig and HostConfig, stable
// since API 1.25).
type containerConfig struct {
	Image        string
	Cmd          []string
	Env          []string          `json:",omitempty"`
	WorkingDir   string            `json:",omitempty"`
	User         string            `json:",omitempty"`
	Labels       map[string]string `json:",omitempty"`
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	OpenStdin    bool
	StdinOnce    bool
	Tty          bool
	HostConfig   hostConfig
}

type hostConfig struct {
	NetworkMode    string
	ReadonlyRootfs bool
	Tmpfs          map[string]string
	CapDrop        []string
	SecurityOpt    []string
	Init           bool
	Mounts         []mount.Mount
	Memory         int64 `json:",omitempty"`
	MemorySwap     int64 `json:",omitempty"`
	PidsLimit      int64 `json:",omitempty"`
	NanoCPUs       int64 `json:",omitempty"`
	LogConfig      struct{ Type string }
	AutoRemove     bool
}

// containerFor is the container configuration for spec (cmd and labels are
// the caller's).
func containerFor(spec sandbox.Spec) containerConfig {
	c := containerConfig{
		Image:      spec.Image,
		Env:        dockerEnv(spec.Env),
		WorkingDir: spec.Workdir,
		User:       fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
	}
	h := &c.HostConfig
	h.NetworkMode = "none"
	if spec.Network.Host {
		// The host's network, as the other drivers give: a listener on the
		// host's 127.0.0.1 is reachable, and no bridge or iptables rules are
		// needed on the engine.
		h.NetworkMode = "host"
	}
	h.ReadonlyRootfs = true
	h.Tmpfs = map[string]string{"/tmp": "rw,exec,nosuid,nodev,mode=1777"}
	h.CapDrop = []string{"ALL"}
	h.SecurityOpt = []string{"no-new-privileges"}
	h.Init = true
	h.Mounts = []mount.Mount{{Type: mount.TypeBind, Source: spec.Workspace, Target: spec.Workspace, ReadOnly: spec.ReadOnly || spec.AllowOnly}}
	for _, m := range spec.Mounts() {
		switch {
		case m.Mode == sandbox.MountHidden && m.Dir:
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: m.Path})
		case m.Mode == sandbox.MountHidden:
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: os.DevNull, Target: m.Path, ReadOnly: true})
		default:
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Path, Target: m.Path, ReadOnly: m.Mode == sandbox.MountReadOnly})
		}
	}
	for i, p := range spec.RO {
		// A link named by --ro is bound at its own path, where the
		// command looks for it (python3 -> python3.11).
		at := p
		if i < len(spec.ROAt) && spec.ROAt[i] != "" {
			at = spec.ROAt[i]
		}
		h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: p, Target: at, ReadOnly: true})
	}
	for _, p := range spec.RW {
		h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: p, Target: p})
	}
	h.Mounts = append(h.Mounts, hiddenMounts(spec)...)
	// hunk's own state inside what is bound: hidden (the engine mounts
	// deeper targets after shallower ones: the build cache shows through).
	for _, m := range spec.OwnMounts() {
		if m.Dir {
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: m.Path})
		} else {
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: os.DevNull, Target: m.Path, ReadOnly: true})
		}
	}
	if spec.Cache != "" {
		h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: spec.Cache, Target: spec.Cache})
	}
	if e := spec.Egress; e != nil {
		// The run's proxy, the one socket it may reach, and the door
		// that offers it on the command's 127.0.0.1.
		h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: e.Door, Target: egress.DoorPath, ReadOnly: true},
			mount.Mount{Type: mount.TypeBind, Source: e.Socket, Target: egress.Socket})
	}
	if spec.Memory > 0 {
		h.Memory, h.MemorySwap = spec.Memory, spec.Memory
	}
	switch {
	case spec.Pids > 0:
		h.PidsLimit = int64(spec.Pids)
	case spec.Pids == 0:
		h.PidsLimit = sandbox.DefaultPids
	}
	h.NanoCPUs = int64(spec.CPUs * 1e9)
	h.LogConfig.Type = "none"
	return c
}

// dockerEnv is the command's environment inside a container: the host's HOME
// does not exist there, so HOME is the writable /tmp.
func dockerEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, "HOME=/tmp")
}

// hiddenMounts covers each hidden path (the user's credentials,
// sandbox.DefaultHidden, and --hide) that lies inside a bound host path —
// a workspace that is the home directory holds ~/.ssh — with an empty
// tmpfs (a directory) or /dev/null (a file), as bwrap does; the rest of the
// host is not in the container at all. A path also named by --ro or --rw is
// shown, as asked. The engine mounts deeper targets after shallower ones.
func hiddenMounts(spec sandbox.Spec) []mount.Mount {
	bound := append(append([]string{spec.Workspace}, spec.RO...), spec.RW...)
	var out []mount.Mount
	for _, h := range spec.Hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil || !sandbox.Under(real, bound) || sandbox.Under(real, append(spec.RO, spec.RW...)) {
			continue
		}
		fi, err := os.Stat(real)
		switch {
		case err != nil:
		case fi.IsDir():
			out = append(out, mount.Mount{Type: mount.TypeTmpfs, Target: real})
		default:
			out = append(out, mount.Mount{Type: mount.TypeBind, Source: os.DevNull, Target: real, ReadOnly: true})
		}
	}
	return out
}

// Run implements sandbox.Driver.
func (d *Docker) Run(ctx context.Context, spec sandbox.Spec) (res sandbox.Result, err error) {
	res = sandbox.Result{Driver: d.Name()}
	if spec.Image == "" {
		return res, result.Errorf(result.SandboxUnavailable, "the docker driver needs an image").
			WithHint("pass --image IMAGE or set exec.image in the config",
				"make a small one offline: hunk exec --driver docker --make-image "+DefaultImage)
	}
	if len(spec.Argv) == 0 {
		return res, result.Usagef("no command to run")
	}
	e, err := d.engine()
	if err != nil {
		return res, result.Errorf(result.SandboxUnavailable, "%v", err)
	}
	if spec.Network.Proxied() {
		// A warm container's mounts are fixed when it starts: a run
		// with an allowlist gets a container of its own, bound to its
		// own proxy.
		eg, err := sandbox.StartEgress(&spec, d.Name(), false, true)
		if err != nil {
			return res, err
		}
		defer func() { res.Network = eg.Stop() }()
		spec.KeepWarm = false
	}
	if spec.Ready != nil {
		<-spec.Ready // no container before an interrupt can remove it
	}
	stdout := sandbox.NewCapture(spec.MaxOutput, spec.Stdout)
	stderr := sandbox.NewCapture(spec.MaxOutput, spec.Stderr)
	failure := &startFailure{w: stderr}
	start := time.Now()
	run := d.runCold
	if spec.KeepWarm {
		run = d.runWarm
	}
	st, err := run(ctx, e, spec, stdout, failure)
	_ = failure.flush()
	stdout.Close()
	stderr.Close()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	if err != nil && ctx.Err() != nil {
		// Cancelled while a call to the engine was under way (the start's
		// reply, the wait): the container is gone all the same (the run's
		// own cleanup), and this is an interrupt, not an engine failure.
		err = errInterrupted
	}
	if errors.Is(err, errInterrupted) {
		// Stopped as the other drivers stop: interrupted, for the caller
		// to name the signal and exit as it asks (143 for SIGTERM).
		res.Interrupted, res.ExitCode = true, 130
		return res, nil
	}
	if err != nil {
		return res, engineFailure(e, spec, err)
	}
	res.ExitCode, res.TimedOut, res.OOMKilled, res.NotStarted = st.code, st.timedOut, st.oom, st.notStarted
	if failure.msg != "" && !st.timedOut {
		res.ExitCode, res.NotStarted = failure.code, failure.msg
	}
	if st.timedOut {
		res.ExitCode = 124
	}
	return res, nil
}

// dockerStdin is the stdin to attach for spec: nil when there is none or it
// is /dev/null — attaching a stream costs the engine a pipe and copiers per
// command, for nothing.
func dockerStdin(spec sandbox.Spec) io.Reader {
	f, ok := spec.Stdin.(*os.File)
	if !ok {
		return spec.Stdin
	}
	fi, err := f.Stat()
	if err != nil {
		return nil // closed or invalid: nothing to read
	}
	null, err := os.Stat(os.DevNull)
	if err == nil && os.SameFile(fi, null) {
		return nil
	}
	return f
}

// runState is how a container run ended.
type runState struct {
	code       int
	timedOut   bool
	oom        bool
	notStarted string // why the command could not start (code 126, 127)
}

// errInterrupted is returned when ctx was cancelled (Ctrl-C, SIGTERM): the
// container was killed and removed.
var errInterrupted = errors.New("interrupted: the container was killed")

// engineFailure turns an engine error into hunk's typed error.
func engineFailure(e *engine, spec sandbox.Spec, err error) error {
	var re *result.Error
	var ue *unreachableError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, errInterrupted):
		return &result.Error{Code: result.SandboxUnavailable, Msg: err.Error(), Exit: 130, Err: err}
	case errors.As(err, &ue):
		return (&result.Error{Code: result.SandboxUnavailable, Msg: err.Error(), Err: err}).
			WithHint("start the Docker daemon, or point DOCKER_HOST at a running engine (Podman: unix://$XDG_RUNTIME_DIR/podman/podman.sock)")
	case isStatus(err, http.StatusNotFound) && strings.Contains(strings.ToLower(err.Error()), "image"):
		return missingImage(e, spec.Image, err)
	}
	e2 := &result.Error{Code: result.SandboxUnavailable, Msg: "docker: " + err.Error(), Err: err}
	if strings.Contains(err.Error(), "Duplicate mount point") {
		e2.WithHint("a path is bound twice: the workspace, a --ro or --rw path, the build cache or one the policy covers; name each once (a --ro inside the workspace is already there)")
	}
	return e2
}

// missingImage is the error for an image the engine lacks. Only hunk's own
// neutral image is offered to --make-image: a busybox made under any other
// name (golang:1.26) would shadow the real image for every tool on the
// engine.
func missingImage(e *engine, image string, err error) error {
	fetch := fmt.Sprintf("fetch it: docker pull %s (or add --pull)", image)
	hints := []string{fetch}
	if image == DefaultImage {
		hints = []string{fmt.Sprintf("make it offline: hunk exec --driver docker --make-image %s", image), "or " + fetch}
	}
	return (&result.Error{Code: result.SandboxUnavailable, Err: err,
		Msg: fmt.Sprintf("image %s not found on the Docker engine at %s", image, e.host)}).
		WithHint(hints...).
		WithDetail("image", image)
}

// createContainer creates a container, pulling the image first when it is
// missing and spec.Pull asks for it. A limit the engine reports it
// discarded (its kernel cannot enforce it) removes the container again and
// fails with LIMIT_UNENFORCEABLE.
func createContainer(ctx context.Context, e *engine, name string, spec sandbox.Spec, cfg containerConfig) (string, error) {
	var out struct {
		ID       string `json:"Id"`
		Warnings []string
	}
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	err := e.do(ctx, http.MethodPost, "/containers/create", q, cfg, &out)
	if err != nil && spec.Pull && isStatus(err, http.StatusNotFound) {
		if perr := pullImage(ctx, e, spec.Image); perr != nil {
			return "", pullFailure(e, spec, perr)
		}
		err = e.do(ctx, http.MethodPost, "/containers/create", q, cfg, &out)
	}
	if err != nil {
		return "", err
	}
	for _, w := range out.Warnings {
		lw := strings.ToLower(w)
		if strings.Contains(lw, "discard") || strings.Contains(lw, "does not support") {
			removeContainer(e, out.ID)
			return "", result.Errorf(result.LimitUnenforceable, "the Docker engine cannot enforce a requested limit: %s", w).
				WithHint("drop the limit, or use an engine whose kernel has the cgroup controller")
		}
	}
	return out.ID, nil
}

// pullFailure is the error for a missing image that could not be pulled.
func pullFailure(e *engine, spec sandbox.Spec, err error) error {
	var ue *unreachableError
	if errors.As(err, &ue) {
		return err
	}
	return (&result.Error{Code: result.SandboxUnavailable, Err: err,
		Msg: fmt.Sprintf("image %s not found on the Docker engine at %s, and pulling it failed: %v", spec.Image, e.host, err)}).
		WithHint("load it into the engine from a file: docker load -i IMAGE.tar",
			fmt.Sprintf("or, for a shell and busybox only: hunk exec --driver docker --make-image %s --image %s", DefaultImage, DefaultImage)).
		WithDetail("image", spec.Image)
}

// pullImage pulls image (docker pull), reading the progress stream to its
// end and failing on an error message in it.
func pullImage(ctx context.Context, e *engine, image string) error {
	repo, tag := splitRef(image)
	q := url.Values{"fromImage": {repo}}
	if tag != "" {
		q.Set("tag", tag)
	}
	resp, err := e.send(ctx, http.MethodPost, "/images/create", q, nil, "")
	if err != nil {
		return fmt.Errorf("pulling %s: %w", image, err)
	}
	defer resp.Body.Close()
	return readJSONStream(resp.Body, "pulling "+image)
}

// readJSONStream reads the engine's progress messages and returns the first
// error one.
func readJSONStream(r io.Reader, what string) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		if m.Error != "" {
			return fmt.Errorf("%s: %s", what, m.Error)
		}
	}
}

// splitRef splits "repo:tag" (the tag after the last slash) into repo and
// tag; a reference by digest (repo@sha256:…) stays whole.
func splitRef(ref string) (string, string) {
	if strings.Contains(ref, "@") {
		return ref, "" // by digest
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") && i < len(ref)-1 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// removeContainer force-removes a container, with its own deadline: it runs
// also when the caller's context is already cancelled.
func removeContainer(e *engine, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.do(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
}

func killContainer(e *engine, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.do(ctx, http.MethodPost, "/containers/"+id+"/kill", url.Values{"signal": {"KILL"}}, nil, nil)
}

// startExitCode maps a failure to start the command to the shell's codes:
// 127 not found, 126 not executable; 0 when it is some other failure.
func startExitCode(err error) int {
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "executable file not found"), strings.Contains(msg, "no such file or directory"):
		return 127
	case strings.Contains(msg, "permission denied"), strings.Contains(msg, "is a directory"):
		return 126
	}
	return 0
}

// randomName is a fresh container name with prefix.
func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// configHash names a warm container: everything that shapes it.
func configHash(spec sandbox.Spec, cfg containerConfig, imageID string) string {
	b, _ := json.Marshal(struct {
		V       int
		Cfg     containerConfig
		Idle    time.Duration
		Image   string
		ImageID string
	}{1, cfg, spec.Idle, spec.Image, imageID})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:10])
}
