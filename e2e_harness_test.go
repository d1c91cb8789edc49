//go:build linux

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
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/hunk-dev/hunk/internal/tools"
)

// The real agent harnesses — Claude Code and Codex CLI, as npm ships them
// (testdata/harness) — run against hunk mcp with their model replaced by
// mockModel, a scripted stand-in for the provider's API on 127.0.0.1: it
// answers each turn with the next tool call of the script and records what
// the harness sends back as each call's result, which is exactly what the
// model would read.

// harnessStep is one tool call of the script: one of hunk's tools and its
// arguments.
type harnessStep struct {
	tool string
	args map[string]any
	// from, when set, makes the arguments from the results the model
	// read so far (step -> text): a call that uses an earlier answer.
	from func(results map[int]string) map[string]any
}

// harnessScript is what both harnesses are made to do: read a file, edit
// it, apply a two-file patch, run a command, and make an edit that fails.
var harnessScript = []harnessStep{
	{tool: "read", args: map[string]any{"path": "notes.txt"}},
	{tool: "edit", args: map[string]any{"path": "notes.txt", "oldText": "beta", "newText": "BETA"}},
	{tool: "apply_patch", args: map[string]any{"patch": "*** Begin Patch\n*** Update File: src/a.txt\n@@\n-a1\n+A1\n*** Add File: src/c.txt\n+c1\n*** End Patch\n"}},
	{tool: "exec", args: map[string]any{"command": "cat src/c.txt; echo done >&2"}},
	{tool: "edit", args: map[string]any{"path": "notes.txt", "oldText": "gamma", "newText": "GAMMA"}},
	// A test suite's worth of output (2 MB), then 40 KB: each must reach the
	// model whole and bounded — the exit status, a head and a tail of each
	// stream, the marker — and the rest be read through hunk's read.
	{tool: "exec", args: map[string]any{"command": "seq 1 300000; echo tail-err >&2; exit 3"}},
	{tool: "exec", args: map[string]any{"command": "seq 1 8000"}},
	{tool: "read", from: func(results map[int]string) map[string]any {
		m := outputRef.FindStringSubmatch(results[5])
		if m == nil {
			return map[string]any{"execOutput": "missing/stdout"}
		}
		return map[string]any{"execOutput": m[1] + "/stdout", "offset": 1041, "limit": 2}
	}},
	// A patch whose check fails (docs/verify.md): taken back, the model
	// reads why with the check's output.
	{tool: "apply_patch", args: map[string]any{"patch": "*** Begin Patch\n*** Update File: src/a.txt\n@@\n-A1\n+broken\n*** End Patch\n",
		"verify": "grep -q broken src/a.txt && echo '2 tests failed' && exit 1"}},
}

// outputRef finds the stored output an exec result names, in the text the
// model read (as it is, or quoted once more inside JSON).
var outputRef = regexp.MustCompile(`execOutput\\?": ?\\?"([0-9a-f]{8})/stdout`)

// mockModel is the scripted model API.
type mockModel struct {
	t      testing.TB
	script []harnessStep
	dump   string // HUNK_HARNESS_DUMP: a directory to write every request to

	// exact: the tools are named as hunk names them (a loop over hunk
	// tools' declarations), not by a harness (mcp__hunk__read).
	exact bool

	mu       sync.Mutex
	requests int
	results  map[int]string // step -> the result text the harness sent back
	toolSeen bool           // a request offered hunk's tools
	// firstTools are the tools the first request that offered any named
	// (the Messages API: what Claude Code put before the model at once).
	firstTools []string
}

func newMockModel(t testing.TB, script []harnessStep) *mockModel {
	return &mockModel{t: t, script: script, dump: os.Getenv("HUNK_HARNESS_DUMP"), results: map[int]string{}}
}

// serve listens on 127.0.0.1 and returns the base URL.
func (m *mockModel) serve(t testing.TB, handler http.HandlerFunc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func (m *mockModel) record(r *http.Request, body []byte) {
	m.mu.Lock()
	m.requests++
	n := m.requests
	m.mu.Unlock()
	if m.dump != "" {
		os.MkdirAll(m.dump, 0o755)
		os.WriteFile(filepath.Join(m.dump, fmt.Sprintf("%03d%s.json", n, strings.ReplaceAll(r.URL.Path, "/", "_"))), body, 0o644)
	}
}

// next is the call of the script's step (the name the request gives the
// tool, its arguments as JSON); ok is false past the script's end or when
// the request does not offer the tool.
func (m *mockModel) next(names []string, step int) (name, args string, ok bool) {
	if step >= len(m.script) {
		return "", "", false
	}
	if name = m.toolName(names, m.script[step].tool); name == "" {
		return "", "", false
	}
	m.mu.Lock()
	m.toolSeen = true
	m.mu.Unlock()
	a := m.script[step].args
	if from := m.script[step].from; from != nil {
		m.mu.Lock()
		a = from(m.results)
		m.mu.Unlock()
	}
	b, _ := json.Marshal(a)
	return name, string(b), true
}

// offered records the tools a request offers, the first time any are.
func (m *mockModel) offered(names []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.firstTools == nil && len(names) > 0 {
		m.firstTools = names
	}
}

// note records the result the harness sent back for a step.
func (m *mockModel) note(step int, text string) {
	m.mu.Lock()
	m.results[step] = text
	m.mu.Unlock()
}

// toolName finds the name the harness gave hunk's tool in a request's tool
// list (mcp__hunk__read, Gemini's mcp_hunk_read, ...): a name ending in the
// tool's that mentions hunk.
func (m *mockModel) toolName(names []string, tool string) string {
	for _, n := range names {
		if m.exact {
			if n == tool {
				return n
			}
			continue
		}
		if strings.Contains(n, "hunk") && (strings.HasSuffix(n, "__"+tool) || strings.HasSuffix(n, "."+tool) || strings.HasSuffix(n, "/"+tool) || strings.HasSuffix(n, "hunk_"+tool) || strings.HasSuffix(n, "hunk-"+tool)) {
			return n
		}
	}
	return ""
}

func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, e := range events {
		b, _ := json.Marshal(e)
		var typ struct {
			Type string `json:"type"`
		}
		json.Unmarshal(b, &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, b)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func textOf(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" || b.Type == "input_text" || b.Type == "output_text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ---- Anthropic's Messages API (Claude Code) ----

func (m *mockModel) anthropic(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.record(r, body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		if strings.Contains(r.URL.Path, "count_tokens") {
			json.NewEncoder(w).Encode(map[string]any{"input_tokens": 100})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	m.offered(names)
	step := 0
	for _, msg := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			var n int
			if _, err := fmt.Sscanf(b.ToolUseID, "toolu_step%d", &n); err == nil {
				m.note(n, textOf(b.Content))
				step = max(step, n+1)
			}
		}
	}
	var block map[string]any
	var input string
	stop := "end_turn"
	if name, args, ok := m.next(names, step); ok {
		input = args
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_step%d", step), "name": name, "input": map[string]any{}}
		stop = "tool_use"
	}
	text := "Done."
	if step < len(m.script) && block == nil {
		text = "OK."
	}
	msgID := fmt.Sprintf("msg_%d", m.requests)
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		content := []any{map[string]any{"type": "text", "text": text}}
		if block != nil {
			var in any
			json.Unmarshal([]byte(input), &in)
			block["input"] = in
			content = []any{block}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	events := []any{
		map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}},
	}
	if block != nil {
		events = append(events,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": block},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": input}},
			map[string]any{"type": "content_block_stop", "index": 0})
	} else {
		events = append(events,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}},
			map[string]any{"type": "content_block_stop", "index": 0})
	}
	events = append(events,
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}},
		map[string]any{"type": "message_stop"})
	sse(w, events...)
}

// ---- OpenAI's Responses API (Codex CLI) ----

func (m *mockModel) openai(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.record(r, body)
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		m.chat(w, body)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Write([]byte(`{"object":"list","data":[],"models":[]}`))
			return
		}
		w.Write([]byte(`{}`))
		return
	}
	var req struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Input  []json.RawMessage `json:"input"`
		Tools  []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(body, &req)
	// Tool names: a function's own, or a namespace's tools (Codex groups an
	// MCP server's tools in one).
	var names []string
	namespaceOf := map[string]string{}
	for _, raw := range req.Tools {
		var t struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(raw, &t)
		names = append(names, t.Name)
		for _, sub := range t.Tools {
			names = append(names, t.Name+"__"+sub.Name)
			namespaceOf[t.Name+"__"+sub.Name] = t.Name
		}
	}
	step := 0
	for _, raw := range req.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		json.Unmarshal(raw, &it)
		if it.Type != "function_call_output" && it.Type != "custom_tool_call_output" && it.Type != "mcp_call_output" {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(it.CallID, "call_step%d", &n); err == nil {
			m.note(n, textOf(it.Output))
			step = max(step, n+1)
		}
	}
	respID := fmt.Sprintf("resp_%d", m.requests)
	var item map[string]any
	if name, args, ok := m.next(names, step); ok {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_step%d", step), "call_id": fmt.Sprintf("call_step%d", step),
			"name": name, "arguments": args, "status": "completed"}
		if ns := namespaceOf[name]; ns != "" {
			item["name"] = strings.TrimPrefix(name, ns+"__")
			item["namespace"] = ns
		}
	}
	if item == nil {
		item = map[string]any{"type": "message", "id": "msg_" + respID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "Done.", "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	resp := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": req.Model, "output": []any{}}
	done := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": "completed", "model": req.Model,
		"output": []any{item}, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(done)
		return
	}
	sse(w,
		map[string]any{"type": "response.created", "sequence_number": 0, "response": resp},
		map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
		map[string]any{"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
		map[string]any{"type": "response.completed", "sequence_number": 3, "response": done})
}

// ---- OpenAI's Chat Completions API ----

func (m *mockModel) chat(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	m.offered(names)
	step := 0
	for _, msg := range req.Messages {
		var n int
		if _, err := fmt.Sscanf(msg.ToolCallID, "call_step%d", &n); msg.Role == "tool" && err == nil {
			m.note(n, textOf(msg.Content))
			step = max(step, n+1)
		}
	}
	message := map[string]any{"role": "assistant", "content": "Done.", "refusal": nil}
	finish := "stop"
	if name, args, ok := m.next(names, step); ok {
		message = map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("call_step%d", step), "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", m.requests), "object": "chat.completion",
		"created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
}

// ---- the tests ----

// harnessWorkspace is the tree the script works on.
func harnessWorkspace(t *testing.T) string {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "a.txt"), []byte("a1\na2\n"), 0o644)
	return ws
}

// harnesses are the agent harnesses testdata/harness installs.
var harnesses = []string{"claude", "codex", "gemini", "copilot"}

// installHarnesses runs `npm ci` in testdata/harness unless every harness
// is there.
func installHarnesses(t *testing.T) string {
	dir, _ := filepath.Abs("testdata/harness")
	bin := filepath.Join(dir, "node_modules", ".bin")
	missing := false
	for _, h := range harnesses {
		if _, err := os.Stat(filepath.Join(bin, h)); err != nil {
			missing = true
		}
	}
	if missing {
		if err := npmCI(dir); err != nil {
			if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
				t.Fatalf("the agent harnesses are required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
			}
			sandboxtest.Skip(t, "the agent harnesses: %v", err)
		}
	}
	// Claude Code's package puts its native binary in place in a postinstall
	// script; an npm that did not run it leaves a stub: run it here.
	if exec.Command(filepath.Join(bin, "claude"), "--version").Run() != nil {
		c := exec.Command("node", filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code", "install.cjs"))
		c.Dir = filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("Claude Code's install step: %v\n%s", err, out)
		}
	}
	for _, h := range harnesses {
		out, err := exec.Command(filepath.Join(bin, h), "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", h, err, out)
		}
		t.Logf("%s", bytes.TrimSpace(out))
	}
	return bin
}

// checkHarnessRun checks the tree the script leaves and what the model read
// of each result.
func checkHarnessRun(t *testing.T, m *mockModel, ws, log string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.toolSeen {
		t.Fatalf("no request offered hunk's tools (%d requests)\n%s", m.requests, log)
	}
	want := map[string]string{"notes.txt": "alpha\nBETA\n", "src/a.txt": "A1\na2\n", "src/c.txt": "c1\n"}
	for p, w := range want {
		got, err := os.ReadFile(filepath.Join(ws, p))
		if err != nil || string(got) != w {
			t.Errorf("%s: %q (%v), want %q", p, got, err, w)
		}
	}
	expect := []struct {
		step    int
		has     []string
		isError bool
	}{
		{0, []string{"alpha", "beta"}, false},              // the read: the file's lines, not only its metadata
		{1, []string{"notes.txt"}, false},                  // the edit's message
		{2, []string{"src/a.txt", "src/c.txt"}, false},     // the patch's summary
		{3, []string{"c1", "done", "Exit code: 0"}, false}, // the command's output
		{4, []string{"NO_MATCH", "hint:"}, true},           // the failing edit, with its hint
		// The 2 MB and the 40 KB outputs: exit status, head, marker, tail.
		{5, []string{"Exit code: 3", "\n1\n2\n3\n", "left out", "execOutput", "\n300000\n", "tail-err"}, false},
		{6, []string{"Exit code: 0", "\n1\n2\n3\n", "left out", "\n8000\n"}, false},
		{7, []string{"1041", "1042"}, false},                                               // what was left out, read through hunk's read
		{8, []string{"CHECK_FAILED", "The change was taken back", "2 tests failed"}, true}, // a failed check, the patch taken back
	}
	for _, e := range expect {
		got, ok := m.results[e.step]
		if !ok {
			t.Errorf("step %d (%s): no result came back to the model\n%s", e.step, m.script[e.step].tool, log)
			continue
		}
		t.Logf("step %d (%s): the model read %d characters", e.step, m.script[e.step].tool, len(got))
		if len(got) > 40000 {
			t.Errorf("step %d (%s): the model read %d characters: a harness sets a result this long aside", e.step, m.script[e.step].tool, len(got))
		}
		// Both harnesses hand the model the structured content as JSON:
		// its text with its line breaks escaped, as the model reads them.
		plain := strings.ReplaceAll(got, `\n`, "\n")
		for _, s := range e.has {
			if !strings.Contains(got, s) && !strings.Contains(plain, s) {
				t.Errorf("step %d (%s): the model read %q, which lacks %q", e.step, m.script[e.step].tool, got, s)
			}
		}
	}
}

// TestHarnessClaudeCode: Claude Code (headless -p, hunk added with `claude
// mcp add`) drives hunk mcp through the script; the tree ends as intended
// and the model reads each result's text.
func TestHarnessClaudeCode(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	ws := harnessWorkspace(t)
	home := t.TempDir()
	m := newMockModel(t, harnessScript)
	url := m.serve(t, m.anthropic)
	env := claudeEnv(home, url)
	// docs/agents.md's line: claude mcp add hunk -- hunk mcp -C "$PWD"
	claudeAddHunk(t, bin, hunk, ws, env)
	checkHarnessRun(t, m, ws, runClaude(t, bin, ws, env))
}

// claudeAddHunk adds hunk mcp over ws (and args) to Claude Code as
// docs/agents.md says: claude mcp add hunk -- hunk mcp -C "$PWD".
func claudeAddHunk(t *testing.T, bin, hunk, ws string, env []string, args ...string) {
	t.Helper()
	add := exec.Command(filepath.Join(bin, "claude"), append([]string{"mcp", "add", "hunk", "--", hunk, "mcp", "-C", ws}, args...)...)
	add.Dir, add.Env = ws, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("claude mcp add: %v\n%s", err, out)
	}
}

// claudeEnv is Claude Code's environment: its own HOME, its model the
// scripted stand-in at url, nothing sent elsewhere.
func claudeEnv(home, url string) []string {
	return append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
}

// runClaude runs Claude Code headless in ws on the task, hunk's tools
// allowed, and returns what it printed.
func runClaude(t *testing.T, bin, ws string, env []string) string {
	allowed := []string{}
	for _, tool := range []string{"read", "write", "edit", "apply_patch", "exec"} {
		allowed = append(allowed, "mcp__hunk__"+tool)
	}
	cmd := exec.Command(filepath.Join(bin, "claude"), "-p", "Work through the task in notes.txt.",
		"--allowedTools", strings.Join(allowed, ","), "--output-format", "json", "--max-turns", "20")
	cmd.Dir, cmd.Env = ws, env
	return runHarness(t, cmd)
}

// TestProviderLoops: the loops docs/agents.md shows — the official openai
// and @anthropic-ai/sdk clients, hunk tools' declarations, every tool call
// passed to hunk call (testdata/mcpclient/loops.mjs) — against the scripted
// model: Responses, Chat Completions and Messages each end with the tree
// intended, and the model reads each result's text.
func TestProviderLoops(t *testing.T) {
	dir, _ := filepath.Abs("testdata/mcpclient")
	if err := installMCPClient(dir); err != nil {
		if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the SDKs are required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
		}
		sandboxtest.Skip(t, "the SDKs: %v", err)
	}
	hunk := buildHunk(t)
	for _, api := range []string{"responses", "chat", "anthropic"} {
		t.Run(api, func(t *testing.T) {
			ws := harnessWorkspace(t)
			m := newMockModel(t, harnessScript)
			m.exact = true
			var url string
			if api == "anthropic" {
				url = m.serve(t, m.anthropic)
			} else {
				url = m.serve(t, m.openai)
			}
			cmd := exec.Command("node", filepath.Join(dir, "loops.mjs"), hunk, url, api, "--driver", "none")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("loops.mjs %s: %v\n%s", api, err, out)
			}
			checkHarnessRun(t, m, ws, string(out))
		})
	}
}

// TestHarnessCodex: Codex CLI (codex exec, hunk in [mcp_servers]) drives
// hunk mcp through the script.
func TestHarnessCodex(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	ws := harnessWorkspace(t)
	home := t.TempDir()
	m := newMockModel(t, harnessScript)
	url := m.serve(t, m.openai)
	config := codexConfig(url, docsCodexTable(t, hunk, ws))
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644)
	env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "MOCK_API_KEY=sk-test")
	cmd := exec.Command(filepath.Join(bin, "codex"), "exec", "--skip-git-repo-check", "-C", ws, "Work through the task in notes.txt.")
	cmd.Dir, cmd.Env = ws, env
	checkHarnessRun(t, m, ws, runHarness(t, cmd))
}

// docsTOML is the body of a doc's ```toml block of [mcp_servers.hunk].
func docsTOML(t *testing.T, doc string) string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```toml\n[mcp_servers.hunk]\n")
	table, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no ```toml block with [mcp_servers.hunk]", doc)
	}
	return table
}

// codexConfig is Codex CLI's config.toml: its model the scripted stand-in
// at url, then mcp (an [mcp_servers.hunk] table).
func codexConfig(url, mcp string) string {
	return fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

%s`, url, mcp)
}

// runHarness runs a harness (no input, at most 3 minutes) and returns what
// it printed; its exit status is logged, not judged: the tree and the
// results the model read are.
func runHarness(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("%s %s: %v", filepath.Base(cmd.Args[0]), cmd.Args[1], err)
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%s did not finish in 3 minutes\n%s", filepath.Base(cmd.Args[0]), out.String())
	}
	return out.String()
}

// docsCodexTable is docs/agents.md's [mcp_servers.hunk] table, as a user
// pastes it, with the binary and the project filled in: the docs' lines
// are the ones the test proves run the writers.
func docsCodexTable(t *testing.T, hunk, ws string) string {
	table := docsTOML(t, "docs/agents.md")
	table = strings.Replace(table, `command = "hunk"`, fmt.Sprintf("command = %q", hunk), 1)
	table = strings.Replace(table, `"/path/to/project"`, fmt.Sprintf("%q", ws), 1)
	return "[mcp_servers.hunk]\n" + table
}

// TestCodexDeclaration: `hunk tools --for codex` declares apply_patch as
// the installed Codex CLI does — its description and its Lark grammar,
// byte for byte, read out of Codex's own binary (a model trained on Codex
// meets the tool it knows).
func TestCodexDeclaration(t *testing.T) {
	bin := installHarnesses(t)
	real, err := filepath.EvalSymlinks(filepath.Join(bin, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	// The npm package's launcher finds the native binary beside it.
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "..", "..", "codex-linux-*", "vendor", "*", "bin", "codex"))
	if len(matches) == 0 {
		matches, _ = filepath.Glob(filepath.Join(filepath.Dir(bin), "@openai", "codex-linux-*", "vendor", "*", "bin", "codex"))
	}
	if len(matches) == 0 {
		t.Fatalf("Codex's native binary not found beside %s", real)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "start: begin_patch hunk+ end_patch\n", "%import common.LF"
	i := bytes.Index(b, []byte(start))
	j := bytes.Index(b[max(i, 0):], []byte(end))
	if i < 0 || j < 0 {
		t.Fatal("no apply_patch grammar in Codex's binary")
	}
	grammar := string(b[i : i+j+len(end)])
	if !bytes.Contains(b, []byte(tools.CodexDescription)) {
		t.Errorf("Codex's binary does not hold hunk's description %q", tools.CodexDescription)
	}
	if grammar != tools.CodexGrammar {
		t.Errorf("the grammar differs from Codex's:\n%s\nhunk's:\n%s", grammar, tools.CodexGrammar)
	}
	out, err := exec.Command(buildHunk(t), "tools", "--for", "codex").Output()
	if err != nil {
		t.Fatal(err)
	}
	var decl []struct {
		Type, Name, Description string
		Format                  struct{ Type, Syntax, Definition string }
	}
	if err := json.Unmarshal(out, &decl); err != nil || len(decl) != 1 {
		t.Fatalf("hunk tools --for codex: %v\n%s", err, out)
	}
	d := decl[0]
	if d.Type != "custom" || d.Name != "apply_patch" || d.Description != tools.CodexDescription || d.Format.Definition != grammar || d.Format.Syntax != "lark" || d.Format.Type != "grammar" {
		t.Errorf("hunk tools --for codex: %+v", d)
	}
}

// rulesScript: a command a deny rule names, one an ask rule names, then a
// read — what the person running hunk decided must reach the model as text
// it can act on, and the session go on.
var rulesScript = []harnessStep{
	{tool: "exec", args: map[string]any{"command": "git push origin main"}},
	{tool: "exec", args: map[string]any{"argv": []string{"touch", "asked"}}},
	{tool: "read", args: map[string]any{"path": "notes.txt"}},
}

// rulesArgs are hunk mcp's own: a deny rule with its why, an ask rule.
var rulesArgs = []string{"--deny-cmd", "git push", "--ask-cmd", "touch", "--driver", "none"}

// checkRulesRun: the deny and the ask reached the model, nothing ran.
func checkRulesRun(t *testing.T, m *mockModel, ws, log string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := os.Stat(filepath.Join(ws, "asked")); err == nil {
		t.Error("the command the ask rule names ran without a person's yes")
	}
	// A harness hands the model the text, or the structured content as
	// JSON (its quotes escaped, once or twice): read it as the model does.
	plain := func(s string) string {
		for strings.Contains(s, `\"`) {
			s = strings.ReplaceAll(s, `\"`, `"`)
		}
		return s
	}
	for step, all := range [][]string{
		{"DENIED", `exec: "git push origin main" is denied by command rule deny "git push" (--deny-cmd); the command was not run`},
		{"exec", "touch asked"},
		{"alpha"},
	} {
		got, ok := m.results[step]
		if !ok {
			t.Errorf("step %d: no result came back to the model\n%s", step, log)
			continue
		}
		for _, s := range all {
			if !strings.Contains(plain(got), s) {
				t.Errorf("step %d: the model read %q, which lacks %q", step, got, s)
			}
		}
	}
	t.Logf("the ask reached the model as %.300q", plain(m.results[1]))
	// No person to ask: the plan id and who may approve it; or the harness
	// asked for its person (elicitation) and said no by itself, headless —
	// the plan waits all the same.
	if got := plain(m.results[1]); !strings.Contains(got, "CONFIRMATION_REQUIRED") && !strings.Contains(got, "DECLINED") {
		t.Errorf("the ask: the model read %q, neither CONFIRMATION_REQUIRED nor DECLINED", got)
	}
	if got := plain(m.results[1]); !regexp.MustCompile(`only a person can say yes, never a tool call: ask the user to run .hunk -C \S+ approve [0-9a-f]{12}.`).MatchString(got) {
		t.Errorf("the ask: the model read %q, which does not say who may say yes", got)
	}
}

// TestHarnessRules: Claude Code and Codex CLI, their models scripted, with
// hunk mcp under a deny rule and an ask rule: each refusal reaches the
// model as hunk's text (the rule, where it is set, what to do), nothing
// the rules hold back runs, and the session goes on.
func TestHarnessRules(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	t.Run("claude", func(t *testing.T) {
		ws := harnessWorkspace(t)
		home := t.TempDir()
		m := newMockModel(t, rulesScript)
		env := claudeEnv(home, m.serve(t, m.anthropic))
		claudeAddHunk(t, bin, hunk, ws, env, rulesArgs...)
		checkRulesRun(t, m, ws, runClaude(t, bin, ws, env))
	})
	t.Run("codex", func(t *testing.T) {
		ws := harnessWorkspace(t)
		home := t.TempDir()
		m := newMockModel(t, rulesScript)
		table := docsCodexTable(t, hunk, ws)
		quoted := make([]string, len(rulesArgs))
		for i, a := range rulesArgs {
			quoted[i] = fmt.Sprintf("%q", a)
		}
		table = strings.Replace(table, fmt.Sprintf("%q]", ws), fmt.Sprintf("%q, %s]", ws, strings.Join(quoted, ", ")), 1)
		os.WriteFile(filepath.Join(home, "config.toml"), []byte(codexConfig(m.serve(t, m.openai), table)), 0o644)
		env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "MOCK_API_KEY=sk-test")
		cmd := exec.Command(filepath.Join(bin, "codex"), "exec", "--skip-git-repo-check", "-C", ws, "Work through the task in notes.txt.")
		cmd.Dir, cmd.Env = ws, env
		checkRulesRun(t, m, ws, runHarness(t, cmd))
	})
}

// TestHarnessClaudeCodeToolSearch: with Claude Code's tool search on (its
// default with many tools), hunk's tools are not deferred behind it: the
// first request already offers them to the model (their _meta says
// anthropic/alwaysLoad), and the scripted session runs.
func TestHarnessClaudeCodeToolSearch(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	ws := harnessWorkspace(t)
	home := t.TempDir()
	m := newMockModel(t, rulesScript)
	env := claudeEnv(home, m.serve(t, m.anthropic))
	for i, kv := range env {
		if kv == "ENABLE_TOOL_SEARCH=false" {
			env[i] = "ENABLE_TOOL_SEARCH=true"
		}
	}
	claudeAddHunk(t, bin, hunk, ws, env, rulesArgs...)
	log := runClaude(t, bin, ws, env)
	m.mu.Lock()
	first := slices.Clone(m.firstTools)
	m.mu.Unlock()
	for _, tool := range []string{"read", "write", "edit", "apply_patch", "search", "exec", "undo"} {
		if !slices.Contains(first, "mcp__hunk__"+tool) {
			t.Errorf("the first request offered %v: hunk's %s is deferred", first, tool)
		}
	}
	checkRulesRun(t, m, ws, log)
}

// TestHarnessCodexAddLine: docs/agents.md's `codex mcp add` line with its
// approval key, run as a user pastes it (HOME a new one, the binary and
// the project filled in), then `codex exec` through the scripted session:
// the writers run, the tree ends as intended.
func TestHarnessCodexAddLine(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	ws := harnessWorkspace(t)
	home := t.TempDir()
	b, err := os.ReadFile("docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sh\ncodex mcp add hunk")
	line, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/agents.md has no ```sh block beginning codex mcp add hunk")
	}
	line = "codex mcp add hunk" + line
	m := newMockModel(t, harnessScript)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexConfig(m.serve(t, m.openai), "")), 0o644)
	env := append(os.Environ(), "HOME="+home, "MOCK_API_KEY=sk-test", "PATH="+bin+":"+filepath.Dir(hunk)+":"+os.Getenv("PATH"))
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CODEX_HOME=") })
	add := exec.Command("sh", "-c", strings.ReplaceAll(line, "hunk mcp", hunk+" mcp"))
	add.Dir, add.Env = ws, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("the docs' line: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(bin, "codex"), "exec", "--skip-git-repo-check", "-C", ws, "Work through the task in notes.txt.")
	cmd.Dir, cmd.Env = ws, env
	checkHarnessRun(t, m, ws, runHarness(t, cmd))
}

// TestHarnessClaudeCodeOnlyHunk: Claude Code with its own file and shell
// tools turned off as docs/agents.md says (--disallowedTools), so that
// hunk's guarantees (the path policy, read tracking, undo) hold for every
// change the model makes: its requests offer none of Read, Edit, Write,
// Bash, and the scripted session runs through hunk.
func TestHarnessClaudeCodeOnlyHunk(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	ws := harnessWorkspace(t)
	home := t.TempDir()
	m := newMockModel(t, harnessScript)
	env := claudeEnv(home, m.serve(t, m.anthropic))
	claudeAddHunk(t, bin, hunk, ws, env)
	b, err := os.ReadFile("docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	off := regexp.MustCompile("--disallowedTools '([^']+)'").FindSubmatch(b)
	if off == nil {
		t.Fatal("docs/agents.md gives no --disallowedTools '...' line")
	}
	var allowed []string
	for _, tool := range []string{"read", "write", "edit", "apply_patch", "exec", "search", "undo"} {
		allowed = append(allowed, "mcp__hunk__"+tool)
	}
	cmd := exec.Command(filepath.Join(bin, "claude"), "-p", "Work through the task in notes.txt.", "--allowedTools", strings.Join(allowed, ","),
		"--disallowedTools", string(off[1]), "--output-format", "json", "--max-turns", "20")
	cmd.Dir, cmd.Env = ws, env
	log := runHarness(t, cmd)
	m.mu.Lock()
	first := slices.Clone(m.firstTools)
	m.mu.Unlock()
	for _, own := range []string{"Read", "Edit", "Write", "Bash", "NotebookEdit"} {
		if slices.Contains(first, own) {
			t.Errorf("Claude Code still offers its own %s: %v", own, first)
		}
	}
	checkHarnessRun(t, m, ws, log)
}
