package execrun

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
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
	// OpID is the history's id of what a recorded command changed.
	OpID string `json:"opId,omitempty" jsonschema:"with exec --record: the id in the history of what the command changed (hunk undo takes it back)"`
}

// Reported is a run's report: its text for a model (output, what stopped
// it, the hint, the exit code), its facts, and what ended it early (Code
// and Note: a timeout, an interrupt, the memory limit).
type Reported struct {
	Text    string
	Details *Details
	Note    string
	Code    result.Code
	// StartNote is why the command could not start, as a shell says it
	// (it is in Text and Details.Stderr already).
	StartNote string
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
	}
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
	if note != "" {
		b.WriteString(note + "\n")
	}
	if hint != "" {
		b.WriteString("hint: " + hint + "\n")
	}
	fmt.Fprintf(&b, "Exit code: %d", r.ExitCode)
	return Reported{Text: b.String(), Details: details, Note: note, Code: code, StartNote: startNote}
}

// seconds formats d as the contract's "N seconds" ("1 second").
func seconds(d time.Duration) string {
	n := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if n == "1" {
		return n + " second"
	}
	return n + " seconds"
}
