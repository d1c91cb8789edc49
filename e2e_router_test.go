//go:build linux

// hunk serve behind agent-sandbox's own router (sandbox-router of
// sigs.k8s.io/agent-sandbox v0.5.6, built from the Go module proxy by the
// test-only module testdata/k8s): the router forwards by the X-Sandbox-*
// headers to a pod's address — here hunk serve on loopback, which the
// router allows with --allow-loopback-pod-ip.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

var (
	k8sToolsOnce sync.Once
	k8sTools     = map[string]string{}
	k8sToolsErr  error
)

// k8sTool is the binary of one of testdata/k8s's tools ("sandbox-router",
// "crdcheck"),
// built once per test run into the directory of hunk's build. A machine
// that cannot build it (no Go module proxy) skips the test, or fails it
// when HUNK_REQUIRE_K8S_TOOLS is set (CI).
func k8sTool(t testing.TB, name string) string {
	t.Helper()
	pkgs := map[string]string{"sandbox-router": "sigs.k8s.io/agent-sandbox/sandbox-router/cmd", "crdcheck": "./crdcheck"}
	k8sToolsOnce.Do(func() {
		dir := filepath.Dir(buildHunk(t))
		for n, pkg := range pkgs {
			out := filepath.Join(dir, n)
			c := exec.Command("go", "build", "-o", out, pkg)
			c.Dir = "testdata/k8s"
			c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
			if b, err := c.CombinedOutput(); err != nil {
				k8sToolsErr = fmt.Errorf("go build %s (in testdata/k8s): %v\n%s", pkg, err, b)
				return
			}
			k8sTools[n] = out
		}
	})
	if k8sToolsErr != nil {
		if os.Getenv("HUNK_REQUIRE_K8S_TOOLS") != "" {
			t.Fatalf("agent-sandbox's tools are required (HUNK_REQUIRE_K8S_TOOLS): %v", k8sToolsErr)
		}
		sandboxtest.Skip(t, "agent-sandbox's tools: %v", k8sToolsErr)
	}
	return k8sTools[name]
}

// freePort is a loopback port free a moment ago.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRouter starts agent-sandbox's router on loopback (with args) and
// returns its proxy URL once it is ready.
func startRouter(t testing.TB, args ...string) string {
	t.Helper()
	bin := k8sTool(t, "sandbox-router")
	proxy, health, metrics := freePort(t), freePort(t), freePort(t)
	cmd := exec.Command(bin, append([]string{"--http-bind-address", fmt.Sprintf("127.0.0.1:%d", proxy),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics),
		"--allow-loopback-pod-ip", "--access-log=false"}, args...)...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitReady(t, fmt.Sprintf("http://127.0.0.1:%d", health), log.String)
	return fmt.Sprintf("http://127.0.0.1:%d", proxy)
}

// sandboxHeaders are the headers that make the router forward to s, as a
// client names a claimed sandbox (its pod's address here, on loopback).
func sandboxHeaders(t *testing.T, s *served) map[string]string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatal(s.url)
	}
	return map[string]string{"X-Sandbox-ID": "sandbox-e2e", "X-Sandbox-Namespace": "default",
		"X-Sandbox-Port": port, "X-Sandbox-Pod-IP": "127.0.0.1"}
}

// transportCut reports whether a Node client died of a connection cut
// under it (undici's "terminated", UND_ERR_SOCKET), not of a check.
func transportCut(out []byte) bool {
	return !bytes.Contains(out, []byte("FAILED:")) &&
		(bytes.Contains(out, []byte("UND_ERR_SOCKET")) || bytes.Contains(out, []byte(`TypeError: terminated`)))
}

// TestRouterServe: through agent-sandbox's router, a token-protected hunk
// serve is reached with X-Hunk-Token (the router strips Authorization: a
// bearer token does not arrive): the Go SDK's client in a session and
// stateless, the TypeScript SDK's client, and /call in OpenAI's and
// Anthropic's shapes, each leaving the tree intended.
func TestRouterServe(t *testing.T) {
	router := startRouter(t)
	dir := t.TempDir()
	s := serveWithToken(t, dir, "router-e2e-token")
	headers := sandboxHeaders(t, s)

	bearer := map[string]string{"Authorization": "Bearer router-e2e-token"}
	for k, v := range headers {
		bearer[k] = v
	}
	if status, _, out := postCall(t, router, `{"tool":"read","arguments":{"path":"."}}`, bearer); status != http.StatusUnauthorized {
		t.Errorf("a bearer token through the router: %d %v (the router strips Authorization: want 401)", status, out)
	}
	headers["X-Hunk-Token"] = "router-e2e-token"

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("go-sdk/"+version, func(t *testing.T) {
			cs := connectHTTP(t, router+"/mcp", version, headers)
			defer cs.Close()
			agentFlow(t, cs, dir)
		})
	}
	t.Run("typescript-sdk", func(t *testing.T) {
		script := mcpClientScript(t, "http.mjs")
		args := []string{script, router + "/mcp", dir}
		for k, v := range headers {
			args = append(args, k+"="+v)
		}
		out, err := exec.Command("node", args...).CombinedOutput()
		if err != nil && transportCut(out) {
			// The router cut a connection under the client (undici's
			// "terminated", UND_ERR_SOCKET: seen once in three full
			// runs, never a wrong answer): one more run, whose every
			// check must pass.
			t.Logf("the router closed a connection under the client; running it again:\n%s", out)
			out, err = exec.Command("node", args...).CombinedOutput()
		}
		if err != nil || !strings.Contains(string(out), "ok:") {
			t.Fatalf("@modelcontextprotocol/client through the router: %v\n%s", err, out)
		}
		t.Logf("%s", out)
	})
	t.Run("call", func(t *testing.T) { callFlow(t, router, dir, headers) })
	if log := s.stderr.String(); !strings.Contains(log, `"auth":"x-hunk-token","rpc":"tools/call","tool":"apply_patch"`) || !strings.Contains(log, `"sandbox":"sandbox-e2e"`) {
		t.Errorf("hunk serve's access log shows no call through the router:\n%s", log)
	}
}

// TestRouterClaudeCode: Claude Code, hunk added as an HTTP MCP server with
// the router's headers (docs/scale.md's `claude mcp add --transport http`
// line), works through the harness script against hunk serve behind
// agent-sandbox's router; its model is the scripted stand-in on 127.0.0.1.
func TestRouterClaudeCode(t *testing.T) {
	bin := installHarnesses(t)
	router := startRouter(t)
	ws := harnessWorkspace(t)
	s := serveWithToken(t, ws, "claude-e2e-token")
	home := t.TempDir()
	m := newMockModel(t, harnessScript)
	url := m.serve(t, m.anthropic)
	env := claudeEnv(home, url)
	h := sandboxHeaders(t, s)
	args := docsClaudeHTTPLine(t, router, map[string]string{"SANDBOX": h["X-Sandbox-ID"], "NAMESPACE": h["X-Sandbox-Namespace"], "TOKEN": "claude-e2e-token"})
	// The pod's address and port, which a cluster's router finds by the
	// sandbox's name, given here.
	args = append(args, "-H", "X-Sandbox-Pod-IP: 127.0.0.1", "-H", "X-Sandbox-Port: "+h["X-Sandbox-Port"])
	add := exec.Command(filepath.Join(bin, "claude"), args...)
	add.Dir, add.Env = ws, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("claude %v: %v\n%s", args, err, out)
	}
	checkRouted(t, m, ws, runClaude(t, bin, ws, env), s)
}

// checkRouted checks a harness's run through the router: the tree and what
// the model read, and that hunk serve's calls came through the router.
func checkRouted(t *testing.T, m *mockModel, ws, out string, s *served) {
	t.Helper()
	checkHarnessRun(t, m, ws, out)
	if t.Failed() {
		t.Logf("the harness printed:\n%s\nhunk serve's log:\n%s", out, s.stderr)
	}
	if log := s.stderr.String(); !strings.Contains(log, `"sandbox":"sandbox-e2e"`) {
		t.Errorf("no call reached hunk serve through the router:\n%s", log)
	}
}

// docsClaudeHTTPLine is docs/scale.md's `claude mcp add --transport http`
// line as arguments, the router's URL and the placeholders filled in.
func docsClaudeHTTPLine(t *testing.T, router string, fill map[string]string) []string {
	t.Helper()
	b, err := os.ReadFile("docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "claude mcp add --transport http")
	line, _, _ := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatal("docs/scale.md has no `claude mcp add --transport http` line")
	}
	line = strings.ReplaceAll(line, "\\\n", " ")
	line = strings.ReplaceAll(line, "http://sandbox-router-svc.default.svc.cluster.local:8080", router)
	for k, v := range fill {
		line = strings.ReplaceAll(line, k, v)
	}
	return append([]string{"mcp", "add", "--transport", "http"}, shellFields(line)...)
}

// shellFields splits a shell line into words, honouring double quotes.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	inQ, has := false, false
	for _, r := range s {
		switch {
		case r == '"':
			inQ, has = !inQ, true
		case (r == ' ' || r == '\t' || r == '\n') && !inQ:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// TestRouterCodex: Codex CLI, hunk configured as an HTTP MCP server with
// the router's headers (docs/scale.md's [mcp_servers.hunk] table), works
// through the harness script against hunk serve behind agent-sandbox's
// router.
func TestRouterCodex(t *testing.T) {
	bin := installHarnesses(t)
	router := startRouter(t)
	ws := harnessWorkspace(t)
	s := serveWithToken(t, ws, "codex-e2e-token-0123")
	h := sandboxHeaders(t, s)
	home := t.TempDir()
	m := newMockModel(t, harnessScript)
	url := m.serve(t, m.openai)
	table := docsTOML(t, "docs/scale.md")
	// In this order: the pod's address and port, which a cluster's router
	// finds by the sandbox's name, are added after the token is filled.
	table = strings.NewReplacer("http://sandbox-router-svc.default.svc.cluster.local:8080", router,
		"SANDBOX", h["X-Sandbox-ID"], "NAMESPACE", h["X-Sandbox-Namespace"], "TOKEN", "codex-e2e-token-0123").Replace(table)
	table = strings.Replace(table, `"X-Hunk-Token" = "codex-e2e-token-0123" }`,
		fmt.Sprintf(`"X-Hunk-Token" = "codex-e2e-token-0123", "X-Sandbox-Pod-IP" = "127.0.0.1", "X-Sandbox-Port" = %q }`, h["X-Sandbox-Port"]), 1)
	if !strings.Contains(table, "X-Sandbox-Pod-IP") {
		t.Fatalf("docs/scale.md's table changed shape:\n%s", table)
	}
	config := codexConfig(url, "[mcp_servers.hunk]\n"+table)
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644)
	env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "MOCK_API_KEY=sk-test")
	cmd := exec.Command(filepath.Join(bin, "codex"), "exec", "--skip-git-repo-check", "-C", ws, "Work through the task in notes.txt.")
	cmd.Dir, cmd.Env = ws, env
	checkRouted(t, m, ws, runHarness(t, cmd), s)
}

// TestRouterLongCall: a call that runs longer than the router waits for
// response headers (--response-header-timeout, 30 s by default; 5 s here)
// is answered whole through it — MCP's as an event stream, /call's as
// JSON, each with its headers after 1 s, /call's X-Hunk-Failed then a
// trailer. Before, the router cut both with 502.
func TestRouterLongCall(t *testing.T) {
	router := startRouter(t, "--response-header-timeout", "5s")
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none")
	headers := sandboxHeaders(t, s)
	cs := connectHTTP(t, router+"/mcp", "2025-11-25", headers)
	defer cs.Close()
	if res, text, _ := callTool(t, cs, "exec", map[string]any{"command": "sleep 8; echo mcp-done"}); res.IsError || !strings.Contains(text, "mcp-done") {
		t.Errorf("a long MCP call through the router: %q", text)
	}
	for _, c := range []struct {
		cmd          string
		timeout      int
		want, failed string
	}{{"sleep 8; echo call-done", 60, "call-done", ""}, {"sleep 60", 8, "timed out", "true"}} {
		req, _ := http.NewRequest("POST", router+"/call", strings.NewReader(fmt.Sprintf(`{"tool":"exec","arguments":{"command":%q,"timeoutSeconds":%d}}`, c.cmd, c.timeout)))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v any
		if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil || !strings.Contains(string(b), c.want) || resp.Trailer.Get("X-Hunk-Failed") != c.failed {
			t.Errorf("a long /call through the router (%s): %d, trailer %q, %q", c.cmd, resp.StatusCode, resp.Trailer.Get("X-Hunk-Failed"), b)
		}
	}
}
