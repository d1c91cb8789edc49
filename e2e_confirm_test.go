//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// TestConfirmElicitation: an exec call an ask rule names is put to the
// person through an MCP client that declared elicitation (the Go SDK's
// client, protocol 2025-11-25): "allow once" runs it, "allow for this
// session" runs it and its like without asking again, decline, cancel and
// "deny" run nothing (DECLINED); the model's sending the call again is
// asked again. A client without elicitation gets CONFIRMATION_REQUIRED.
func TestConfirmElicitation(t *testing.T) {
	bin := buildHunk(t)
	dir := t.TempDir()
	answers := make(chan *mcp.ElicitResult, 16)
	var mu sync.Mutex // the handler runs on the SDK's goroutine
	var asked []string
	askedSoFar := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-elicit", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			select {
			case a := <-answers:
				return a, nil
			default: // asked when no answer was meant to be needed: no
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "-C", dir, "--ask-cmd", "touch", "--driver", "none")
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
	cmd.Stderr = os.Stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	touch := func(name string) (string, bool) {
		_, text, sc := callTool(t, cs, "exec", map[string]any{"argv": []string{"touch", name}})
		_, err := os.Stat(filepath.Join(dir, name))
		code, _ := sc["code"].(string)
		return code + " " + text, err == nil
	}
	accept := func(d string) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": d}}
	}
	for _, c := range []struct {
		name    string
		answer  *mcp.ElicitResult
		ran     bool
		code    string
		asks    int // elicitations so far
		noReply bool
	}{
		{"once", accept("allow once"), true, "", 1, false},
		{"once-again", accept("deny"), false, "DECLINED", 2, false},
		{"declined", &mcp.ElicitResult{Action: "decline"}, false, "DECLINED", 3, false},
		{"cancelled", &mcp.ElicitResult{Action: "cancel"}, false, "DECLINED", 4, false},
		{"session", accept("allow for this session"), true, "", 5, false},
		{"session-again", nil, true, "", 5, true},
	} {
		if !c.noReply {
			answers <- c.answer
		}
		text, ran := touch(c.name)
		if ran != c.ran || !strings.HasPrefix(text, c.code+" ") {
			t.Errorf("%s: ran %v, result %q; want ran %v, code %q", c.name, ran, text, c.ran, c.code)
		}
		if n := len(askedSoFar()); n != c.asks {
			t.Errorf("%s: the person was asked %d times, want %d", c.name, n, c.asks)
		}
	}
	// A no through the client (a headless client says no by itself)
	// leaves the plan waiting for a yes out of band.
	list := exec.Command(bin, "-C", dir, "approve", "--list")
	list.Env = cmd.Env
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "  exec  touch declined  (waits until") {
		t.Errorf("after a no through the client, hunk approve --list: %v\n%s", err, out)
	}
	if asked := askedSoFar(); len(asked) > 0 && (!strings.Contains(asked[0], "command:  touch once") || !strings.Contains(asked[0], `command rule ask "touch" (--ask-cmd)`)) {
		t.Errorf("the person was shown %q", asked[0])
	}

	// A change a write.ask rule names is asked the same way, its diff
	// shown; each change is its own (no yes for the session).
	wcmd := exec.Command(bin, "mcp", "-C", dir, "--ask-write", "/deploy/")
	wcmd.Env, wcmd.Stderr = cmd.Env, os.Stderr
	ws, err := client.Connect(ctx, &mcp.CommandTransport{Command: wcmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, c := range []struct {
		name   string
		answer *mcp.ElicitResult
		made   bool
		code   string
	}{
		{"w-once", accept("allow once"), true, ""},
		{"w-deny", accept("deny"), false, "DECLINED"},
		{"w-declined", &mcp.ElicitResult{Action: "decline"}, false, "DECLINED"},
		{"w-cancelled", &mcp.ElicitResult{Action: "cancel"}, false, "DECLINED"},
	} {
		answers <- c.answer
		before := len(askedSoFar())
		_, text, sc := callTool(t, ws, "write", map[string]any{"path": "deploy/" + c.name, "content": "x\n"})
		_, err := os.Stat(filepath.Join(dir, "deploy", c.name))
		code, _ := sc["code"].(string)
		if made := err == nil; made != c.made || code != c.code {
			t.Errorf("%s: made %v, code %q (%s); want made %v, code %q", c.name, made, code, text, c.made, c.code)
		}
		asked := askedSoFar()
		if len(asked) != before+1 {
			t.Errorf("%s: the person was asked %d times, want once", c.name, len(asked)-before)
		} else if m := asked[before]; !strings.Contains(m, "A deploy/"+c.name) || !strings.Contains(m, "+++ b/deploy/"+c.name) || !strings.Contains(m, "    +x") {
			t.Errorf("%s: the person was shown %q", c.name, m)
		}
	}

	// A client that declared no elicitation: nothing to ask with.
	plain := mcpSession(t, dir, nil, "--ask-cmd", "touch", "--driver", "none")
	_, text, sc := callTool(t, plain, "exec", map[string]any{"argv": []string{"touch", "plain"}})
	if sc["code"] != "CONFIRMATION_REQUIRED" || !strings.Contains(text, "only a person can say yes") {
		t.Errorf("without elicitation: %v %q", sc["code"], text)
	}
	if _, err := os.Stat(filepath.Join(dir, "plain")); err == nil {
		t.Error("plain was made without a person's yes")
	}
}

// TestConfirmAtTerminal: hunk exec asks the person at the terminal (a
// tmux pane: /dev/tty, not stdin) before a command an ask rule names, and
// hunk write before a change a write.ask rule names: y runs (makes) it, n
// does not (DECLINED), Ctrl-C stops hunk (130) with nothing run; --yes runs it without asking, and without a terminal it is
// CONFIRMATION_REQUIRED (exit 3).
func TestConfirmAtTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if sandboxtest.Required("HUNK_REQUIRE_TOOLS", "tmux") {
			t.Fatal("HUNK_REQUIRE_TOOLS names tmux, and it is not installed")
		}
		t.Skip("no tmux (set HUNK_REQUIRE_TOOLS=tmux to make this a failure)")
	}
	bin := buildHunk(t)
	dir, tmp := t.TempDir(), t.TempDir()
	sock := filepath.Join(tmp, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil && args[0] != "kill-server" {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	defer tmux("kill-server")
	must(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	for _, c := range []struct {
		name, keys string
		ran        bool
		exit       string
		write      bool // a change under --ask-write, not a command
	}{
		{"yes", "y", true, "0", false},
		{"no", "n", false, "1", false},
		{"ctrl-c", "C-c", false, "130", false},
		{"write-yes", "y", true, "0", true},
		{"write-no", "n", false, "1", true},
	} {
		exitFile := filepath.Join(tmp, c.name+".exit")
		run, prompt, made := " exec --driver none --ask-cmd touch -- touch "+c.name, "Run it? [y/N]", filepath.Join(dir, c.name)
		shows := []string{"command:  touch " + c.name, `command rule ask "touch" (--ask-cmd)`}
		if c.write {
			run, prompt, made = " --ask-write /deploy/ write deploy/"+c.name+" --content x", "Make it? [y/N]", filepath.Join(dir, "deploy", c.name)
			shows = []string{"A deploy/" + c.name, `write.ask "/deploy/" (--ask-write)`, "+++ b/deploy/" + c.name, "    +x"}
		}
		// The shell outlives a Ctrl-C (a trap, which its child does not
		// inherit) to write hunk's exit.
		line := "trap 'true' INT; " + bin + " -C " + dir + run + " < /dev/null; echo $? > " + exitFile + "; sleep 600"
		tmux("new-session", "-d", "-s", c.name, "-x", "200", "-y", "50", "env", "HUNK_CONFIG=/dev/null", "sh", "-c", line)
		waitFor(t, func() bool { return strings.Contains(tmux("capture-pane", "-p", "-t", c.name), prompt) }, "the prompt")
		pane := tmux("capture-pane", "-p", "-t", c.name)
		for _, want := range shows {
			if !strings.Contains(pane, want) {
				t.Errorf("%s: the prompt does not show %q:\n%s", c.name, want, pane)
			}
		}
		if c.keys == "C-c" {
			tmux("send-keys", "-t", c.name, "C-c")
		} else {
			tmux("send-keys", "-t", c.name, c.keys, "Enter")
		}
		waitFor(t, func() bool { _, err := os.Stat(exitFile); return err == nil }, c.name+"'s exit")
		b, _ := os.ReadFile(exitFile)
		_, err := os.Stat(made)
		if got := strings.TrimSpace(string(b)); got != c.exit || (err == nil) != c.ran {
			t.Errorf("%s: exit %s, ran %v; want exit %s, ran %v", c.name, got, err == nil, c.exit, c.ran)
		}
	}
	// hunk approve at the terminal: the plan a tool call left is shown, y
	// approves it, and the same call made again runs.
	call := func() ([]byte, error) {
		c := exec.Command(bin, "-C", dir, "--json", "call", "--ask-cmd", "touch", `{"tool":"exec","arguments":{"argv":["touch","approved"]}}`)
		c.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
		return c.CombinedOutput()
	}
	out, _ := call()
	var refused struct {
		Code    string            `json:"code"`
		Details map[string]string `json:"details"`
	}
	if json.Unmarshal(out, &refused) != nil || refused.Code != "CONFIRMATION_REQUIRED" || refused.Details["plan"] == "" {
		t.Fatalf("the call was not refused with a plan:\n%s", out)
	}
	exitFile := filepath.Join(tmp, "approve.exit")
	tmux("new-session", "-d", "-s", "approve", "-x", "200", "-y", "50", "sh", "-c",
		bin+" -C "+dir+" approve "+refused.Details["plan"]+" < /dev/null; echo $? > "+exitFile+"; sleep 600")
	waitFor(t, func() bool { return strings.Contains(tmux("capture-pane", "-p", "-t", "approve"), "Approve it? [y/N]") }, "approve's prompt")
	if pane := tmux("capture-pane", "-p", "-t", "approve"); !strings.Contains(pane, "command:  touch approved") {
		t.Errorf("approve's prompt does not show the command:\n%s", pane)
	}
	tmux("send-keys", "-t", "approve", "y", "Enter")
	waitFor(t, func() bool { _, err := os.Stat(exitFile); return err == nil }, "approve's exit")
	if b, _ := os.ReadFile(exitFile); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("approve exited %s", b)
	}
	if out, err := call(); err != nil {
		t.Errorf("the approved call did not run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "approved")); err != nil {
		t.Error("the approved command did not run")
	}
	// Without a terminal (setsid: no controlling one), exit 3.
	out, err := exec.Command("setsid", "-w", bin, "-C", dir, "exec", "--driver", "none", "--ask-cmd", "touch", "--", "touch", "noterm").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "needs a person's yes") {
		t.Errorf("without a terminal: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "noterm")); err == nil {
		t.Error("noterm was made without a person's yes")
	}
	// hunk mcp run by a person at a terminal (no client attached) says how
	// the common clients run it, and ends on Ctrl-D.
	mcpExit := filepath.Join(tmp, "mcp.exit")
	tmux("new-session", "-d", "-s", "mcp", "-x", "250", "-y", "50", "env", "HUNK_CONFIG=/dev/null", "sh", "-c", bin+" -C "+dir+" mcp; echo $? > "+mcpExit+"; sleep 600")
	waitFor(t, func() bool {
		return strings.Contains(tmux("capture-pane", "-p", "-t", "mcp"), "Ctrl-D or Ctrl-C ends this")
	}, "hunk mcp's lines")
	pane := tmux("capture-pane", "-p", "-t", "mcp")
	docs, err := os.ReadFile("docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	// Each client's line as docs/agents.md gives it, the workspace filled in.
	for _, line := range []string{"claude mcp add hunk -- hunk mcp", "codex mcp add hunk -- hunk mcp", "gemini mcp add --scope user --trust hunk hunk mcp", "copilot mcp add hunk -- hunk mcp"} {
		line += ` -C "$PWD"`
		if !strings.Contains(string(docs), line) {
			t.Errorf("docs/agents.md does not give %q", line)
		}
		if want := strings.Replace(line, `"$PWD"`, dir, 1); !strings.Contains(pane, want) {
			t.Errorf("hunk mcp at a terminal does not say %q:\n%s", want, pane)
		}
	}
	for _, want := range []string{`default_tools_approval_mode = "approve"`, `{"mcpServers":{"hunk":`} {
		if !strings.Contains(pane, want) {
			t.Errorf("hunk mcp at a terminal does not say %q:\n%s", want, pane)
		}
	}
	tmux("send-keys", "-t", "mcp", "C-d")
	waitFor(t, func() bool { _, err := os.Stat(mcpExit); return err == nil }, "hunk mcp's exit")
	if b, _ := os.ReadFile(mcpExit); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("hunk mcp ended %s on Ctrl-D", b)
	}
}

// waitFor polls cond until it holds (a minute at most: it is a wait for
// the terminal, not a measure of time).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}

// TestConfirmStateless: in protocol 2026-07-28 a call a rule asks about
// answers input_required (a form in inputRequests, a sealed requestState)
// to a client whose request declares elicitation; the retry with the
// person's answer and the state as it was runs it. @modelcontextprotocol/
// client 2.4.0's own multi round-trip driver (testdata/mcpclient/mrtr.mjs)
// does it for exec and a write.ask change: allow once, deny, decline,
// cancel. And on the wire: a state tampered with, a state for another
// call, or an answer with no state never runs the command; a client that
// declares no elicitation gets CONFIRMATION_REQUIRED.
func TestConfirmStateless(t *testing.T) {
	bin := buildHunk(t)
	if out, err := exec.Command("node", mcpClientScript(t, "mrtr.mjs"), bin, t.TempDir()).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok:") {
		t.Errorf("@modelcontextprotocol/client: %v\n%s", err, out)
	} else {
		t.Logf("%s", out)
	}

	dir := t.TempDir()
	cmd := exec.Command(bin, "mcp", "-C", dir, "--ask-cmd", "touch", "--driver", "none")
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null", "XDG_STATE_HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	id := 0
	call := func(name string, caps map[string]any, extra map[string]any) map[string]any {
		id++
		params := map[string]any{"name": "exec", "arguments": map[string]any{"argv": []string{"touch", name}},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}}
		for k, v := range extra {
			params[k] = v
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
		stdin.Write(append(b, '\n'))
		if !lines.Scan() {
			t.Fatalf("no answer to call %d", id)
		}
		var m struct{ Result map[string]any }
		json.Unmarshal(lines.Bytes(), &m)
		return m.Result
	}
	made := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	elicit := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	yes := map[string]any{"hunk_confirm": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow once"}}}

	first := call("a", elicit, nil)
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || state == "" || first["inputRequests"] == nil || made("a") {
		t.Fatalf("the first call: %v (made %v)", first, made("a"))
	}
	code := func(r map[string]any) string {
		sc, _ := r["structuredContent"].(map[string]any)
		c, _ := sc["code"].(string)
		return c
	}
	body, sig, _ := strings.Cut(state, ".")
	tampered := body + "." + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, sig)
	for _, c := range []struct {
		what  string
		name  string
		extra map[string]any
	}{
		{"a tampered state", "a", map[string]any{"inputResponses": yes, "requestState": tampered}},
		{"another call's state", "b", map[string]any{"inputResponses": yes, "requestState": state}},
		{"a state of another body", "a", map[string]any{"inputResponses": yes, "requestState": base64.RawURLEncoding.EncodeToString([]byte(`{"t":"exec"}`)) + "." + sig}},
	} {
		if r := call(c.name, elicit, c.extra); code(r) != "INVALID_ARGUMENT" || made(c.name) {
			t.Errorf("%s: %v (made %v)", c.what, r, made(c.name))
		}
	}
	if r := call("a", elicit, map[string]any{"inputResponses": yes}); r["resultType"] != "input_required" || made("a") {
		t.Errorf("an answer without the state: %v (made %v)", r, made("a"))
	}
	if r := call("a", elicit, map[string]any{"inputResponses": yes, "requestState": state}); r["resultType"] != "complete" || r["isError"] == true || !made("a") {
		t.Errorf("the retry with the person's yes: %v (made %v)", r, made("a"))
	}
	if r := call("c", map[string]any{}, nil); code(r) != "CONFIRMATION_REQUIRED" || made("c") {
		t.Errorf("no elicitation declared: %v (made %v)", r, made("c"))
	}
}

// TestConfirmOverHTTP: a legacy MCP session over hunk serve (the Go SDK's
// Streamable HTTP client, protocol 2025-11-25, elicitation declared) is
// asked on the event stream of the call that asks, and answers with a
// POST of its own: allow once runs the command, deny runs nothing; a
// change a write.ask rule names is asked the same way.
func TestConfirmOverHTTP(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--driver", "none", "--ask-cmd", "touch")
	answers := make(chan *mcp.ElicitResult, 4)
	var mu sync.Mutex
	var shown []string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http-elicit", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			shown = append(shown, req.Params.Message)
			mu.Unlock()
			select {
			case a := <-answers:
				return a, nil
			default:
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		name, decision string
		made           bool
	}{{"yes", "allow once", true}, {"no", "deny", false}} {
		answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": c.decision}}
		_, text, _ := callTool(t, cs, "exec", map[string]any{"argv": []string{"touch", c.name}})
		if _, err := os.Stat(filepath.Join(dir, c.name)); (err == nil) != c.made {
			t.Errorf("%s: made %v, want %v (%q)", c.name, err == nil, c.made, text)
		}
	}
	w := startServe(t, dir, "--ask-write", "/deploy/")
	ws, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: w.url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}
	if _, text, _ := callTool(t, ws, "write", map[string]any{"path": "deploy/a.yaml", "content": "x\n"}); !strings.Contains(text, "deploy/a.yaml") {
		t.Errorf("the write asked about: %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "deploy", "a.yaml")); err != nil {
		t.Error("the change the person said yes to was not made")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 3 || !strings.Contains(shown[0], "command:  touch yes") || !strings.Contains(shown[2], "+++ b/deploy/a.yaml") {
		t.Errorf("the person was shown %q", shown)
	}
}
