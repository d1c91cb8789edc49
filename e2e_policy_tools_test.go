//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// policyToolAttacks are tool calls, in every shape hunk call answers, that
// try to read .env (read-denied) — directly, through a link, in a listing,
// a search, a batch — or to change .github/ (write-denied): by name, by
// moving into or out of it, by patch. key is the tool the call reaches.
var policyToolAttacks = []struct {
	tool string
	call string
}{
	{"read", `{"tool":"read","arguments":{"path":".env"}}`},
	{"read", `{"tool":"read","arguments":{"path":"link"}}`},
	{"read", `{"tool":"read","arguments":{"path":"."}}`},
	{"search", `{"tool":"search","arguments":{"pattern":"SECRET","hidden":true,"noIgnore":true}}`},
	{"search", `{"tool":"search","arguments":{"pattern":"SECRET","paths":[".env"]}}`},
	{"search", `{"tool":"search","arguments":{"pattern":"=","paths":["link"],"outputMode":"count"}}`},
	{"search", `{"tool":"search","arguments":{"pattern":"**/.env","outputMode":"names","hidden":true}}`},
	{"Grep", `{"type":"tool_use","id":"g1","name":"Grep","input":{"pattern":"SECRET","output_mode":"content","path":"."}}`},
	{"Glob", `{"type":"tool_use","id":"g2","name":"Glob","input":{"pattern":"**/.env"}}`},
	{"write", `{"tool":"write","arguments":{"path":".github/ci.yml","content":"x"}}`},
	{"write", `{"tool":"write","arguments":{"path":".env","content":"x"}}`},
	{"edit", `{"tool":"edit","arguments":{"path":".github/ci.yml","old":"push","new":"x"}}`},
	{"edit", `{"tool":"edit","arguments":{"path":".env","old":"SECRET","new":"x"}}`},
	{"apply_patch", `{"tool":"apply_patch","arguments":{"patch":"*** Begin Patch\n*** Update File: src/main.go\n*** Move to: .github/main.go\n@@\n-package main\n+package x\n*** End Patch"}}`},
	{"apply_patch", `{"tool":"apply_patch","arguments":{"patch":"*** Begin Patch\n*** Update File: .env\n@@\n-SECRET=1\n+x\n*** End Patch"}}`},
	{"exec", `{"tool":"exec","arguments":{"command":"cat .env link; echo x > .github/ci.yml"}}`},
	{"read_file", `{"tool":"read_file","arguments":{"path":".env"}}`},
	{"read_text_file", `{"type":"function_call","call_id":"c","name":"read_text_file","arguments":"{\"path\":\"link\",\"head\":5}"}`},
	{"read_text_file", `{"tool":"read_text_file","arguments":{"path":".env","tail":3}}`},
	{"read_media_file", `{"tool":"read_media_file","arguments":{"path":".env"}}`},
	{"read_multiple_files", `{"tool":"read_multiple_files","arguments":{"paths":[".env","link","src/main.go"]}}`},
	{"write_file", `{"tool":"write_file","arguments":{"path":".github/new.yml","content":"x"}}`},
	{"edit_file", `{"tool":"edit_file","arguments":{"path":".github/ci.yml","edits":[{"oldText":"push","newText":"x"}]}}`},
	{"edit_file", `{"tool":"edit_file","arguments":{"path":".env","edits":[{"oldText":"SECRET","newText":"x"}],"dryRun":true}}`},
	{"create_directory", `{"tool":"create_directory","arguments":{"path":".github/new"}}`},
	{"list_directory", `{"tool":"list_directory","arguments":{"path":"."}}`},
	{"list_directory_with_sizes", `{"tool":"list_directory_with_sizes","arguments":{"path":"."}}`},
	{"directory_tree", `{"tool":"directory_tree","arguments":{"path":"."}}`},
	{"move_file", `{"tool":"move_file","arguments":{"source":".github/ci.yml","destination":"ci.yml"}}`},
	{"move_file", `{"tool":"move_file","arguments":{"source":".env","destination":"public.txt"}}`},
	{"move_file", `{"tool":"move_file","arguments":{"source":"src/main.go","destination":".github/main.go"}}`},
	{"move_file", `{"tool":"move_file","arguments":{"source":"link","destination":"moved-link"}}`},   // a link to the read-denied file
	{"move_file", `{"tool":"move_file","arguments":{"source":"wlink","destination":"moved-wlink"}}`}, // a link into the write-denied directory
	{"move_file", `{"tool":"move_file","arguments":{"source":"src/main.go","destination":"wlink"}}`},
	{"write_file", `{"tool":"write_file","arguments":{"path":"wlink","content":"x"}}`},
	{"edit_file", `{"tool":"edit_file","arguments":{"path":"wlink","edits":[{"oldText":"push","newText":"x"}]}}`},
	{"search_files", `{"tool":"search_files","arguments":{"path":".","pattern":"**/.env"}}`},
	{"get_file_info", `{"tool":"get_file_info","arguments":{"path":".env"}}`},
	{"list_allowed_directories", `{"tool":"list_allowed_directories","arguments":{}}`},
	{"str_replace_based_edit_tool", `{"type":"tool_use","id":"t1","name":"str_replace_based_edit_tool","input":{"command":"view","path":".env"}}`},
	{"str_replace_based_edit_tool", `{"type":"tool_use","id":"t2","name":"str_replace_based_edit_tool","input":{"command":"create","path":".github/x.yml","file_text":"x"}}`},
	{"str_replace_based_edit_tool", `{"type":"tool_use","id":"t3","name":"str_replace_based_edit_tool","input":{"command":"insert","path":".github/ci.yml","insert_line":0,"insert_text":"x"}}`},
	{"bash", `{"type":"tool_use","id":"t4","name":"bash","input":{"command":"cat .env; mv .github g2"}}`},
	{"apply_patch", `{"type":"apply_patch_call","call_id":"p1","status":"completed","operation":{"type":"update_file","path":".github/ci.yml","diff":"@@\n-on: push\n+on: x\n"}}`},
	{"apply_patch", `{"type":"apply_patch_call","call_id":"p2","status":"completed","operation":{"type":"delete_file","path":".env"}}`},
	{"apply_patch", `{"type":"function_call","call_id":"p3","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Delete File: .github/ci.yml\\n*** End Patch\"}"}`},
	{"shell", `{"type":"function_call","call_id":"s1","name":"shell","arguments":"{\"command\":[\"cat\",\".env\"]}"}`},
	{"shell", `{"type":"local_shell_call","call_id":"s2","status":"in_progress","action":{"type":"exec","command":["sh","-c","cat link; rm -rf .github"]}}`},
	{"read", `{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\".env\"}"}}`},
	// seedHistory left operations on .env and .github/ci.yml (session
	// "setup") whose undo would write them, and show .env's old content.
	{"undo", `{"tool":"undo","arguments":{"path":".github/ci.yml"}}`},
	{"undo", `{"tool":"undo","arguments":{"path":".env","diff":true,"force":true}}`},
	{"undo", `{"tool":"undo","arguments":{"session":"setup","diff":true,"force":true}}`},
	{"str_replace_based_edit_tool", `{"type":"tool_use","id":"t5","name":"str_replace_based_edit_tool","input":{"command":"undo_edit","path":".env"}}`},
	{"str_replace_based_edit_tool", `{"type":"tool_use","id":"t6","name":"str_replace_based_edit_tool","input":{"command":"undo_edit","path":".github/ci.yml"}}`},
}

// seedHistory records, with no policy, operations that changed .env and
// .github/ci.yml and put them back: taking them back would write the
// protected paths (and show .env's old content in a diff).
func seedHistory(t *testing.T, bin, ws string, env []string) {
	t.Helper()
	for _, w := range [][2]string{{".env", "SECRET=0\n"}, {".env", "SECRET=1\n"}, {".github/ci.yml", "on: pull\n"}, {".github/ci.yml", "on: push\n"}} {
		c := exec.Command(bin, "-C", ws, "--session", "setup", "write", w[0], "--content", w[1])
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("seeding the history: %v: %s", err, out)
		}
	}
}

// TestPolicyEveryTool: every tool hunk declares, in both tool sets and
// every provider's shape, is called through hunk call to read a
// read-denied file or change a write-denied path; no call shows the secret
// and none changes what the policy protects. A declared tool missing from
// the attacks fails the test.
func TestPolicyEveryTool(t *testing.T) {
	bin := buildHunk(t)
	needDriver(t, "bwrap") // exec's calls run under the automatic driver
	ws := t.TempDir()
	secret := "SECRET=1"
	for name, body := range map[string]string{".env": secret + "\n", ".github/ci.yml": "on: push\n", "src/main.go": "package main\n"} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".env", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".github/ci.yml", filepath.Join(ws, "wlink")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	seedHistory(t, bin, ws, env)
	protected := snapshotTree(t, filepath.Join(ws, ".github")) + "\n" + snapshotTree(t, filepath.Join(ws, ".env"))

	attacked := map[string]bool{}
	for _, a := range policyToolAttacks {
		attacked[a.tool] = true
		c := exec.Command(bin, "-C", ws, "--deny-read", ".env", "--deny-write", "/.github/", "call", "--driver", "bwrap", a.call)
		c.Env = env
		out, _ := c.CombinedOutput()
		if strings.Contains(string(out), "SECRET") {
			t.Errorf("%s: the answer shows the secret: %s", a.call, out)
		}
		if got := snapshotTree(t, filepath.Join(ws, ".github")) + "\n" + snapshotTree(t, filepath.Join(ws, ".env")); got != protected {
			t.Fatalf("%s changed what the policy protects:\n%s\nwas:\n%s\n%s", a.call, got, protected, out)
		}
		for _, p := range []string{"public.txt", "ci.yml", "g2", "moved-link", "moved-wlink"} {
			if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
				t.Fatalf("%s: %s was made from a protected path: %s", a.call, p, out)
			}
		}
		for _, l := range []string{"link", "wlink"} { // the links the policy denies stay as they are
			if to, err := os.Readlink(filepath.Join(ws, l)); err != nil || to != map[string]string{"link": ".env", "wlink": ".github/ci.yml"}[l] {
				t.Fatalf("%s: the link %s is now %q %v: %s", a.call, l, to, err, out)
			}
		}
	}
	for _, f := range [][]string{{"--for", "mcp"}, {"--for", "mcp", "--tools", "filesystem"}, {"--for", "anthropic"}, {"--for", "openai"}, {"--for", "openai-chat"}} {
		out, err := exec.Command(bin, append([]string{"tools"}, f...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var decl struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		var list []struct {
			Name     string `json:"name"`
			Type     string `json:"type"` // a hosted tool's (apply_patch, shell)
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(out, &decl) != nil || len(decl.Tools) == 0 {
			if err := json.Unmarshal(out, &list); err != nil {
				t.Fatalf("hunk tools %v: %v", f, err)
			}
			for _, l := range list {
				name := l.Name + l.Function.Name
				if name == "" {
					name = l.Type
				}
				decl.Tools = append(decl.Tools, struct {
					Name string `json:"name"`
				}{name})
			}
		}
		for _, d := range decl.Tools {
			if !attacked[d.Name] {
				t.Errorf("hunk tools %v declares %s, which the suite does not attack", f, d.Name)
			}
		}
	}
}

// TestPolicyMCP runs the same attacks through `hunk mcp` itself, both tool
// sets, with the policy given to the server — every tool the server lists
// attacked, no secret in any answer, nothing protected changed — and in a
// session narrowed to a client's root, where the rules still name paths
// from the workspace root.
func TestPolicyMCP(t *testing.T) {
	needDriver(t, "bwrap")
	for _, set := range []string{"hunk", "filesystem"} {
		t.Run(set, func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range map[string]string{".env": "SECRET=1\n", ".github/ci.yml": "on: push\n", "src/main.go": "package main\n"} {
				p := filepath.Join(ws, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(body), 0o644)
			}
			os.Symlink(".env", filepath.Join(ws, "link"))
			state := t.TempDir()
			seedHistory(t, buildHunk(t), ws, append(os.Environ(), "XDG_STATE_HOME="+state))
			t.Setenv("XDG_STATE_HOME", state) // mcpSession's server inherits it
			protected := snapshotTree(t, filepath.Join(ws, ".github")) + snapshotTree(t, filepath.Join(ws, ".env"))
			cs := mcpSession(t, ws, nil, "--tools", set, "--driver", "bwrap", "--deny-read", ".env", "--deny-write", "/.github/")
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			attacked := map[string]bool{}
			for _, a := range policyToolAttacks {
				var c struct {
					Tool      string         `json:"tool"`
					Arguments map[string]any `json:"arguments"`
				}
				if json.Unmarshal([]byte(a.call), &c) != nil || c.Tool == "" {
					continue // a provider's shape: hunk call's, tested above
				}
				listed := false
				for _, tl := range tools.Tools {
					listed = listed || tl.Name == c.Tool
				}
				if !listed {
					continue
				}
				attacked[c.Tool] = true
				_, text, sc := callTool(t, cs, c.Tool, c.Arguments)
				b, _ := json.Marshal(sc)
				if strings.Contains(text, "SECRET") || strings.Contains(string(b), "SECRET") {
					t.Errorf("%s %v: the answer shows the secret: %s", c.Tool, c.Arguments, text)
				}
				if got := snapshotTree(t, filepath.Join(ws, ".github")) + snapshotTree(t, filepath.Join(ws, ".env")); got != protected {
					t.Fatalf("%s %v changed what the policy protects", c.Tool, c.Arguments)
				}
			}
			for _, tl := range tools.Tools {
				if !attacked[tl.Name] {
					t.Errorf("hunk mcp --tools %s lists %s, which the suite does not attack", set, tl.Name)
				}
			}
		})
	}
	t.Run("narrowed root", func(t *testing.T) {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
		os.WriteFile(filepath.Join(ws, "sub", ".env"), []byte("SECRET=1\n"), 0o644)
		cs := mcpSession(t, ws, []string{filepath.Join(ws, "sub")}, "--deny-read", "/sub/.env")
		if res, text, sc := callTool(t, cs, "read", map[string]any{"path": ".env"}); !res.IsError || sc["code"] != "DENIED" || strings.Contains(text, "SECRET") {
			t.Errorf("read .env in a session narrowed to sub/: %v %q", sc["code"], text)
		}
	})
}
