//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Gemini CLI and Copilot CLI beside Claude Code and Codex: each as npm
// ships it (testdata/harness), configured as docs/agents.md says, its model
// the scripted stand-in on 127.0.0.1.

// ---- Google's Gemini API (Gemini CLI) ----

// gemini answers generateContent and streamGenerateContent
// (/v1beta/models/MODEL:ACTION): the script's next call as a functionCall
// part, the results the harness sends back read from its functionResponse
// parts, in order (one call a turn). A request that asks for JSON (Gemini
// CLI's own side questions, such as who speaks next) is answered so that
// the session ends where the script does.
func (m *mockModel) gemini(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.record(r, body)
	_, action, _ := strings.Cut(r.URL.Path, ":")
	if action == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"totalTokens":100}`))
		return
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	json.Unmarshal(body, &req)
	var names []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	m.offered(names)
	step := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				m.note(step, string(p.FunctionResponse.Response))
				step++
			}
		}
	}
	part := map[string]any{"text": "Done."}
	if req.GenerationConfig.ResponseMimeType == "application/json" {
		part = map[string]any{"text": `{"reasoning": "the task is done", "next_speaker": "user"}`}
	} else if name, args, ok := m.next(names, step); ok {
		var a any
		json.Unmarshal([]byte(args), &a)
		part = map[string]any{"functionCall": map[string]any{"name": name, "args": a, "id": fmt.Sprintf("call_step%d", step)}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-pro",
	}
	b, _ := json.Marshal(resp)
	if action == "streamGenerateContent" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// geminiEnv is Gemini CLI's environment: its own HOME, an API key, its
// model the scripted stand-in at url, nothing sent elsewhere.
func geminiEnv(home, url string) []string {
	return append(os.Environ(), "HOME="+home, "GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL="+url,
		"GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=true")
}

// copilotEnv is Copilot CLI's environment: its own HOME, offline, its
// model (bring your own key, Chat Completions) the scripted stand-in at
// url.
func copilotEnv(home, url string) []string {
	return append(os.Environ(), "HOME="+home, "COPILOT_HOME="+filepath.Join(home, ".copilot"), "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+url+"/v1", "COPILOT_PROVIDER_TYPE=openai", "COPILOT_PROVIDER_API_KEY=sk-test",
		"COPILOT_MODEL=gpt-4.1", "COPILOT_AUTO_UPDATE=false", "NO_COLOR=1")
}

// docsShLine is the line of a ```sh block of docs/agents.md that begins
// with prefix, as a user copies it.
func docsShLine(t *testing.T, prefix string) string {
	t.Helper()
	b, err := os.ReadFile("docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	t.Fatalf("docs/agents.md has no ```sh line beginning %q", prefix)
	return ""
}

// addHunk runs a docs line that adds hunk to a harness, as a user pastes
// it in the project (ws): hunk and the harness on PATH; over HTTP (url not
// empty) its address the served one and $TOKEN the token.
func addHunk(t *testing.T, line, bin, hunk, ws, url, token string, env []string) {
	t.Helper()
	if url != "" {
		line = strings.Replace(line, "http://127.0.0.1:8888", url, 1)
	}
	env = append(env, "PATH="+bin+":"+filepath.Dir(hunk)+":"+os.Getenv("PATH"), "TOKEN="+token)
	add := exec.Command("sh", "-c", line)
	add.Dir, add.Env = ws, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

// harnessToken is the token the HTTP runs' hunk serve is given.
const harnessToken = "harness-token-0123456789abcdef"

// overTransports runs f over stdio (url "") and over hunk serve (its url).
func overTransports(t *testing.T, f func(t *testing.T, ws, url string)) {
	t.Run("stdio", func(t *testing.T) { f(t, harnessWorkspace(t), "") })
	t.Run("http", func(t *testing.T) {
		ws := harnessWorkspace(t)
		tokenFile := filepath.Join(t.TempDir(), "token")
		os.WriteFile(tokenFile, []byte(harnessToken+"\n"), 0o600)
		f(t, ws, startServe(t, ws, "--token-file", tokenFile).url)
	})
}

// TestHarnessGemini: Gemini CLI (gemini -p, hunk added by docs/agents.md's
// line) drives hunk mcp, and hunk serve, through the script; the model
// reads each result's text once.
func TestHarnessGemini(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	overTransports(t, func(t *testing.T, ws, url string) {
		home := t.TempDir()
		m := newMockModel(t, harnessScript)
		env := geminiEnv(home, m.serve(t, m.gemini))
		os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
		os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o644)
		line := docsShLine(t, "gemini mcp add --scope user --trust hunk hunk mcp")
		if url != "" {
			line = docsShLine(t, "gemini mcp add --scope user --trust --transport http")
		}
		addHunk(t, line, bin, hunk, ws, url, harnessToken, env)
		cmd := exec.Command(filepath.Join(bin, "gemini"), "-p", "Work through the task in notes.txt.", "--model", "gemini-2.5-pro",
			"--output-format", "json", "--skip-trust")
		cmd.Dir, cmd.Env = ws, env
		checkHarnessRun(t, m, ws, runHarness(t, cmd))
		checkReadOnce(t, m)
	})
}

// TestHarnessCopilot: Copilot CLI (copilot -p, hunk added by
// docs/agents.md's line) drives hunk mcp, and hunk serve, through the
// script; the model reads each result's text once.
func TestHarnessCopilot(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	overTransports(t, func(t *testing.T, ws, url string) {
		home := t.TempDir()
		m := newMockModel(t, harnessScript)
		env := copilotEnv(home, m.serve(t, m.openai))
		line := docsShLine(t, "copilot mcp add hunk -- hunk mcp")
		if url != "" {
			line = docsShLine(t, "copilot mcp add --transport http")
		}
		addHunk(t, line, bin, hunk, ws, url, harnessToken, env)
		cmd := exec.Command(filepath.Join(bin, "copilot"), "-p", "Work through the task in notes.txt.", "--allow-all-tools")
		cmd.Dir, cmd.Env = ws, env
		checkHarnessRun(t, m, ws, runHarness(t, cmd))
		checkReadOnce(t, m)
	})
}

// checkReadOnce: the model read each result's text once, not again inside
// the structured content (a client that forwards both: the file's lines,
// the failed edit's hint, the long output's tail).
func checkReadOnce(t *testing.T, m *mockModel) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for step, s := range map[int]string{0: "beta", 3: "c1", 4: "hint:", 5: "tail-err", 7: "1041\n1042"} {
		// Read as the model does: the text, or JSON with its line breaks
		// escaped.
		if n := strings.Count(strings.ReplaceAll(m.results[step], `\n`, "\n"), s); n != 1 {
			t.Errorf("step %d (%s): the model read %q %d times: %q", step, m.script[step].tool, s, n, m.results[step])
		}
	}
}

// TestHarnessOnlyHunkGeminiCopilot: Gemini CLI and Copilot CLI with their
// own file and shell tools turned off as docs/agents.md says (Gemini's
// deny rule, Copilot's --excluded-tools): their requests offer the model
// none of them, and the scripted session runs through hunk.
func TestHarnessOnlyHunkGeminiCopilot(t *testing.T) {
	bin := installHarnesses(t)
	hunk := buildHunk(t)
	docs, err := os.ReadFile("docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	offered := func(t *testing.T, m *mockModel, own []string) {
		t.Helper()
		m.mu.Lock()
		first := slices.Clone(m.firstTools)
		m.mu.Unlock()
		if len(first) == 0 {
			t.Fatal("no request offered any tool")
		}
		for _, o := range own {
			if slices.Contains(first, o) {
				t.Errorf("the harness still offers its own %s: %v", o, first)
			}
		}
	}
	t.Run("gemini", func(t *testing.T) {
		rule := regexp.MustCompile("(?s)```toml\n(\\[\\[rule\\]\\]\ntoolName = \\[\"read_file\".*?)```").FindSubmatch(docs)
		if rule == nil {
			t.Fatal("docs/agents.md gives no ```toml deny rule for Gemini's own tools")
		}
		ws, home := harnessWorkspace(t), t.TempDir()
		m := newMockModel(t, harnessScript)
		env := geminiEnv(home, m.serve(t, m.gemini))
		os.MkdirAll(filepath.Join(home, ".gemini", "policies"), 0o755)
		os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security": {"auth": {"selectedType": "gemini-api-key"}}}`), 0o644)
		os.WriteFile(filepath.Join(home, ".gemini", "policies", "only-hunk.toml"), rule[1], 0o644)
		addHunk(t, docsShLine(t, "gemini mcp add --scope user --trust hunk hunk mcp"), bin, hunk, ws, "", "", env)
		cmd := exec.Command(filepath.Join(bin, "gemini"), "-p", "Work through the task in notes.txt.", "--model", "gemini-2.5-pro",
			"--output-format", "json", "--skip-trust")
		cmd.Dir, cmd.Env = ws, env
		log := runHarness(t, cmd)
		offered(t, m, []string{"read_file", "read_many_files", "write_file", "replace", "run_shell_command", "glob", "grep_search", "list_directory"})
		checkHarnessRun(t, m, ws, log)
	})
	t.Run("copilot", func(t *testing.T) {
		off := regexp.MustCompile(`copilot -p "…" --allow-all-tools --excluded-tools ([a-z ]+)`).FindSubmatch(docs)
		if off == nil {
			t.Fatal("docs/agents.md gives no copilot -p … --excluded-tools line")
		}
		ws, home := harnessWorkspace(t), t.TempDir()
		m := newMockModel(t, harnessScript)
		env := copilotEnv(home, m.serve(t, m.openai))
		addHunk(t, docsShLine(t, "copilot mcp add hunk -- hunk mcp"), bin, hunk, ws, "", "", env)
		excluded := strings.Fields(string(off[1]))
		cmd := exec.Command(filepath.Join(bin, "copilot"), append([]string{"-p", "Work through the task in notes.txt.", "--allow-all-tools", "--excluded-tools"}, excluded...)...)
		cmd.Dir, cmd.Env = ws, env
		log := runHarness(t, cmd)
		offered(t, m, []string{"bash", "view", "create", "edit", "grep", "glob", "task"})
		checkHarnessRun(t, m, ws, log)
	})
}
