//go:build linux

// hunk serve as a pod runs it: a static binary in a minimal image, a
// non-root user, a read-only root file system, every capability dropped,
// no new privileges, the runtime's default seccomp profile (so no user
// namespaces) — here a Docker container configured so — driven from
// outside over HTTP.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// podArgs are `docker run`'s flags of a pod's container as Kubernetes
// runs one with runAsNonRoot, readOnlyRootFilesystem, capabilities drop
// ALL, allowPrivilegeEscalation false and seccompProfile RuntimeDefault
// (deploy/agent-sandbox/sandboxtemplate.yaml), its emptyDirs as tmpfs.
var podArgs = []string{"--user", "65534:65534", "--read-only", "--cap-drop", "ALL",
	"--security-opt", "no-new-privileges", "--tmpfs", "/tmp", "--tmpfs", "/home/hunk:uid=65534,gid=65534",
	"-e", "HOME=/home/hunk"}

// TestServePodLike: in a pod-like container, hunk exec --drivers shows
// landlock working and bwrap not; hunk serve (deploy/agent-sandbox's
// template's arguments: landlock, --git-write, a token file) serves a git repository to the Go
// SDK's client outside: the agent's read, edit, two-file patch, exec
// (under landlock) and undo; a command cannot read the token file nor
// write outside the workspace.
func TestServePodLike(t *testing.T) {
	needDriver(t, "docker")
	img := sandboxtest.ImageName()
	hunk := buildHunk(t)
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	secrets := t.TempDir()
	os.WriteFile(filepath.Join(secrets, "token"), []byte("pod-token-0123456789\n"), 0o444)
	if os.Geteuid() == 0 {
		filepath.Walk(ws, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	}
	run := append(append([]string{"run", "--rm"}, podArgs...), podMounts(hunk, ws, secrets)...)
	out, err := exec.Command("docker", append(run, img, "/opt/hunk/hunk", "exec", "-C", "/workspace", "--drivers")...).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^landlock\s+yes`).Match(out) || !regexp.MustCompile(`(?m)^bwrap\s+no`).Match(out) {
		t.Fatalf("hunk exec --drivers in a pod-like container: %v\n%s", err, out)
	}
	out, _ = exec.Command("docker", append(run, img, "/opt/hunk/hunk", "exec", "-C", "/workspace", "--", "true")...).CombinedOutput()
	if !strings.Contains(string(out), "the landlock driver cannot guard git") || !strings.Contains(string(out), "--git-write") {
		t.Errorf("exec in a repository without --git-write in a pod: %s", out)
	}

	name := fmt.Sprintf("hunk-podlike-%d", os.Getpid())
	url := startPod(t, img, name, ws, secrets)
	cs := connectHTTP(t, url+"/mcp", "2025-11-25", map[string]string{"Authorization": "Bearer pod-token-0123456789"})
	defer cs.Close()
	agentFlow(t, cs, ws)
	res, text, sc := callTool(t, cs, "exec", map[string]any{"command": "cat /var/run/hunk/token; echo x > /home/hunk/planted; echo x > /tmp/planted; echo x > /workspace/.git/description && echo git-ok"})
	if d, _ := sc["driver"].(string); d != "landlock" {
		t.Errorf("exec's driver in the pod: %q (%v)", d, sc)
	}
	if strings.Contains(text, "pod-token-0123456789") || !strings.Contains(text, "git-ok") || res == nil {
		t.Errorf("a command in the pod read the token file, or could not change .git under --git-write: %s", text)
	}
	check := exec.Command("docker", "exec", name, "sh", "-c", "ls /home/hunk/planted /tmp/planted 2>&1")
	if b, _ := check.CombinedOutput(); !strings.Contains(string(b), "No such file") || strings.Count(string(b), "No such file") != 2 {
		t.Errorf("a command wrote outside the workspace: %s", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "stop", "-t", "30", name).CombinedOutput(); err != nil {
		t.Errorf("docker stop: %v\n%s", err, out)
	}
}

// podMounts are the pod's volumes as docker run's flags: hunk, the
// workspace and the token's directory where the template mounts them.
func podMounts(hunk, ws, secrets string) []string {
	return []string{"-v", hunk + ":/opt/hunk/hunk:ro", "-v", ws + ":/workspace", "-v", secrets + ":/var/run/hunk:ro"}
}

// startPod starts a pod-like container named name running hunk serve with
// deploy/agent-sandbox's template arguments over ws, on a loopback port of
// the host's network instead of the pod's :8888, and returns its URL once
// it is ready; the container goes at the test's end.
func startPod(tb testing.TB, img, name, ws, secrets string) string {
	tb.Helper()
	port := freePort(tb)
	args := append(append([]string{"run", "-d", "--rm", "--name", name, "--network", "host"}, podArgs...), podMounts(buildHunk(tb), ws, secrets)...)
	args = append(args, img, "/opt/hunk/hunk")
	for _, a := range templateServeArgs(tb) {
		if a == ":8888" {
			a = fmt.Sprintf("127.0.0.1:%d", port)
		}
		args = append(args, a)
	}
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		tb.Fatalf("docker run hunk serve: %v\n%s", err, out)
	}
	tb.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitReady(tb, url, func() string { b, _ := exec.Command("docker", "logs", name).CombinedOutput(); return string(b) })
	return url
}

// waitReady waits until url's /readyz answers 200, failing after a minute
// with logs() (a server that never starts, not a measure of its speed).
func waitReady(tb testing.TB, url string, logs func() string) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s never got ready: %v\n%s", url, err, logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
