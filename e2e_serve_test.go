//go:build linux

// hunk serve, driven over HTTP by real clients: the Go SDK's Streamable
// HTTP client in both eras, the TypeScript SDK's, and plain POSTs to /call.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// served is a running `hunk serve`.
type served struct {
	url    string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

// startServe starts `hunk serve -C dir` on a free loopback port with args,
// and waits until it listens; it is stopped (SIGTERM) at the test's end.
func startServe(t *testing.T, dir string, args ...string) *served {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--auth" || a == "--token-file" }) {
		// These tests are of what the server answers: no token (the
		// default makes one; TestServeDefaultToken tries it).
		args = append(args, "--auth", "none")
	}
	cmd := exec.Command(buildHunk(t), append([]string{"serve", "-C", dir, "--listen", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "XDG_STATE_HOME="+t.TempDir())
	s := &served{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { s.stop(t) })
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			s.url = "http://" + strings.TrimSpace(string(b))
			return s
		}
		select {
		case err := <-s.done:
			t.Fatalf("hunk serve ended before it listened: %v\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for the server to end.
func (s *served) stop(t *testing.T) error {
	if s.cmd.ProcessState != nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		t.Errorf("hunk serve did not end on SIGTERM\n%s", s.stderr)
		return nil
	}
}

// syncBuffer is a bytes.Buffer a process writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// headerTransport adds headers to every request (a token, the router's
// X-Sandbox-* headers).
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// connectHTTP connects the Go SDK's Streamable HTTP client to endpoint in
// protocol version (the SDK's default when "").
func connectHTTP(t testing.TB, endpoint, version string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: headerTransport{headers, http.DefaultTransport}}}
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("connecting to %s (%s): %v", endpoint, version, err)
	}
	return cs
}

// agentFlow is what an agent does over MCP, checked on disk: read, edit, a
// two-file apply_patch, exec, undo.
func agentFlow(t *testing.T, cs *mcp.ClientSession, dir string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("one\ntwo\n"), 0o644)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "a.txt"}, "alpha\nbeta\n"},
		{"edit", map[string]any{"path": "a.txt", "oldText": "beta", "newText": "BETA"}, "a.txt"},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-BETA\n+gamma\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** End Patch\n"}, "b.txt"},
		{"exec", map[string]any{"command": "cat a.txt b.txt"}, "alpha\ngamma\none\nTWO\n"},
		{"undo", map[string]any{}, "b.txt"},
	} {
		// A client that pings before each call (go-sdk clients do).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := cs.Ping(ctx, nil); err != nil {
			t.Errorf("ping before %s: %v", c.tool, err)
		}
		cancel()
		res, text, _ := callTool(t, cs, c.tool, c.args)
		if res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s: isError %v, %q (want %q)", c.tool, res.IsError, text, c.want)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.txt"))
	if string(a) != "alpha\nBETA\n" || string(b) != "one\ntwo\n" {
		t.Errorf("after undo of the patch: a.txt %q, b.txt %q (want the edit kept, the patch's two files back)", a, b)
	}
}

// TestServeGoClient: the Go SDK's Streamable HTTP client, in a legacy
// session (2025-11-25, 2025-06-18), stateless (2026-07-28) and as it
// chooses itself, runs an agent's read, edit, two-file patch, exec and undo.
func TestServeGoClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-06-18", "2026-07-28", ""} {
		t.Run("protocol="+version, func(t *testing.T) {
			dir := t.TempDir()
			s := startServe(t, dir, "--driver", "none")
			cs := connectHTTP(t, s.url+"/mcp", version, nil)
			defer cs.Close()
			want := version
			if want == "" {
				want = "2026-07-28" // the SDK's own choice over HTTP: stateless
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("protocol %q, want %q", got, want)
			}
			agentFlow(t, cs, dir)
		})
	}
}

// TestServeSessionsApart: two MCP sessions on one server track their reads
// apart, and a tool's undo reaches only its own session's changes.
func TestServeSessionsApart(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	s := startServe(t, dir, "--driver", "none")
	one := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
	defer one.Close()
	two := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
	defer two.Close()
	callTool(t, one, "read", map[string]any{"path": "a.txt"})
	if res, text, _ := callTool(t, two, "write", map[string]any{"path": "a.txt", "content": "overwritten\n"}); !res.IsError || !strings.Contains(text, "read") {
		t.Errorf("session two replaced a file only session one read: isError %v, %q", res.IsError, text)
	}
	if res, _, _ := callTool(t, one, "write", map[string]any{"path": "a.txt", "content": "one's\n"}); res.IsError {
		t.Fatalf("session one could not write the file it read")
	}
	if res, text, _ := callTool(t, two, "undo", map[string]any{}); !res.IsError {
		t.Errorf("session two undid session one's write: %q", text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one's\n" {
		t.Errorf("a.txt: %q", b)
	}
}

// post POSTs body to url's /call with headers.
func post(url, body string, headers map[string]string) (status int, header http.Header, answer []byte, err error) {
	req, _ := http.NewRequest("POST", url+"/call", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(resp.Body)
	for k, v := range resp.Trailer { // a long call's X-Hunk-Failed
		resp.Header[k] = v
	}
	return resp.StatusCode, resp.Header, answer, err
}

// postCall POSTs body to /call and returns the status, the X-Hunk-Failed
// header and the decoded answer.
func postCall(t *testing.T, url, body string, headers map[string]string) (int, string, any) {
	t.Helper()
	status, header, b, err := post(url, body, headers)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("/call answered %d, not JSON: %q", status, b)
	}
	return status, header.Get("X-Hunk-Failed"), v
}

// serveWithToken starts hunk serve over ws (driver none) with a token file
// holding token.
func serveWithToken(t *testing.T, ws, token string) *served {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	return startServe(t, ws, "--driver", "none", "--token-file", tokenFile)
}

// callFlow POSTs an OpenAI apply_patch_call (two files), an Anthropic
// str_replace_based_edit_tool view and a failing str_replace, and a
// parallel pair as an array, each answered in its own shape.
func callFlow(t *testing.T, url, dir string, headers map[string]string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	status, failed, out := postCall(t, url, `{"type":"apply_patch_call","call_id":"call_1","operation":{"type":"create_file","path":"n.txt","diff":"+new\n"}}`, headers)
	if m, _ := out.(map[string]any); status != 200 || failed != "" || m["type"] != "apply_patch_call_output" || m["call_id"] != "call_1" || m["status"] != "completed" {
		t.Errorf("OpenAI apply_patch_call: %d %q %v", status, failed, out)
	}
	status, failed, out = postCall(t, url, `{"type":"tool_use","id":"toolu_1","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"}}`, headers)
	if m, _ := out.(map[string]any); status != 200 || failed != "" || m["type"] != "tool_result" || m["tool_use_id"] != "toolu_1" || !strings.Contains(asJSON(m["content"]), "alpha") {
		t.Errorf("Anthropic view: %d %q %v", status, failed, out)
	}
	status, failed, out = postCall(t, url, `{"type":"tool_use","id":"toolu_2","name":"str_replace_based_edit_tool","input":{"command":"str_replace","path":"a.txt","old_str":"nowhere","new_str":"x"}}`, headers)
	if m, _ := out.(map[string]any); status != 200 || failed != "true" || m["is_error"] != true {
		t.Errorf("Anthropic failing str_replace: %d %q %v", status, failed, out)
	}
	status, _, out = postCall(t, url, `[{"type":"tool_use","id":"t1","name":"str_replace_based_edit_tool","input":{"command":"str_replace","path":"a.txt","old_str":"alpha","new_str":"ALPHA"}},{"type":"text","text":"thinking aloud"},{"type":"tool_use","id":"t2","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"}}]`, headers)
	if l, _ := out.([]any); status != 200 || len(l) != 2 || !strings.Contains(asJSON(l[1]), "ALPHA") {
		t.Errorf("an array of calls: %d %v", status, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n.txt")); string(b) != "new\n" {
		t.Errorf("n.txt: %q", b)
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeCall: POST /call answers OpenAI's and Anthropic's shapes in
// their own shape, one call or an array.
func TestServeCall(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none")
	callFlow(t, s.url, dir, nil)
}

// TestServeTypeScriptClient: @modelcontextprotocol/client 2.4.0 over
// Streamable HTTP, in a session and stateless (testdata/mcpclient/http.mjs).
func TestServeTypeScriptClient(t *testing.T) {
	script := mcpClientScript(t, "http.mjs")
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none")
	out, err := exec.Command("node", script, s.url+"/mcp", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("@modelcontextprotocol/client over HTTP: %v\n%s\n%s", err, out, s.stderr)
	}
	if log := s.stderr.String(); !strings.Contains(log, `"rpc":"initialize"`) || !strings.Contains(log, `"session":`) || !strings.Contains(log, `"rpc":"server/discover"`) {
		t.Errorf("the access log shows no session (initialize, then its requests) and no stateless server/discover:\n%s", log)
	}
	t.Logf("%s", out)
}

// postRaw POSTs body to /call from a goroutine of its own: the answer, or
// the error.
func postRaw(url, body string) string {
	_, _, b, err := post(url, body, nil)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// readyCalls waits until /readyz reports n calls running.
func readyCalls(t *testing.T, url string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			var st struct {
				Calls int `json:"calls_running"`
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.Calls == n {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("/readyz never reported %d calls running", n)
}

// TestServeBusyThenShutdown: with --max-calls 1 and a long exec running, a
// second call (/call: 503; MCP: a JSON-RPC error) is refused and not run;
// SIGTERM then waits --shutdown-timeout for the exec, cancels it (its
// command stops, its call is answered), and the server ends cleanly.
func TestServeBusyThenShutdown(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none", "--max-calls", "1", "--shutdown-timeout", "1s")
	first := make(chan string, 1)
	go func() { first <- postRaw(s.url, `{"tool":"exec","arguments":{"command":"sleep 300; touch late.txt"}}`) }()
	readyCalls(t, s.url, 1)
	status, _, out := postCall(t, s.url, `{"tool":"write","arguments":{"path":"b.txt","content":"x"}}`, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(asJSON(out), "--max-calls") {
		t.Errorf("a second call while one runs under --max-calls 1: %d %v", status, out)
	}
	cs := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": "c.txt", "content": "x"}})
	if err == nil || !strings.Contains(err.Error(), "too many calls") {
		t.Errorf("an MCP call while one runs under --max-calls 1: %v", err)
	}
	cs.Close()
	for _, name := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused call wrote %s", name)
		}
	}
	if err := s.stop(t); err != nil {
		t.Errorf("hunk serve on SIGTERM: %v\n%s", err, s.stderr)
	}
	select {
	case got := <-first:
		if !strings.Contains(got, `"code":"INTERRUPTED"`) || !strings.Contains(got, "Interrupted (hunk serve shutting down)") {
			t.Errorf("the cancelled exec's answer: %s", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the running call got no answer")
	}
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Errorf("the cancelled command ran on")
	}
	if log := s.stderr.String(); !strings.Contains(log, `"msg":"cancelling the calls still running","calls_running":1`) || !strings.Contains(log, `"msg":"stopped"`) {
		t.Errorf("the log of the shutdown:\n%s", log)
	}
}

// TestServeShutdownFinishes: SIGTERM while an exec runs lets it finish
// within --shutdown-timeout: its answer is whole, then the server ends.
func TestServeShutdownFinishes(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none", "--shutdown-timeout", "2m")
	first := make(chan string, 1)
	go func() {
		first <- postRaw(s.url, `{"tool":"exec","arguments":{"command":"sleep 1; echo finished > done.txt; echo finished"}}`)
	}()
	readyCalls(t, s.url, 1)
	if err := s.stop(t); err != nil {
		t.Errorf("hunk serve on SIGTERM: %v\n%s", err, s.stderr)
	}
	if got := <-first; !strings.Contains(got, "finished") {
		t.Errorf("the running exec's answer: %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "done.txt")); string(b) != "finished\n" {
		t.Errorf("done.txt: %q", b)
	}
}

// TestServeConcurrentUndo: sixteen MCP sessions on one server, each
// writing, patching and undoing its own file over and over while the
// others' operations prune the shared history: every undo takes back its
// session's patch. (Found by BenchmarkFleet: an undo read the log, another
// session's operation pruned, and the undo failed NOT_FOUND, "pack.N: no
// such file".)
func TestServeConcurrentUndo(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none")
	var wg sync.WaitGroup
	errs := make(chan string, 16*40)
	for i := 0; i < 16; i++ {
		cs := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
		defer cs.Close()
		f := fmt.Sprintf("agent-%d.txt", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pass := 0; pass < 25; pass++ {
				for _, c := range []struct {
					tool string
					args map[string]any
				}{
					{"write", map[string]any{"path": f, "content": "alpha\nbeta\n"}},
					{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: " + f + "\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n"}},
					{"undo", map[string]any{}},
				} {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil || res.IsError {
						errs <- fmt.Sprintf("%s %s pass %d: %v %s", f, c.tool, pass, err, asJSON(res))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// conformanceScenarios are the MCP conformance suite's server scenarios
// (@modelcontextprotocol/conformance 0.1.13) that test a server's protocol
// rather than the suite's own fixture server: the others call tools,
// resources and prompts that only that fixture has (add_numbers,
// test_simple_text, …) or capabilities hunk does not declare (logging,
// completions, resources, prompts, sampling, elicitation).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}

// TestServeConformance: the MCP conformance suite's server scenarios that
// apply pass against hunk serve.
func TestServeConformance(t *testing.T) {
	mcpClientScript(t, "http.mjs") // the packages installed
	bin, _ := filepath.Abs("testdata/mcpclient/node_modules/.bin/conformance")
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none")
	for _, sc := range conformanceScenarios {
		out, err := exec.Command(bin, "server", "--url", s.url+"/mcp", "--scenario", sc).CombinedOutput()
		m := regexp.MustCompile(`(?m)^Passed: ([0-9]+)/([0-9]+), 0 failed`).FindSubmatch(out)
		if err != nil || m == nil || string(m[1]) != string(m[2]) || string(m[1]) == "0" {
			t.Errorf("conformance scenario %s: %v\n%s", sc, err, out)
		}
	}
}

// TestServeTLS: with --tls-cert and --tls-key hunk serve answers HTTPS
// (the Go SDK's client trusting the certificate) and refuses plain HTTP;
// one flag without the other is a usage error.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certs := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(certs, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(certs, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	out, err := exec.Command(buildHunk(t), "serve", "-C", dir, "--tls-cert", filepath.Join(certs, "cert.pem")).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: %v, %s", err, out)
	}
	s := startServe(t, dir, "--driver", "none", "--tls-cert", filepath.Join(certs, "cert.pem"), "--tls-key", filepath.Join(certs, "key.pem"))
	url := strings.Replace(s.url, "http://", "https://", 1)
	pool := x509.NewCertPool()
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool.AddCert(cert)
	tlsClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-tls", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: tlsClient}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("the Go SDK over HTTPS: %v\n%s", err, s.stderr)
	}
	defer cs.Close()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("over tls\n"), 0o644)
	if res, text, _ := callTool(t, cs, "read", map[string]any{"path": "a.txt"}); res.IsError || !strings.Contains(text, "over tls") {
		t.Errorf("read over HTTPS: %q", text)
	}
	if resp, err := http.Get(s.url + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP answered 200 on a TLS server")
		}
	}
	if !strings.Contains(s.stderr.String(), `"url":"https://127.0.0.1:`) {
		t.Errorf("the log does not say https:\n%s", s.stderr)
	}
}

// TestServeFilesystemTools: --tools filesystem serves the reference
// filesystem server's tools over HTTP as over stdio.
func TestServeFilesystemTools(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	s := startServe(t, dir, "--tools", "filesystem")
	cs := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(list.Tools) < 10 {
		t.Fatalf("tools/list: %v %v", err, list)
	}
	if res, text, _ := callTool(t, cs, "read_text_file", map[string]any{"path": "a.txt"}); res.IsError || text != "alpha\n" {
		t.Errorf("read_text_file: %v %q", res.IsError, text)
	}
	if res, _, _ := callTool(t, cs, "write_file", map[string]any{"path": "b.txt", "content": "beta\n"}); res.IsError {
		t.Errorf("write_file failed")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "beta\n" {
		t.Errorf("b.txt: %q", b)
	}
}

// TestServeCallTimeout: a call running longer than --call-timeout is
// cancelled — its command stopped, the call answered INTERRUPTED naming
// the bound — and the server answers on.
func TestServeCallTimeout(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none", "--call-timeout", "1s")
	status, failed, out := postCall(t, s.url, `{"tool":"exec","arguments":{"command":"sleep 60; touch late.txt"}}`, nil)
	if status != 200 || failed != "true" || !strings.Contains(asJSON(out), `"code":"INTERRUPTED"`) || !strings.Contains(asJSON(out), "Interrupted (hunk serve --call-timeout 1s)") {
		t.Errorf("a call over --call-timeout: %d %q %v", status, failed, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Errorf("the command ran on past the call's timeout")
	}
	if status, _, _ := postCall(t, s.url, `{"tool":"read","arguments":{"path":"."}}`, nil); status != 200 {
		t.Errorf("the server after a timed-out call: %d", status)
	}
}

// TestServePolicy: the path policy holds over HTTP as in every front-end:
// a read-denied file is DENIED to an MCP call and to /call, and unchanged.
func TestServePolicy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("hidden\n"), 0o644)
	s := startServe(t, dir, "--driver", "none", "--deny-read", "secret.txt")
	cs := connectHTTP(t, s.url+"/mcp", "2025-11-25", nil)
	defer cs.Close()
	if res, text, _ := callTool(t, cs, "read", map[string]any{"path": "secret.txt"}); !res.IsError || !strings.Contains(text, "DENIED") || strings.Contains(text, "hidden") {
		t.Errorf("MCP read of a read-denied file: %q", text)
	}
	if _, failed, out := postCall(t, s.url, `{"tool":"read","arguments":{"path":"secret.txt"}}`, nil); failed != "true" || !strings.Contains(asJSON(out), "DENIED") || strings.Contains(asJSON(out), "hidden") {
		t.Errorf("/call read of a read-denied file: %v", out)
	}
}

// TestServeCallToolSet: /call answers only the tools its server serves,
// as /mcp does — every shape mapped to the tool it runs. A server of the
// filesystem set runs no command and no hunk writer through any shape; a
// server of hunk's set runs none of the filesystem set's.
func TestServeCallToolSet(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	s := startServe(t, dir, "--tools", "filesystem", "--driver", "none")
	for _, c := range []struct{ name, body string }{
		{"hunk exec", `{"tool":"exec","arguments":{"command":"touch ran1"}}`},
		{"Anthropic bash", `{"type":"tool_use","id":"t1","name":"bash","input":{"command":"touch ran2"}}`},
		{"OpenAI shell_call", `{"type":"shell_call","call_id":"c1","action":{"commands":["touch ran3"]}}`},
		{"OpenAI local_shell_call", `{"type":"local_shell_call","call_id":"c2","action":{"type":"exec","command":["touch","ran4"]}}`},
		{"Codex shell function", `{"type":"function_call","call_id":"c3","name":"shell","arguments":"{\"command\":[\"touch\",\"ran5\"]}"}`},
		{"Chat shell function", `{"type":"function","id":"c4","function":{"name":"shell_command","arguments":"{\"command\":\"touch ran6\"}"}}`},
		{"OpenAI apply_patch_call", `{"type":"apply_patch_call","call_id":"c5","operation":{"type":"create_file","path":"ran7","diff":"+x\n"}}`},
		{"Codex apply_patch", `{"type":"custom_tool_call","call_id":"c6","name":"apply_patch","input":"*** Begin Patch\n*** Add File: ran8\n+x\n*** End Patch\n"}`},
		{"hunk write", `{"tool":"write","arguments":{"path":"ran9","content":"x"}}`},
		{"hunk apply_patch function", `{"type":"function_call","call_id":"c7","name":"apply_patch","arguments":"{\"patch\":\"*** Begin Patch\\n*** Add File: ran10\\n+x\\n*** End Patch\\n\"}"}`},
		{"Anthropic undo_edit", `{"type":"tool_use","id":"t2","name":"str_replace_based_edit_tool","input":{"command":"undo_edit","path":"a.txt"}}`},
	} {
		status, failed, out := postCall(t, s.url, c.body, nil)
		if j := asJSON(out); status != 200 || failed != "true" || !strings.Contains(j, "is not served here") {
			t.Errorf("%s on a filesystem server: %d %q %v", c.name, status, failed, out)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "a.txt" {
			t.Errorf("%s was made through /call on a filesystem server", e.Name())
		}
	}
	// What the set serves is answered, in any shape.
	if _, failed, out := postCall(t, s.url, `{"tool":"read_text_file","arguments":{"path":"a.txt"}}`, nil); failed != "" || !strings.Contains(asJSON(out), "alpha") {
		t.Errorf("read_text_file through /call: %q %v", failed, out)
	}
	if _, failed, out := postCall(t, s.url, `{"type":"tool_use","id":"t3","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"}}`, nil); failed != "" || !strings.Contains(asJSON(out), "alpha") {
		t.Errorf("Anthropic view on a filesystem server: %q %v", failed, out)
	}

	h := startServe(t, dir, "--driver", "none")
	if _, failed, out := postCall(t, h.url, `{"tool":"write_file","arguments":{"path":"fs.txt","content":"x"}}`, nil); failed != "true" || !strings.Contains(asJSON(out), "write_file is not served here") {
		t.Errorf("write_file on a hunk server: %q %v", failed, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "fs.txt")); err == nil {
		t.Errorf("fs.txt was made through /call on a hunk server")
	}
}

// TestServeDefaultToken: a default hunk serve (loopback, no token, no
// --auth) is not open to every local user: another uid's request, as the
// attack made it (a write of .git/config's core.fsmonitor, which root's
// next git status would run), is 401 and nothing is written; the token
// hunk made is in a 0600 file the log names, that uid cannot read it, a
// request carrying it is answered, and the file goes with the server.
func TestServeDefaultToken(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	cfg := "[core]\n\trepositoryformatversion = 0\n"
	os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(cfg), 0o644)
	s := startServe(t, dir, "--auth", "", "--driver", "none")
	m := regexp.MustCompile(`"token_file":"([^"]+)"`).FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("the log names no token file:\n%s", s.stderr)
	}
	fi, err := os.Stat(m[1])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file %s: %v %v, want mode 0600", m[1], fi, err)
	}
	tok, _ := os.ReadFile(m[1])
	token := strings.TrimSpace(string(tok))
	attack := `{"tool":"write","arguments":{"path":".git/config","content":"[core]\n\tfsmonitor = touch /tmp/pwned\n"}}`
	if status, _, out := postCall(t, s.url, attack, nil); status != http.StatusUnauthorized {
		t.Errorf("a request without the token: %d %v", status, out)
	}
	if _, err := exec.LookPath("curl"); err == nil && os.Geteuid() == 0 {
		// Another local user: uid 65534, with curl, as the attack was made.
		c := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
			"--data-binary", attack, s.url+"/call")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := c.Output(); err != nil || string(out) != "401" {
			t.Errorf("uid 65534's request: %q %v, want 401", out, err)
		}
		r := exec.Command("cat", m[1])
		r.SysProcAttr = c.SysProcAttr
		if out, err := r.Output(); err == nil {
			t.Errorf("uid 65534 read the token file: %q", out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(b) != cfg {
		t.Errorf(".git/config was written without the token: %q", b)
	}
	if status, failed, out := postCall(t, s.url, `{"tool":"read","arguments":{"path":".git/config"}}`, map[string]string{"Authorization": "Bearer " + token}); status != 200 || failed != "" {
		t.Errorf("a request with the token: %d %q %v", status, failed, out)
	}
	s.stop(t)
	if _, err := os.Stat(m[1]); err == nil {
		t.Errorf("the token file %s outlived the server", m[1])
	}
}

// TestServeBodiesBounded: ten 40 MB bodies held open against --max-calls
// 2 are not all read: two are, the other eight are refused (503) before
// their bodies are read, and the server's memory stays near two bodies'
// (it went to 687-771 MB when each was read whole first).
func TestServeBodiesBounded(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--max-calls", "2", "--max-request", "64MiB", "--driver", "none")
	host := strings.TrimPrefix(s.url, "http://")
	const size, sent = 40 << 20, 39 << 20
	var writers sync.WaitGroup
	answers := make(chan string, 10)
	var conns []net.Conn
	for range 10 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		writers.Add(1)
		go func() {
			defer writers.Done()
			fmt.Fprintf(c, "POST /call HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", host, size)
			chunk := bytes.Repeat([]byte(" "), 1<<20)
			for i := 0; i < sent>>20; i++ {
				if _, err := c.Write(chunk); err != nil {
					return // refused and closed
				}
			}
		}()
		go func() {
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil {
				answers <- strings.TrimSpace(line)
			}
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	writers.Wait()
	refused := 0
	for refused < 8 {
		select {
		case a := <-answers:
			if !strings.Contains(a, " 503 ") {
				t.Fatalf("an answer before its body was read: %q", a)
			}
			refused++
		case <-time.After(time.Minute):
			t.Fatalf("%d of 10 requests refused with every body sent: the rest were read whole", refused)
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	var rssKB int
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")), "%d", &rssKB)
		}
	}
	if rssKB > 300<<10 { // two bodies read: about 80-130 MB
		t.Errorf("hunk serve holds %d MB with two 40 MB bodies being read", rssKB>>10)
	}
}

// TestServeSeed: docs/scale.md's lines that bring the task's code into an
// empty workspace — the repository's tree as one patch of binary literals,
// POSTed to /call?session=seed — make the tree byte for byte (a CRLF file,
// a Latin-1 one, a binary, an executable, a symbolic link, a last line with
// no newline); an undo of another session does not take it back; a bad
// session name is refused with nothing done.
func TestServeSeed(t *testing.T) {
	for _, tool := range []string{"git", "jq", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if sandboxtest.Required("HUNK_REQUIRE_TOOLS", tool) {
				t.Fatalf("HUNK_REQUIRE_TOOLS names %s, and it is not installed", tool)
			}
			t.Skipf("no %s (set HUNK_REQUIRE_TOOLS=%s to make this a failure)", tool, tool)
		}
	}
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	files := map[string]string{
		"src/main.go":  "package main\r\n\r\nfunc main() {}\r\n",
		"latin1.txt":   "caf\xe9\n",
		"bin/blob.dat": "\x00\x01\x02\xff\xfe binary \x00",
		"last.txt":     "no newline",
		"run.sh":       "#!/bin/sh\necho hi\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755)
		os.WriteFile(filepath.Join(repo, p), []byte(c), 0o644)
	}
	os.Chmod(filepath.Join(repo, "run.sh"), 0o755)
	os.Symlink("src/main.go", filepath.Join(repo, "link.go"))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+tmp, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "task")
	ws := filepath.Join(tmp, "ws")
	os.Mkdir(ws, 0o755)
	s := serveWithToken(t, ws, harnessToken)
	b, err := os.ReadFile("docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sh\necho '* -diff' > /tmp/all-binary")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/scale.md has no ```sh block beginning echo '* -diff' > /tmp/all-binary")
	}
	attrs := filepath.Join(tmp, "all-binary")
	line := "echo '* -diff' > /tmp/all-binary" + block
	line = strings.ReplaceAll(line, "/tmp/all-binary", attrs)
	line = strings.ReplaceAll(line, "http://sandbox-router-svc.default.svc.cluster.local:8080", s.url)
	line = strings.ReplaceAll(line, "REPO", repo)
	line = strings.ReplaceAll(line, "COMMIT", "HEAD")
	line = strings.ReplaceAll(line, "X-Hunk-Token: TOKEN", "X-Hunk-Token: "+harnessToken)
	cmd := exec.Command("sh", "-c", "set -e\n"+line)
	cmd.Env = append(os.Environ(), "HOME="+tmp, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the docs' lines: %v\n%s", err, out)
	}
	check := func(when string) {
		t.Helper()
		for p, c := range files {
			if got, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(got) != c {
				t.Errorf("%s: %s is %q (%v), want %q", when, p, got, err, c)
			}
		}
		if fi, err := os.Stat(filepath.Join(ws, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("%s: run.sh is not executable (%v)", when, err)
		}
		if target, err := os.Readlink(filepath.Join(ws, "link.go")); err != nil || target != "src/main.go" {
			t.Errorf("%s: link.go: %q (%v), want a symbolic link to src/main.go", when, target, err)
		}
	}
	check("after the seed")
	auth := map[string]string{"X-Hunk-Token": harnessToken}
	if _, _, answer := postCall(t, s.url, `{"tool":"undo","arguments":{}}`, auth); !strings.Contains(asJSON(answer), "NOT_FOUND") {
		t.Errorf("an undo of the server's session: %s", asJSON(answer))
	}
	check("after another session's undo")
	before := snapshotTree(t, ws)
	status, _, _, err := post(s.url+"/call?session=a/b", `{"tool":"write","arguments":{"path":"x.txt","content":"x"}}`, map[string]string{"X-Hunk-Token": harnessToken, "Content-Type": "application/json"})
	if err != nil || status != http.StatusBadRequest {
		t.Errorf("a bad session name: %d (%v), want 400", status, err)
	}
	if after := snapshotTree(t, ws); after != before {
		t.Errorf("a refused call changed the tree:\n%s", after)
	}
}
