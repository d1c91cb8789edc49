//go:build linux

package docker

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// testImage is the image the docker tests run; dockerOrSkip makes it.
func testImage() string { return sandboxtest.ImageName() }

// dockerOrSkip returns the driver when an engine answers, else skips — loudly,
// and as a failure when HUNK_REQUIRE_DRIVERS names docker (CI).
func dockerOrSkip(t *testing.T) *Docker {
	t.Helper()
	d := &Docker{}
	caps := d.Probe(context.Background())
	if !caps.Available {
		if sandboxtest.Required("HUNK_REQUIRE_DRIVERS", "docker") {
			t.Fatalf("docker driver required (HUNK_REQUIRE_DRIVERS) but unavailable: %s", caps.Reason)
		}
		sandboxtest.Skip(t, "no Docker engine: %s", caps.Reason)
	}
	sandboxtest.DockerLock()
	sandboxtest.TestImage(t, d)
	return d
}

// dockerSpec is a spec over a fresh workspace.
func dockerSpec(t *testing.T, warm bool, argv ...string) sandbox.Spec {
	ws := t.TempDir()
	_ = os.Chmod(ws, 0o777)
	t.Cleanup(func() { removeWorkspaceContainers(t, ws) })
	return sandbox.Spec{
		Argv: argv, Workspace: ws, Workdir: ws,
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Timeout: 30 * time.Second, MaxOutput: 1 << 20,
		Image: testImage(), KeepWarm: warm, Idle: time.Minute,
	}
}

func modes(t *testing.T, f func(t *testing.T, warm bool)) {
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		t.Run(name, func(t *testing.T) { f(t, warm) })
	}
}

func runDocker(t *testing.T, d *Docker, spec sandbox.Spec) sandbox.Result {
	t.Helper()
	res, err := d.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %q: %v", spec.Argv, err)
	}
	return res
}

func dsh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestDockerBasics(t *testing.T) {
	d := dockerOrSkip(t)
	modes(t, func(t *testing.T, warm bool) {
		spec := dockerSpec(t, warm, dsh(`echo out; echo err >&2; id -u; pwd; echo hi > f; touch /etc/x 2>/dev/null || echo rofs; echo t > /tmp/t && echo tmpok; exit 3`)...)
		res := runDocker(t, d, spec)
		want := fmt.Sprintf("out\n%d\n%s\nrofs\ntmpok\n", os.Getuid(), spec.Workdir)
		if string(res.Stdout) != want || string(res.Stderr) != "err\n" || res.ExitCode != 3 {
			t.Fatalf("got exit %d stdout %q stderr %q; want 3 %q %q", res.ExitCode, res.Stdout, res.Stderr, want, "err\n")
		}
		if b, _ := os.ReadFile(filepath.Join(spec.Workspace, "f")); string(b) != "hi\n" {
			t.Fatalf("workspace write: %q", b)
		}
		spec.ReadOnly = true
		spec.Argv = dsh(`echo x > g || echo denied`)
		res = runDocker(t, d, spec)
		if !strings.Contains(string(res.Stdout), "denied") {
			t.Fatalf("read-only workspace: %q %q", res.Stdout, res.Stderr)
		}
	})
}

func TestDockerNetwork(t *testing.T) {
	d := dockerOrSkip(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sandboxtest.Serve(ln, []byte("hello\n"))
	port := ln.Addr().(*net.TCPAddr).Port
	modes(t, func(t *testing.T, warm bool) {
		spec := dockerSpec(t, warm, dsh(fmt.Sprintf(`nc -w 2 127.0.0.1 %d </dev/null`, port))...)
		res := runDocker(t, d, spec)
		if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "hello") {
			t.Fatalf("network reachable without --network: exit %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
		}
		spec.Network.Host = true
		res = runDocker(t, d, spec)
		if res.ExitCode != 0 || string(res.Stdout) != "hello\n" {
			t.Fatalf("network with --network: exit %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}

func TestDockerTimeout(t *testing.T) {
	d := dockerOrSkip(t)
	modes(t, func(t *testing.T, warm bool) {
		spec := dockerSpec(t, warm, dsh(`echo before; setsid sleep 300 & sleep 300`)...)
		spec.Timeout = 2 * time.Second
		start := time.Now()
		res := runDocker(t, d, spec)
		if !res.TimedOut || res.ExitCode != 124 || string(res.Stdout) != "before\n" {
			t.Fatalf("timeout: %+v", res)
		}
		if el := time.Since(start); el > 15*time.Second {
			t.Fatalf("timeout took %v", el)
		}
		if n := hunkContainers(t, spec.Workspace); n != 0 {
			t.Fatalf("%d containers left after timeout", n)
		}
	})
}

func TestDockerLimits(t *testing.T) {
	d := dockerOrSkip(t)
	modes(t, func(t *testing.T, warm bool) {
		spec := dockerSpec(t, warm, dsh(`x=$(head -c 300m /dev/zero | tr '\0' a); echo survived`)...)
		spec.Memory = 64 << 20
		res := runDocker(t, d, spec)
		if res.ExitCode != 137 || !res.OOMKilled || strings.Contains(string(res.Stdout), "survived") {
			t.Fatalf("memory hog: exit %d oom %v %q %q", res.ExitCode, res.OOMKilled, res.Stdout, res.Stderr)
		}
		// A fork bomb is contained by the pids limit: its shell cannot fork
		// and gives up, or the timeout ends it.
		spec = dockerSpec(t, warm, dsh(`bomb() { bomb | bomb & }; bomb; while :; do :; done`)...)
		spec.Pids = 20
		spec.Timeout = 3 * time.Second
		res = runDocker(t, d, spec)
		if res.ExitCode == 0 || (!warm && hunkContainers(t, spec.Workspace) != 0) {
			t.Fatalf("fork bomb: exit %d", res.ExitCode)
		}
		spec.Timeout = 30 * time.Second
		spec.Argv = dsh(`cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max`)
		res = runDocker(t, d, spec)
		if strings.TrimSpace(string(res.Stdout)) != "20" {
			t.Fatalf("pids.max: %q %q", res.Stdout, res.Stderr)
		}
	})
}

func TestDockerOutputCap(t *testing.T) {
	d := dockerOrSkip(t)
	modes(t, func(t *testing.T, warm bool) {
		spec := dockerSpec(t, warm, dsh(`echo first; head -c 30000000 /dev/zero | tr '\0' x; echo; echo last`)...)
		spec.MaxOutput = 1000
		var live bytes.Buffer
		spec.Stdout = &live
		res := runDocker(t, d, spec)
		if !res.Truncated || !strings.HasPrefix(string(res.Stdout), "first\n") || !strings.HasSuffix(string(res.Stdout), "\nlast\n") || len(res.Stdout) > 1200 {
			t.Fatalf("cap: truncated %v len %d head %q", res.Truncated, len(res.Stdout), res.Stdout[:min(40, len(res.Stdout))])
		}
		if !bytes.Equal(live.Bytes(), res.Stdout) {
			t.Fatalf("live copy differs from the result")
		}
	})
}

func TestDockerExitCodes(t *testing.T) {
	d := dockerOrSkip(t)
	modes(t, func(t *testing.T, warm bool) {
		for _, c := range []struct {
			argv []string
			code int
		}{
			{[]string{"true"}, 0},
			{[]string{"false"}, 1},
			{[]string{"no-such-command"}, 127},
			{dsh("exit 42"), 42},
		} {
			res := runDocker(t, d, dockerSpec(t, warm, c.argv...))
			if res.ExitCode != c.code {
				t.Errorf("%q: exit %d, want %d (stderr %q)", c.argv, res.ExitCode, c.code, res.Stderr)
			}
		}
	})
}

// hunkContainers counts hunk's containers for workspace ws, through the
// official client.
func hunkContainers(t *testing.T, ws string) int {
	t.Helper()
	c, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := client.Filters{}
	f = f.Add("label", labelWorkspace+"="+ws)
	l, err := c.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

func TestElfDynamic(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elfDynamic(self); err != nil {
		t.Fatalf("%s: %v", self, err)
	}
	for _, p := range []string{"/bin/busybox", "/bin/ls"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		dyn, err := elfDynamic(p)
		t.Logf("%s dynamic=%v err=%v", p, dyn, err)
	}
	if _, err := elfDynamic("/etc/passwd"); err == nil {
		t.Fatal("/etc/passwd taken for an ELF file")
	}
	if dyn, err := elfDynamic("/bin/ls"); err == nil && !dyn {
		t.Fatal("/bin/ls taken for a static executable")
	}
	if dyn, err := elfDynamic("/bin/busybox"); err == nil && dyn {
		t.Fatal("busybox-static taken for a dynamic executable")
	}
}

// TestDockerContainerConfig checks, through the official client, that the
// engine applied what the driver asked for (on the warm container, which
// stays around to be inspected), and that GC removes it.
func TestDockerContainerConfig(t *testing.T) {
	d := dockerOrSkip(t)
	spec := dockerSpec(t, true, "true")
	spec.Memory, spec.Pids, spec.CPUs = 128<<20, 64, 0.5
	e, _ := d.engine()
	id, err := imageID(context.Background(), e, spec)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := warmName(spec, id)
	c, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A --gc of a concurrent test run may remove the container between the
	// run and the inspection: try again then.
	var r client.ContainerInspectResult
	for try := 0; ; try++ {
		runDocker(t, d, spec)
		r, err = c.ContainerInspect(context.Background(), name, client.ContainerInspectOptions{})
		if err == nil {
			break
		}
		if try == 3 {
			t.Fatal(err)
		}
	}
	h := r.Container.HostConfig
	got := fmt.Sprintf("net=%s rorootfs=%v capdrop=%v secopt=%v init=%v mem=%d swap=%d pids=%d cpus=%d log=%s tmpfs=%v user=%s",
		h.NetworkMode, h.ReadonlyRootfs, h.CapDrop, h.SecurityOpt, h.Init != nil && *h.Init, h.Memory, h.MemorySwap,
		*h.PidsLimit, h.NanoCPUs, h.LogConfig.Type, h.Tmpfs["/tmp"] != "", r.Container.Config.User)
	want := fmt.Sprintf("net=none rorootfs=true capdrop=[ALL] secopt=[no-new-privileges] init=true mem=%d swap=%d pids=64 cpus=500000000 log=none tmpfs=true user=%d:%d",
		128<<20, 128<<20, os.Getuid(), os.Getgid())
	if got != want {
		t.Fatalf("engine config:\n got %s\nwant %s", got, want)
	}
	if len(r.Container.Mounts) != 1 || r.Container.Mounts[0].Source != spec.Workspace || r.Container.Mounts[0].Destination != spec.Workspace || !r.Container.Mounts[0].RW {
		t.Fatalf("mounts: %+v", r.Container.Mounts)
	}
	removed, err := d.gc(context.Background(), spec.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if n := hunkContainers(t, spec.Workspace); n != 0 {
		t.Fatalf("GC removed %v but %d containers remain", removed, n)
	}
}

// TestDockerGCLeftovers: a cold container whose hunk was killed is removed
// by GC; one whose hunk still runs is left to it.
func TestDockerGCLeftovers(t *testing.T) {
	d := dockerOrSkip(t)
	e, err := d.engine()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := dockerSpec(t, false, "sleep", "300")
	mk := func(owner string) string {
		cfg := containerFor(spec)
		cfg.Cmd = spec.Argv
		cfg.Labels = map[string]string{labelManaged: "1", labelMode: "cold", labelWorkspace: spec.Workspace,
			labelOwner: owner, labelDeadline: fmt.Sprint(time.Now().Add(time.Hour).Unix())}
		id, err := createContainer(ctx, e, "", spec, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.do(ctx, "POST", "/containers/"+id+"/start", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		return id
	}
	dead := mk(strings.Replace(selfOwner(), fmt.Sprintf("/%d/", os.Getpid()), "/4194303/", 1))
	alive := mk(selfOwner())
	defer removeContainer(e, alive)
	removed, err := d.gc(ctx, spec.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if hunkContainers(t, spec.Workspace) != 1 {
		t.Fatalf("after GC (removed %v): want only the live hunk's container left", removed)
	}
	if err := e.do(ctx, "GET", "/containers/"+dead+"/json", nil, nil, nil); !isStatus(err, 404) {
		t.Fatalf("the dead hunk's container is still there: %v", err)
	}
}

// removeWorkspaceContainers removes what a test left on the engine for
// workspace ws (its warm containers), through the official client.
func removeWorkspaceContainers(t *testing.T, ws string) {
	c, err := client.New(client.FromEnv)
	if err != nil {
		return
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", labelWorkspace+"="+ws)})
	if err != nil {
		return
	}
	for _, it := range l.Items {
		_, _ = c.ContainerRemove(ctx, it.ID, client.ContainerRemoveOptions{Force: true})
	}
}

// FuzzElfDynamic: the hand-written ELF reader never panics or over-allocates
// on arbitrary files.
func FuzzElfDynamic(f *testing.F) {
	if b, err := os.ReadFile("/bin/busybox"); err == nil && len(b) > 4096 {
		f.Add(b[:4096])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add([]byte("#!/bin/sh\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "bin")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = elfDynamic(p)
	})
}

// FuzzSplitRef: splitting an image reference loses nothing.
func FuzzSplitRef(f *testing.F) {
	for _, s := range []string{"busybox", "hunk-test:latest", "localhost:5000/a/b:v1", "a@sha256:abc", "a:b@sha256:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		repo, tag := splitRef(ref)
		if tag == "" && repo != ref || tag != "" && repo+":"+tag != ref {
			t.Fatalf("splitRef(%q) = %q, %q", ref, repo, tag)
		}
		if strings.Contains(tag, "/") {
			t.Fatalf("splitRef(%q): tag %q has a slash", ref, tag)
		}
	})
}

func TestSplitRef(t *testing.T) {
	for ref, want := range map[string][2]string{
		"busybox":               {"busybox", ""},
		"hunk-test:latest":      {"hunk-test", "latest"},
		"localhost:5000/a/b":    {"localhost:5000/a/b", ""},
		"localhost:5000/a/b:v1": {"localhost:5000/a/b", "v1"},
		"a@sha256:abc":          {"a@sha256:abc", ""},
	} {
		if r, tag := splitRef(ref); r != want[0] || tag != want[1] {
			t.Errorf("splitRef(%q) = %q, %q; want %q, %q", ref, r, tag, want[0], want[1])
		}
	}
}

// TestDockerWarmVsGC: warm commands succeed while --gc (once a second)
// keeps removing their container: a command that never started is run
// again in a fresh one. (A --gc in a tight loop starves them, rightly
// reported as "kept going away".)
func TestDockerWarmVsGC(t *testing.T) {
	d := dockerOrSkip(t)
	spec := dockerSpec(t, true, "echo", "ok")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_, _ = d.gc(ctx, spec.Workspace)
			time.Sleep(time.Second)
		}
	}()
	for i := 0; i < 15; i++ {
		res, err := d.Run(context.Background(), spec)
		if err != nil || res.ExitCode != 0 || string(res.Stdout) != "ok\n" {
			t.Errorf("run %d: %v exit %d %q %q", i, err, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	cancel()
	<-done
}

// TestDockerDialStdio runs a command over the connection remote TLS and ssh
// engines use: the docker CLI's `docker system dial-stdio`.
func TestDockerDialStdio(t *testing.T) {
	d := dockerOrSkip(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("SKIPPED: no docker CLI")
	}
	e, err := d.engine()
	if err != nil {
		t.Fatal(err)
	}
	if e.net != "unix" {
		t.Skipf("SKIPPED: DOCKER_HOST %s is not a unix socket", e.host)
	}
	e.net = "helper"
	ctx := context.Background()
	if err := e.ping(ctx); err != nil {
		t.Fatal(err)
	}
	spec := dockerSpec(t, false, dsh("echo out; echo err >&2; exit 3")...)
	var out, errb bytes.Buffer
	st, err := d.runCold(ctx, e, spec, &out, &errb)
	if err != nil || st.code != 3 || out.String() != "out\n" || errb.String() != "err\n" {
		t.Fatalf("over dial-stdio: %+v %v %q %q", st, err, out.String(), errb.String())
	}
}
