//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// sdkCall is one provider-shaped call, the SDK type a model's call of that
// shape has, and the SDK type its answer must have.
type sdkCall struct {
	name, call, callType, outType string
}

var sdkCalls = []sdkCall{
	{"responses function_call", `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}","status":"completed"}`,
		"R.ResponseFunctionToolCall", "R.ResponseInputItem.FunctionCallOutput"},
	{"responses function_call from a program", `{"type":"function_call","call_id":"call_2","name":"edit","arguments":"{\"path\":\"a.txt\",\"oldText\":\"zzz\",\"newText\":\"y\"}","caller":{"type":"program","caller_id":"prog_1"}}`,
		"R.ResponseFunctionToolCall", "R.ResponseInputItem.FunctionCallOutput"},
	{"responses function_call of Codex's shell", `{"type":"function_call","call_id":"call_3","name":"shell","arguments":"{\"command\":[\"echo\",\"hi\"]}"}`,
		"R.ResponseFunctionToolCall", "R.ResponseInputItem.FunctionCallOutput"},
	{"responses apply_patch_call", `{"type":"apply_patch_call","id":"apc_1","call_id":"call_4","status":"completed","operation":{"type":"create_file","path":"n.txt","diff":"+new\n"}}`,
		"R.ResponseApplyPatchToolCall", "R.ResponseInputItem.ApplyPatchCallOutput"},
	{"responses apply_patch_call failing", `{"type":"apply_patch_call","id":"apc_2","call_id":"call_5","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-nothing\n+x\n"}}`,
		"R.ResponseApplyPatchToolCall", "R.ResponseInputItem.ApplyPatchCallOutput"},
	{"responses shell_call", `{"type":"shell_call","id":"sh_1","call_id":"call_6","status":"completed","environment":{"type":"local"},"action":{"commands":["echo hi"],"timeout_ms":10000,"max_output_length":100}}`,
		"R.ResponseFunctionShellToolCall", "R.ResponseInputItem.ShellCallOutput"},
	{"responses shell_call for a hosted container", `{"type":"shell_call","id":"sh_2","call_id":"call_7","status":"completed","environment":{"type":"container_reference","container_id":"cntr_1"},"action":{"commands":["echo hi"],"timeout_ms":null,"max_output_length":null}}`,
		"R.ResponseFunctionShellToolCall", "R.ResponseInputItem.ShellCallOutput"},
	{"responses local_shell_call", `{"type":"local_shell_call","id":"lsh_1","call_id":"call_8","status":"completed","action":{"type":"exec","command":["echo","hi"],"env":{}}}`,
		"R.ResponseOutputItem.LocalShellCall", "R.ResponseInputItem.LocalShellCallOutput"},
	{"codex custom_tool_call", `{"type":"custom_tool_call","id":"ctc_1","call_id":"call_9","name":"apply_patch","input":"*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch\n"}`,
		"R.ResponseCustomToolCall", "R.ResponseCustomToolCallOutput"},
	{"chat tool call", `{"id":"call_10","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}`,
		"C.ChatCompletionMessageFunctionToolCall", "C.ChatCompletionToolMessageParam"},
	{"anthropic tool_use of read", `{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.txt"},"caller":{"type":"direct"}}`,
		"A.ToolUseBlock", "A.ToolResultBlockParam"},
	{"anthropic text editor", `{"type":"tool_use","id":"toolu_2","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"},"caller":{"type":"direct"}}`,
		"A.ToolUseBlock", "A.ToolResultBlockParam"},
	{"anthropic failing edit", `{"type":"tool_use","id":"toolu_3","name":"edit","input":{"path":"a.txt","oldText":"zzz","newText":"y"},"caller":{"type":"direct"}}`,
		"A.ToolUseBlock", "A.ToolResultBlockParam"},
	{"anthropic bash", `{"type":"tool_use","id":"toolu_4","name":"bash","input":{"command":"echo hi"},"caller":{"type":"direct"}}`,
		"A.ToolUseBlock", "A.ToolResultBlockParam"},
}

// TestSDKTypes: every shape hunk call answers and every declaration hunk
// tools prints type-checks (tsc --strict, object literals, so a field the
// type lacks is an error too) against the official SDKs' types: the openai
// and @anthropic-ai/sdk npm packages pinned in testdata/mcpclient. The
// calls themselves are checked as the SDKs' types of a model's calls, and
// a whole array of calls as a Responses input list.
func TestSDKTypes(t *testing.T) {
	dir, _ := filepath.Abs("testdata/mcpclient")
	if err := installMCPClient(dir); err != nil {
		if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the SDKs' types are required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
		}
		sandboxtest.Skip(t, "the SDKs' types: %v", err)
	}
	hunk := buildHunk(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\n"), 0o644)
	run := func(args ...string) string {
		cmd := exec.Command(hunk, args...)
		cmd.Dir = ws
		out, err := cmd.Output()
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			t.Fatalf("hunk %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	var b strings.Builder
	b.WriteString(`import type * as R from "openai/resources/responses/responses";
import type * as C from "openai/resources/chat/completions";
import type * as A from "@anthropic-ai/sdk/resources/messages";
`)
	var calls []string
	for i, c := range sdkCalls {
		out := run("call", "--driver", "none", c.call)
		if out == "" || !strings.HasPrefix(out, "{") {
			t.Fatalf("%s: no answer: %q", c.name, out)
		}
		fmt.Fprintf(&b, "\n// %s\nexport const call%d: %s = %s;\nexport const answer%d: %s = %s;\n", c.name, i, c.callType, c.call, i, c.outType, out)
		if strings.HasPrefix(c.callType, "R.") {
			calls = append(calls, c.call)
		}
	}
	list := "[" + strings.Join(calls[:3], ",") + "]"
	fmt.Fprintf(&b, "\n// an array of Responses calls\nexport const answers: R.ResponseInputItem[] = %s;\n", run("call", "--driver", "none", list))
	fmt.Fprintf(&b, "\n// declarations\nexport const openai: R.Tool[] = %s;\n", run("tools", "--for", "openai"))
	fmt.Fprintf(&b, "export const openaiStrict: R.Tool[] = %s;\n", run("tools", "--for", "openai", "--strict"))
	fmt.Fprintf(&b, "export const openaiFilesystem: R.Tool[] = %s;\n", run("tools", "--for", "openai", "--tools", "filesystem"))
	fmt.Fprintf(&b, "export const codex: R.Tool[] = %s;\n", run("tools", "--for", "codex"))
	fmt.Fprintf(&b, "export const chat: C.ChatCompletionTool[] = %s;\n", run("tools", "--for", "openai-chat"))
	fmt.Fprintf(&b, "export const chatStrict: C.ChatCompletionTool[] = %s;\n", run("tools", "--for", "openai-chat", "--strict"))
	fmt.Fprintf(&b, "export const anthropic: A.ToolUnion[] = %s;\n", run("tools", "--for", "anthropic"))
	// The check itself: a field the type lacks must be an error, or tsc
	// reports the directive unused and this test fails.
	b.WriteString("\n// @ts-expect-error call_id is not a field of LocalShellCallOutput\n" +
		`export const wrong: R.ResponseInputItem.LocalShellCallOutput = {"type":"local_shell_call_output","id":"x","output":"","call_id":"x"};` + "\n")

	gen := t.TempDir()
	os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(gen, "node_modules"))
	os.WriteFile(filepath.Join(gen, "shapes.ts"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(gen, "tsconfig.json"), []byte(`{"compilerOptions": {"strict": true, "noEmit": true, "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "skipLibCheck": true, "types": []}, "files": ["shapes.ts"]}`), 0o644)
	tsc := exec.Command(filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", gen)
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc --strict on what hunk emits: %v\n%s\n--- shapes.ts ---\n%s", err, out, b.String())
	}
}
