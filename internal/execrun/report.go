package execrun

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// Details are a run's facts, as exec reports them.
type Details struct {
	ExitCode   int    `json:"exitCode" jsonschema:"the command's exit code"`
	Stdout     string `json:"stdout" jsonschema:"captured standard output"`
	Stderr     string `json:"stderr" jsonschema:"captured standard error"`
	TimedOut   bool   `json:"timedOut" jsonschema:"killed at the timeout"`
	Truncated  bool   `json:"truncated" jsonschema:"output was cut in the middle (head and tail kept)"`
	DurationMs int64  `json:"durationMs" jsonschema:"run time in milliseconds"`
	Driver     string `json:"driver" jsonschema:"the sandbox driver that ran it"`
	// Fallback names the drivers auto tried first that could not start
	// here, and why.
	Fallback  string `json:"fallback,omitempty" jsonschema:"under --driver auto: the drivers tried first that could not start the sandbox, and why"`
	OOMKilled bool   `json:"oomKilled,omitempty" jsonschema:"a process was killed at the memory limit"`
	// NewRepository lists what a git repository the command created would
	// run outside the sandbox.
	NewRepository []string `json:"newRepository,omitempty" jsonschema:"the command created a git repository whose config or hooks git would run outside the sandbox"`
	// SubRepositories are the repositories below the root the command made
	// or changed whose hooks or settings git would run (SubRepoRisks).
	SubRepositories []SubRepo `json:"subRepositories,omitempty" jsonschema:"repositories below the workspace root the command made or changed, whose hooks or settings git would run outside the sandbox"`
	// OpID is the history's id of what a recorded command changed.
	OpID string `json:"opId,omitempty" jsonschema:"with exec --record: the id in the history of what the command changed (hunk undo takes it back)"`
	// OutputID names the captured streams kept because the result's text
	// left part of them out.
	OutputID string `json:"outputId,omitempty" jsonschema:"the text left part of the output out: read it whole with read's execOutput (ID/stdout, ID/stderr)"`
	// Network is what went through the run's egress proxy.
	Network *egress.Report `json:"network,omitempty" jsonschema:"with an allowlist (--allow-host): the hosts reached and those refused, with why and the rule that would allow each, the connections and bytes through hunk's proxy"`
}

// Reported is a run's report: its text for a model (output, what stopped
// it, the hint, the exit code), its facts, and what ended it early (Code
// and Note: a timeout, an interrupt, the memory limit).
type Reported struct {
	Text    string
	Details *Details
	Note    string
	Hint    string
	Code    result.Code
	// StartNote is why the command could not start, as a shell says it
	// (it is in Text and Details.Stderr already).
	StartNote string
	// Network are the lines of the run's egress proxy (NetworkLines).
	Network []string
}

// Report is the report of a command that ran under l (in: the interrupt
// that stopped it, if any).
func Report(l Limits, r sandbox.Result, in *interrupt.Interrupted, hint string) Reported {
	var note string
	var code result.Code
	switch {
	case r.TimedOut:
		note, code = fmt.Sprintf("Command timed out after %s", seconds(l.Timeout)), result.Timeout
	case r.Interrupted && in != nil:
		note, code = fmt.Sprintf("Interrupted (%s): the command and every process it started were stopped", in.Name()), result.Interrupted
	case r.Interrupted:
		note, code = "Interrupted: the command and every process it started were stopped", result.Interrupted
	case r.OOMKilled && r.ExitCode == 137:
		note, code = fmt.Sprintf("Command killed: it exceeded the memory limit (--memory %d bytes)", l.Memory), result.OutOfMemory
	case r.OOMKilled:
		note = fmt.Sprintf("A process of the command was killed: it exceeded the memory limit (--memory %d bytes)", l.Memory)
	}
	var startNote string
	if r.NotStarted != "" {
		// Said as a shell says it, after what the command printed.
		startNote = "hunk: " + r.NotStarted + "\n"
		r.Stderr = append(r.Stderr, startNote...)
	}
	details := &Details{
		ExitCode:   r.ExitCode,
		Stdout:     string(r.Stdout),
		Stderr:     string(r.Stderr),
		TimedOut:   r.TimedOut,
		Truncated:  r.Truncated,
		DurationMs: r.Duration.Milliseconds(),
		Driver:     r.Driver,
		Fallback:   r.Fallback,
		OOMKilled:  r.OOMKilled,
		Network:    r.Network,
	}
	network := NetworkLines(r.Network)
	var b strings.Builder
	b.Write(r.Stdout)
	if len(r.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.Write(r.Stderr)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	for _, l := range network {
		b.WriteString(l + "\n")
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	if hint != "" {
		b.WriteString("hint: " + hint + "\n")
	}
	fmt.Fprintf(&b, "Exit code: %d", r.ExitCode)
	return Reported{Text: b.String(), Details: details, Note: note, Hint: hint, Code: code, StartNote: startNote, Network: network}
}

// seconds formats d as the contract's "N seconds" ("1 second").
func seconds(d time.Duration) string {
	n := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if n == "1" {
		return n + " second"
	}
	return n + " seconds"
}

// ToolDetails are a run's facts as a tool call's result carries them (MCP's
// structuredContent): Details without the streams, which the result's text
// shows cut to size (ForModel) — a harness that forwards this object gets
// the output once, bounded — and read's execOutput pages through whole.
type ToolDetails struct {
	ExitCode      int            `json:"exitCode" jsonschema:"the command's exit code"`
	StdoutBytes   int            `json:"stdoutBytes" jsonschema:"bytes of standard output captured (the text shows its head and tail)"`
	StderrBytes   int            `json:"stderrBytes" jsonschema:"bytes of standard error captured"`
	OutputID      string         `json:"outputId,omitempty" jsonschema:"the text left part of the output out: read it whole with read's execOutput (ID/stdout, ID/stderr)"`
	TimedOut      bool           `json:"timedOut" jsonschema:"killed at the timeout"`
	Truncated     bool           `json:"truncated" jsonschema:"hunk kept only the head and tail of a stream (exec.max-output)"`
	DurationMs    int64          `json:"durationMs" jsonschema:"run time in milliseconds"`
	Driver        string         `json:"driver" jsonschema:"the sandbox driver that ran it"`
	Fallback      string         `json:"fallback,omitempty" jsonschema:"under driver auto: the drivers tried first that could not start the sandbox, and why"`
	OOMKilled     bool           `json:"oomKilled,omitempty" jsonschema:"a process was killed at the memory limit"`
	NewRepository []string       `json:"newRepository,omitempty" jsonschema:"the command created a git repository whose config or hooks git would run outside the sandbox"`
	SubRepos      []SubRepo      `json:"subRepositories,omitempty" jsonschema:"repositories below the workspace root the command made or changed, whose hooks or settings git would run outside the sandbox"`
	OpID          string         `json:"opId,omitempty" jsonschema:"with record on: the id in the history of what the command changed (undo takes it back)"`
	Network       *egress.Report `json:"network,omitempty" jsonschema:"with an allowlist: the hosts reached and those refused, with why and the rule that would allow each, the connections and bytes through hunk's proxy"`
}

// Tool is d as a tool call's result carries it.
func (d *Details) Tool() *ToolDetails {
	return &ToolDetails{ExitCode: d.ExitCode, StdoutBytes: len(d.Stdout), StderrBytes: len(d.Stderr), OutputID: d.OutputID,
		TimedOut: d.TimedOut, Truncated: d.Truncated, DurationMs: d.DurationMs, Driver: d.Driver, Fallback: d.Fallback,
		OOMKilled: d.OOMKilled, NewRepository: d.NewRepository, SubRepos: d.SubRepositories, OpID: d.OpID, Network: d.Network}
}

// NetworkLines are what a model and a person read of a run's egress
// proxy: the hosts refused and not reached (Blocked), then those reached.
func NetworkLines(r *egress.Report) []string {
	lines := Blocked(r)
	if r != nil && len(r.Reached) > 0 {
		names := make([]string, len(r.Reached))
		for i, h := range r.Reached {
			names[i] = h.Host
		}
		lines = append(lines, "reached: "+strings.Join(names, ", "))
	}
	return lines
}

// Blocked are the lines of the hosts a run's proxy refused, each with the
// rule that would allow it, and of those allowed but not reached.
func Blocked(r *egress.Report) []string {
	if r == nil {
		return nil
	}
	var lines []string
	for _, b := range r.Denied {
		s := fmt.Sprintf("blocked: %s (%s)", b.Host, b.Reason)
		if b.Fix != "" {
			s += "; add --allow-host " + b.Fix
		}
		lines = append(lines, s)
	}
	for _, b := range r.Failed {
		lines = append(lines, fmt.Sprintf("not reached: %s (%s)", b.Host, b.Reason))
	}
	return lines
}
