package call

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// OpenAI Responses' shell_call (the shell tool), each command run in the
// sandbox; a call meant for a hosted container is refused.

var openAIShellShape = shape{
	name:   OpenAIShell,
	detect: func(e envelope) bool { return e.Type == "shell_call" },
	runs:   one("exec"),
	run:    openAIShell,
	fail:   shellFail,
}

func shellFail(e envelope, err error) any {
	return shellOutput{Type: "shell_call_output", CallID: e.CallID, Output: []shellResult{{Stderr: say(err), Outcome: outcome{Type: "exit", ExitCode: intp(1)}}}, Caller: e.Caller}
}

// hostedEnvironment reports whether a shell_call's environment names
// anything but the local machine — a container's type, a container_id, a
// field hunk does not know — and says what it names. Only no environment,
// or {"type": "local"} alone, runs here.
func hostedEnvironment(env map[string]json.RawMessage) (string, bool) {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		var v string
		if json.Unmarshal(env[k], &v) != nil {
			v = string(env[k])
		}
		if k == "type" && (v == "local" || v == "") {
			continue
		}
		parts = append(parts, k+" "+v)
	}
	return strings.Join(parts, ", "), len(parts) > 0
}

type shellAction struct {
	Commands        []string `json:"commands"`
	TimeoutMs       *int64   `json:"timeout_ms"`
	MaxOutputLength *int     `json:"max_output_length"`
}

type outcome struct {
	Type     string `json:"type"` // "exit" or "timeout"
	ExitCode *int   `json:"exit_code,omitempty"`
}

type shellResult struct {
	Stdout  string  `json:"stdout"`
	Stderr  string  `json:"stderr"`
	Outcome outcome `json:"outcome"`
}

type shellOutput struct {
	Type            string          `json:"type"`
	CallID          string          `json:"call_id"`
	MaxOutputLength *int            `json:"max_output_length,omitempty"`
	Output          []shellResult   `json:"output"`
	Caller          json.RawMessage `json:"caller,omitempty"`
}

func openAIShell(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	var inAction struct {
		Environment map[string]json.RawMessage `json:"environment"`
	}
	_ = json.Unmarshal(e.Action, &inAction) // the environment may come inside the action, too
	where, hosted := hostedEnvironment(e.Environment)
	if w, h := hostedEnvironment(inAction.Environment); h {
		where, hosted = w, true
	}
	if hosted {
		// Meant for a container OpenAI hosts: running it here would run it
		// somewhere the model did not mean, with other files.
		return shellFail(e, result.Errorf(result.InvalidArgument,
			"shell_call: this call is for an OpenAI-hosted environment (%s); hunk runs commands only here, in its sandbox, and ran nothing", where).
			WithHint("declare the shell tool with a local environment for hunk to answer its calls; hosted containers are answered by OpenAI")), true
	}
	var a shellAction
	if err := json.Unmarshal(e.Action, &a); err != nil || len(a.Commands) == 0 {
		return shellFail(e, result.Errorf(result.InvalidArgument, "shell_call: action must hold commands, a list of command lines")), true
	}
	in := tools.ExecInput{}
	if a.TimeoutMs != nil && *a.TimeoutMs > 0 {
		in.TimeoutSeconds = float64(*a.TimeoutMs) / 1000
	}
	res := shellOutput{Type: "shell_call_output", CallID: e.CallID, MaxOutputLength: a.MaxOutputLength, Output: []shellResult{}, Caller: e.Caller}
	failed := false
	for _, c := range a.Commands {
		in.Command = c
		out, d, err := s.RunExec(ctx, in)
		if err != nil {
			res.Output = append(res.Output, shellResult{Stderr: say(err), Outcome: outcome{Type: "exit", ExitCode: intp(result.ExitCode(err))}})
			failed = true
			break
		}
		r := shellResult{Stdout: d.Stdout, Stderr: d.Stderr, Outcome: outcome{Type: "exit", ExitCode: intp(out.ExitCode)}}
		if d.TimedOut {
			r.Outcome = outcome{Type: "timeout"}
		}
		if a.MaxOutputLength != nil && *a.MaxOutputLength >= 0 {
			r.Stdout, r.Stderr = capOutput(r.Stdout, r.Stderr, *a.MaxOutputLength)
		} else {
			// No bound asked for: each stream within what the session
			// shows a model, its head and tail, as every exec result.
			shown := int(s.Exec.Shown)
			r.Stdout = boundStream(r.Stdout, "stdout", shown)
			r.Stderr = boundStream(r.Stderr, "stderr", shown)
		}
		res.Output = append(res.Output, r)
	}
	return res, failed
}

// capOutput keeps at most n characters of stdout and stderr together:
// stdout first, then what is left for stderr; a cut stream keeps its head
// and tail.
func capOutput(stdout, stderr string, n int) (string, string) {
	cut := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		if n < 40 {
			return string(r[:n])
		}
		mark := fmt.Sprintf("\n…[%d characters cut]…\n", len(r)-n)
		keep := n - len([]rune(mark))
		if keep < 0 {
			keep = 0
		}
		return string(r[:keep/2]) + mark + string(r[len(r)-(keep-keep/2):])
	}
	stdout = cut(stdout, n)
	left := n - len([]rune(stdout))
	if left < 0 {
		left = 0
	}
	return stdout, cut(stderr, left)
}

// boundStream is a stream as is when a model may see all of it, else its
// head and tail with the shell's marker.
func boundStream(out, stream string, shown int) string {
	if b := execrun.Budget(int64(shown)); b < 0 || int64(len(out)) <= b {
		return out
	}
	return execrun.StreamText(out, stream, shown, "", execrun.ShellRefer)
}
