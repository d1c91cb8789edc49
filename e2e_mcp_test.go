//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPGoClient drives hunk mcp with the Go SDK's client: the tool list
// and its annotations, each tool called for real, and a failure as an
// isError result carrying hunk's code.
func TestMCPGoClient(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\r\ntwo\r\n"), 0o644)
	cs := mcpSession(t, dir, nil)

	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][4]bool{ // readOnly, destructive, idempotent, openWorld
		"apply_patch": {false, true, false, false},
		"read":        {true, false, true, false},
		"search":      {true, false, true, false},
		"write":       {false, true, true, false},
		"edit":        {false, true, false, false},
		"undo":        {false, true, false, false},
		"exec":        {false, true, false, false},
	}
	if len(list.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(list.Tools), len(want))
	}
	for _, tool := range list.Tools {
		w, ok := want[tool.Name]
		a := tool.Annotations
		if !ok || a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("tool %s: unexpected, or annotations not explicit: %+v", tool.Name, a)
			continue
		}
		if got := [4]bool{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}; got != w {
			t.Errorf("tool %s: annotations %v, want %v", tool.Name, got, w)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s: no input or output schema", tool.Name)
		}
	}

	_, text, sc := callTool(t, cs, "read", map[string]any{"path": "a.txt"})
	if !strings.Contains(text, "one") || sc["totalLines"] != float64(2) || sc["sha256"] == "" {
		t.Errorf("read: %q %v", text, sc)
	}
	// Claude Code and Codex CLI hand the model structuredContent when
	// there is one: it must hold what the model reads, the file's lines.
	if c, _ := sc["content"].(string); c != text || !strings.Contains(c, "one") || !strings.Contains(c, "two") {
		t.Errorf("read: structuredContent.content %q, want the text %q", sc["content"], text)
	}
	res, text, _ := callTool(t, cs, "edit", map[string]any{"path": "a.txt", "oldText": "two", "newText": "2"})
	if res.IsError || !strings.Contains(text, "Successfully replaced 1 block in") {
		t.Errorf("edit: %q", text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\r\n2\r\n" {
		t.Errorf("after edit: %q (line endings must be kept)", b)
	}
	res, text, sc = callTool(t, cs, "edit", map[string]any{"path": "a.txt", "oldText": "three", "newText": "3"})
	if !res.IsError || sc["code"] != "NO_MATCH" || !strings.Contains(text, "NO_MATCH") {
		t.Errorf("edit with no match: isError %v, %q, %v", res.IsError, text, sc)
	}
	if c, _ := sc["content"].(string); !strings.Contains(c, "hint:") || !strings.Contains(text, c) {
		t.Errorf("edit with no match: structuredContent.content %q must be the message with its hints (%q)", sc["content"], text)
	}
	res, text, _ = callTool(t, cs, "write", map[string]any{"path": "sub/b.txt", "content": "bee\n"})
	if res.IsError || !strings.Contains(text, "Successfully wrote 4 bytes") {
		t.Errorf("write: %q", text)
	}
	patch := "*** Begin Patch\n*** Update File: sub/b.txt\n@@\n-bee\n+wasp\n*** End Patch\n"
	res, text, sc = callTool(t, cs, "apply_patch", map[string]any{"patch": patch})
	if res.IsError || !strings.Contains(text, "M sub/b.txt") || sc["format"] != "codex" {
		t.Errorf("apply_patch: %q %v", text, sc)
	}
	res, _, sc = callTool(t, cs, "read", map[string]any{"path": "../outside"})
	if !res.IsError || sc["code"] != "OUTSIDE_WORKSPACE" {
		t.Errorf("read outside: %v", sc)
	}
	res, text, _ = callTool(t, cs, "read", map[string]any{"path": "a.txt", "bogus": 1})
	if !res.IsError || !strings.Contains(text, "bogus") {
		t.Errorf("unknown argument: isError %v, %q", res.IsError, text)
	}
	if ok, err := driverCondition("driver:landlock"); !ok {
		sandboxtest.Skip(t, "exec over MCP: no landlock driver here (%v)", err)
	}
	res, text, sc = callTool(t, cs, "exec", map[string]any{"command": "cat sub/b.txt; echo err >&2; exit 3"})
	if res.IsError || sc["exitCode"] != float64(3) || sc["stdoutBytes"] != float64(5) || sc["stdout"] != nil || text != "Exit code: 3\nwasp\nerr\nExit code: 3" {
		t.Errorf("exec: %q %v", text, sc)
	}
	_, _, sc = callTool(t, cs, "exec", map[string]any{"command": "exec 3<>/dev/tcp/127.0.0.1/1 2>&1; echo $?", "timeoutSeconds": 30})
	if sc["exitCode"] == nil {
		t.Errorf("exec: %v", sc)
	}
	res, _, sc = callTool(t, cs, "exec", map[string]any{"command": "true", "timeoutSeconds": 100000})
	if !res.IsError || sc["code"] != "INVALID_ARGUMENT" {
		t.Errorf("a timeout over the server's limit must be refused: %v", sc)
	}
}

// TestMCPFilesystemTools drives the reference filesystem server's tool set.
func TestMCPFilesystemTools(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("1\n2\n3\n4\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "deep", "x.go"), []byte("package x\n"), 0o644)
	cs := mcpSession(t, dir, nil, "--tools", "filesystem")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); got != "create_directory directory_tree edit_file get_file_info list_allowed_directories list_directory list_directory_with_sizes move_file read_file read_media_file read_multiple_files read_text_file search_files write_file" {
		t.Errorf("tools: %s", got)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_text_file", map[string]any{"path": "a.txt", "tail": 2}, "3\n4\n"},
		{"read_text_file", map[string]any{"path": "a.txt", "head": 1}, "1"},
		{"read_file", map[string]any{"path": "a.txt", "head": 1.5, "encoding": "utf-8"}, "1\n2"},
		{"read_multiple_files", map[string]any{"paths": []string{"a.txt", "nope.txt"}}, "nope.txt: Error - "},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "2\n", "newText": "two\n"}}, "dryRun": true}, "+two"},
		{"list_directory", map[string]any{"path": "."}, "[DIR] src"},
		{"list_directory_with_sizes", map[string]any{"path": ".", "sortBy": "size"}, "Total: 1 files, 1 directories"},
		{"directory_tree", map[string]any{"path": ".", "excludePatterns": []string{"*.txt"}}, `"name": "x.go"`},
		{"search_files", map[string]any{"path": ".", "pattern": "**/*.go"}, filepath.Join(dir, "src/deep/x.go")},
		{"get_file_info", map[string]any{"path": "a.txt"}, "isFile: true"},
		{"create_directory", map[string]any{"path": "new/dir"}, "Successfully created directory new/dir"},
		{"write_file", map[string]any{"path": "new/dir/f.txt", "content": "f\n"}, "Successfully wrote to new/dir/f.txt"},
		{"move_file", map[string]any{"source": "new/dir/f.txt", "destination": "g.txt"}, "Successfully moved"},
		{"list_allowed_directories", map[string]any{}, dir},
	} {
		res, text, _ := callTool(t, cs, c.tool, c.args)
		if res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s: isError %v, %q (want %q in it)", c.tool, res.IsError, text, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "1\n2\n3\n4\n" {
		t.Errorf("edit_file dryRun wrote: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "g.txt")); err != nil {
		t.Errorf("move_file: %v", err)
	}
	// A failure is its text, as the reference server's (no structuredContent).
	res, text, sc := callTool(t, cs, "edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "\n", "newText": ""}}})
	if !res.IsError || !strings.HasPrefix(text, "[AMBIGUOUS]") || sc != nil {
		t.Errorf("edit_file of a text found 4 times: %q %v", text, sc)
	}
	res, text, _ = callTool(t, cs, "move_file", map[string]any{"source": "g.txt", "destination": "/etc/g.txt"})
	if !res.IsError || !strings.HasPrefix(text, "[OUTSIDE_WORKSPACE]") {
		t.Errorf("move_file out of the workspace: %q", text)
	}
	// An argument the tool does not know is passed over, and said in _meta.
	res, _, _ = callTool(t, cs, "read_text_file", map[string]any{"path": "a.txt", "encoding": "latin1"})
	if res.IsError || fmt.Sprint(res.Meta["dev.hunk/ignoredArguments"]) != "[encoding]" {
		t.Errorf("an unknown argument: isError %v, _meta %v", res.IsError, res.Meta)
	}
}

// TestMCPRootsNarrowNeverWiden: a client root inside the workspace narrows
// what the tools reach; a root outside it widens nothing.
func TestMCPRootsNarrowNeverWiden(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "top.txt"), []byte("top\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "in.txt"), []byte("in\n"), 0o644)
	cs := mcpSession(t, dir, []string{filepath.Join(dir, "sub")})
	if res, text, _ := callTool(t, cs, "read", map[string]any{"path": "in.txt"}); res.IsError || !strings.Contains(text, "in") {
		t.Errorf("read inside the root: %q", text)
	}
	if res, _, sc := callTool(t, cs, "read", map[string]any{"path": "../top.txt"}); !res.IsError || sc["code"] != "OUTSIDE_WORKSPACE" {
		t.Errorf("read outside the client's root: %v", sc)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s\n"), 0o644)
	cs = mcpSession(t, dir, []string{outside, "/"})
	if res, _, sc := callTool(t, cs, "read", map[string]any{"path": filepath.Join(outside, "secret")}); !res.IsError || sc["code"] != "OUTSIDE_WORKSPACE" {
		t.Errorf("a root outside the workspace widened it: %v", sc)
	}
	if res, _, _ := callTool(t, cs, "read", map[string]any{"path": "top.txt"}); res.IsError {
		t.Errorf("roots outside the workspace must leave it whole")
	}
}

// TestMCPNarrowKeepsOptions: a session narrowed to a client's root keeps
// every option hunk mcp was started with: under --no-history its changes
// are not recorded, and the policy still decides names as the whole
// workspace's.
func TestMCPNarrowKeepsOptions(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", ".env"), []byte("SECRET\n"), 0o644)
	cs := mcpSessionEnv(t, dir, []string{filepath.Join(dir, "sub")}, []string{"XDG_STATE_HOME=" + state},
		"--no-history", "--deny-read", "/sub/.env")
	if res, text, _ := callTool(t, cs, "write", map[string]any{"path": "new.txt", "content": "x\n"}); res.IsError {
		t.Fatalf("write: %s", text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("the write did not land in the client's root: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(state, "hunk", "history")); len(ents) > 0 {
		t.Errorf("--no-history, narrowed: the change was recorded in %s", filepath.Join(state, "hunk", "history", ents[0].Name()))
	}
	if res, text, sc := callTool(t, cs, "read", map[string]any{"path": ".env"}); !res.IsError || sc["code"] != "DENIED" || strings.Contains(text, "SECRET") {
		t.Errorf("narrowed, the policy let .env be read: %s", text)
	}
}

// TestMCPOneShotPipe: requests piped in at once, stdin closed right after,
// every one answered (go-sdk issue 1061 drops them).
func TestMCPOneShotPipe(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const n = 20
	for i := 1; i <= n; i++ {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
			"params": map[string]any{"name": "write", "arguments": map[string]any{"path": "f" + string(rune('a'+i)) + ".txt", "content": "x\n"}}})
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(buildHunk(t), "mcp", "-C", dir)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hunk mcp: %v", err)
	}
	seen := map[float64]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     *float64        `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil && m.Result != nil {
			seen[*m.ID] = true
		}
	}
	for i := 0; i <= n; i++ {
		if !seen[float64(i)] {
			t.Errorf("request %d was not answered; output:\n%s", i, out)
		}
	}
}

// TestMCPMalformedLines: a line that is not JSON, is nested too deep, or is
// not a JSON-RPC 2.0 message gets an error reply of its own (parse error,
// invalid request), and the session goes on to answer what follows.
func TestMCPMalformedLines(t *testing.T) {
	dir := t.TempDir()
	bad := []struct{ line, code, id string }{
		{"garbage{", "-32700", "null"},
		{strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000), "-32700", "null"},
		{strings.Repeat("[", 300) + strings.Repeat("]", 300), "-32700", "null"},
		{"42", "-32600", "null"},
		{`{"foo":1}`, "-32600", "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, "-32600", "7"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, "-32600", "null"},
		{`[]`, "-32600", "null"},
		{`[[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]]`, "-32600", "null"},
	}
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for _, b := range bad {
		in.WriteString(b.line + "\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}` + "\n")
	cmd := exec.Command(buildHunk(t), "mcp", "-C", dir)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hunk mcp ended the session: %v\n%s", err, out)
	}
	errs := map[string]int{}
	listed := false
	for _, l := range strings.Split(string(out), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Code int }
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		if m.Error != nil {
			errs[fmt.Sprintf("%d %s", m.Error.Code, m.ID)]++
		}
		if string(m.ID) == "9" && m.Result != nil {
			listed = true
		}
	}
	want := map[string]int{}
	for _, b := range bad {
		want[b.code+" "+b.id]++
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("error replies %v, want %v; output:\n%.2000s", errs, want, out)
	}
	if !listed {
		t.Errorf("tools/list after the bad lines was not answered; output:\n%.2000s", out)
	}
}

// TestMCPTypeScriptClient drives hunk mcp with the official TypeScript SDK
// client (testdata/mcpclient), installing it with `npm ci` the first time.
// HUNK_REQUIRE_MCP_CLIENT (set by CI) turns a missing node or npm into a
// failure.
func TestMCPTypeScriptClient(t *testing.T) {
	script := mcpClientScript(t, "client.mjs")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	cmd := exec.Command("node", script, buildHunk(t), dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ok:") {
		t.Fatalf("TypeScript client said: %s", out)
	}
	t.Logf("%s", out)
}

// TestMCPInspectorStrict: the MCP Inspector's --strict schema check
// (@modelcontextprotocol/inspector, pinned in testdata/mcpclient) finds
// nothing to warn of in any tool set's tools/list — no type arrays, bare
// boolean or untyped schemas that some clients reject.
func TestMCPInspectorStrict(t *testing.T) {
	dir, _ := filepath.Abs("testdata/mcpclient")
	if err := installMCPClient(dir); err != nil {
		if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the MCP Inspector is required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
		}
		sandboxtest.Skip(t, "the MCP Inspector: %v", err)
	}
	inspector := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	ws := t.TempDir()
	for _, c := range []struct {
		args  []string
		tools int
	}{{[]string{"--tools", "hunk"}, 7}, {[]string{"--tools", "hunk", "--network"}, 7}, {[]string{"--tools", "filesystem"}, 14}} {
		args := append([]string{inspector, "--cli", "--strict", "--method", "tools/list", buildHunk(t), "mcp", "-C", ws}, c.args...)
		cmd := exec.Command("node", args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s", c.args, err, stderr.String())
		}
		var list struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &list); err != nil || len(list.Tools) != c.tools {
			t.Fatalf("inspector %v: want %d tools, got %s (%v)", c.args, c.tools, stdout.String(), err)
		}
		if strings.Contains(stderr.String(), "Warning:") || strings.Contains(stderr.String(), "Error:") ||
			strings.Contains(stderr.String(), "Schema portability") {
			t.Errorf("inspector --strict %v:\n%s", c.args, stderr.String())
		}
	}
}

// mcpClientPackages are the npm packages of testdata/mcpclient the tests
// run; a checkout that lacks one runs `npm ci` again.
var mcpClientPackages = []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "@modelcontextprotocol/inspector", "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/conformance", "openai", "@anthropic-ai/sdk", "typescript"}

// TestMCPBounds: hunk mcp stays bounded and responsive against a client
// (or a model) that tries to wedge it: a FIFO as the target of every
// writing tool is refused and the session answers a ping after; a line of
// 200 MiB is refused with an error reply and never held whole; SIGTERM
// ends it with an exec call still running, and the call's command too.
func TestMCPBounds(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildHunk(t), "mcp", "-C", dir, "--driver", "none", "--no-history")
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	replies := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				replies <- m
			}
		}
		close(replies)
	}()
	next := func(what string) map[string]any {
		select {
		case m := <-replies:
			return m
		case <-time.After(60 * time.Second):
			t.Fatalf("no reply to %s", what)
		}
		return nil
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next("initialize")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, call := range []string{
		`{"name":"write","arguments":{"path":"pipe","content":"x"}}`,
		`{"name":"edit","arguments":{"path":"pipe","oldText":"a","newText":"b"}}`,
		`{"name":"apply_patch","arguments":{"patch":"*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch\n"}}`,
		`{"name":"read","arguments":{"path":"pipe"}}`,
	} {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, call))
		r := next(call)
		if res, _ := r["result"].(map[string]any); res == nil || res["isError"] != true {
			t.Errorf("%s on a FIFO: %v", call, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if r := next("ping"); fmt.Sprint(r["id"]) != "10" || r["result"] == nil {
		t.Errorf("ping after the FIFO calls: %v", r)
	}

	// A 1 GiB line, streamed.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"pad":"`)
	chunk := strings.Repeat("A", 1<<20)
	for i := 0; i < 1024; i++ {
		if _, err := io.WriteString(stdin, chunk); err != nil {
			t.Fatal(err)
		}
	}
	send(`"}}`)
	if r := next("the long line"); fmt.Sprint(r["id"]) != "<nil>" || !strings.Contains(fmt.Sprint(r["error"]), "-32600") {
		t.Errorf("a 1 GiB line: %v", r)
	}
	send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	if r := next("ping"); fmt.Sprint(r["id"]) != "12" {
		t.Errorf("ping after the long line: %v", r)
	}
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("peak RSS after the long line: %d MiB", hwm>>20)
	if hwm > 192<<20 {
		t.Errorf("hunk mcp held %d MiB reading a 1 GiB line", hwm>>20)
	}

	// SIGTERM with a command running.
	m := marker(7, 1)
	send(`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep ` + m + `"}}}`)
	for deadline := time.Now().Add(30 * time.Second); len(procsMatching("sleep "+m)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the exec call's command never started")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { cmd.Process.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatal("hunk mcp did not end after SIGTERM")
	}
	for deadline := time.Now().Add(10 * time.Second); len(procsMatching("sleep "+m)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the exec call's command outlived hunk mcp: %v", procsMatching("sleep "+m))
		}
	}
}

// vmHWM is a running process's peak resident set (VmHWM), in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestMCPProgressLongExec: a client whose request timeout (60 s, the
// TypeScript SDK's default) is below a command's run time (90 s) completes
// the call, its timeout reset by hunk's notifications/progress. Long:
// HUNK_LONG_TESTS=1 (CI); otherwise the same with 10 s under a 7 s timeout.
func TestMCPProgressLongExec(t *testing.T) {
	script := mcpClientScript(t, "progress.mjs")
	if ok, err := driverCondition("driver:landlock"); !ok {
		sandboxtest.Skip(t, "exec over MCP: no landlock driver here (%v)", err)
	}
	timeout, run := "7", "10"
	if longTests() {
		timeout, run = "60", "90"
	}
	t.Parallel()
	cmd := exec.Command("node", script, buildHunk(t), t.TempDir(), timeout, run)
	cmd.Env = append(os.Environ(), "HUNK_EXEC_DRIVER=landlock")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestMCPStatelessGoClient: the Go SDK's client pinned to protocol
// 2026-07-28 (server/discover, then every request with its _meta, no
// initialize) lists hunk's tools and calls every one; each answer is
// complete and names hunk.
func TestMCPStatelessGoClient(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	bin := buildHunk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-stateless", Version: "1"}, nil)
	cmd := exec.Command(bin, "mcp", "-C", dir, "--driver", "none")
	cmd.Env = append(os.Environ(), "HUNK_CONFIG=/dev/null")
	cmd.Stderr = os.Stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %q, want 2026-07-28 (server/discover)", v)
	}
	if si := cs.InitializeResult().ServerInfo; si == nil || si.Name != "hunk" {
		t.Errorf("serverInfo %+v", si)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "apply_patch,edit,exec,read,search,undo,write" {
		t.Errorf("tools: %v", names)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"path": "a.txt"}, "alpha\nbeta\n"},
		{"write", map[string]any{"path": "b.txt", "content": "one\n"}, "b.txt"},
		{"edit", map[string]any{"path": "a.txt", "oldText": "beta", "newText": "BETA"}, "a.txt"},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: c.txt\n+sea\n*** End Patch\n"}, "c.txt"},
		{"undo", map[string]any{}, "c.txt"},
		{"exec", map[string]any{"command": "cat a.txt"}, "Exit code: 0\nalpha\nBETA\nExit code: 0"},
	} {
		// A client that pings before each call (as go-sdk clients do)
		// keeps its one server: read tracking and undo hold across calls.
		if err := cs.Ping(ctx, nil); err != nil {
			t.Errorf("ping before %s: %v", c.tool, err)
		}
		res, text, _ := callTool(t, cs, c.tool, c.args)
		if res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s: isError %v, %q (want %q)", c.tool, res.IsError, text, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Errorf("undo left c.txt")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\nBETA\n" {
		t.Errorf("a.txt: %q", b)
	}
}

// TestMCPTypeScriptClientStateless: @modelcontextprotocol/client 2.4.0
// (testdata/mcpclient/stateless.mjs) pinned to protocol 2026-07-28 lists
// hunk's tools and calls every one.
func TestMCPTypeScriptClientStateless(t *testing.T) {
	script := mcpClientScript(t, "stateless.mjs")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	out, err := exec.Command("node", script, buildHunk(t), dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("@modelcontextprotocol/client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
