// Package result owns the one shape every hunk command reports in: the JSON
// tool result an agent harness feeds back to a model, the error codes of the
// contract, typed errors that carry their code, place and hints, and the single
// table that maps an error to a process exit code.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// Code is one of the error codes of the contract (SPEC "Tool result").
type Code string

// The error codes of the contract.
const (
	InvalidArgument    Code = "INVALID_ARGUMENT"
	InvalidPatch       Code = "INVALID_PATCH"
	NotFound           Code = "NOT_FOUND"
	NoMatch            Code = "NO_MATCH"
	Ambiguous          Code = "AMBIGUOUS"
	AlreadyExists      Code = "ALREADY_EXISTS"
	Stale              Code = "STALE"
	OutsideWorkspace   Code = "OUTSIDE_WORKSPACE"
	BinaryFile         Code = "BINARY_FILE"
	NotUTF8            Code = "NOT_UTF8"
	TooLarge           Code = "TOO_LARGE"
	IsDirectory        Code = "IS_DIRECTORY"
	Timeout            Code = "TIMEOUT"
	SandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	LimitUnenforceable Code = "LIMIT_UNENFORCEABLE"
	IOError            Code = "IO_ERROR"
	// Interrupted: hunk exec was interrupted (SIGINT, SIGTERM, SIGHUP) and
	// stopped the command; an addition to the contract's list.
	Interrupted Code = "INTERRUPTED"
	// OutOfMemory: hunk exec's command was killed for --memory; an
	// addition to the contract's list.
	OutOfMemory Code = "OUT_OF_MEMORY"
	// Denied: the path policy (--deny-read, --deny-write, --allow-write)
	// refuses the path; nothing was read or written.
	Denied Code = "DENIED"
	// LazyEdit: a replacement holds a placeholder comment ("... existing
	// code ...") in place of lines it leaves out; nothing was written.
	LazyEdit Code = "LAZY_EDIT"
	// Conflict: apply-patch --3way merged a change with conflicts; the
	// files were written, the conflicts between markers (git apply
	// --3way's exit 1).
	Conflict Code = "CONFLICT"
	// ToolDisabled: a tool call of a tool hunk has but the person running
	// it does not serve (--tools, tools.disable); nothing ran.
	ToolDisabled Code = "TOOL_DISABLED"
	// ConfirmationRequired: a command rule asks for a person's yes, and
	// none was given; nothing ran (exit 3).
	ConfirmationRequired Code = "CONFIRMATION_REQUIRED"
	// Declined: the person asked said no (or gave no answer in time);
	// nothing ran.
	Declined Code = "DECLINED"
	// CheckFailed: a change's check (--verify) failed, and the change
	// was taken back (exit 1).
	CheckFailed Code = "CHECK_FAILED"
)

// Error is the typed error every engine returns. Msg is the complete sentence
// shown after "hunk: error: "; Hints are shown as "hunk: hint: " lines and
// appended to the model-facing content in JSON mode.
type Error struct {
	Code    Code
	Msg     string
	Hints   []string
	Details map[string]any // merged into the JSON result's details
	// Place: the file (a workspace name), the chunk of a patch (1-based)
	// and the line of the patch text it starts on; zero when not known.
	// Emitted into details as path, chunk and patchLine.
	Path      string
	Chunk     int
	PatchLine int
	// Source names the input PatchLine counts in (the patch file, or
	// "<stdin>"), set by the command that read it; "" when unnamed.
	Source string
	// Also are the further failures reported with this one (every chunk
	// and file of a patch that failed), each with its own place and hints.
	Also  []*Error
	Usage bool  // a command-line usage error: exit 2
	Exit  int   // a specific exit code (exec: 124, 125, ...); 0 means "from Code"
	Err   error // the underlying cause, if any
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Usagef returns a usage error (exit 2, INVALID_ARGUMENT).
func Usagef(format string, args ...any) *Error {
	return &Error{Code: InvalidArgument, Msg: fmt.Sprintf(format, args...), Usage: true}
}

// Wrap returns an *Error with the given code whose message is "msg: cause".
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Msg: msg + ": " + err.Error(), Err: err}
}

// WithHint appends hints and returns e, for chaining.
func (e *Error) WithHint(h ...string) *Error {
	e.Hints = append(e.Hints, h...)
	return e
}

// WithDetail sets one details key and returns e, for chaining.
func (e *Error) WithDetail(k string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[k] = v
	return e
}

// At sets the file the error is about.
func (e *Error) At(path string) *Error {
	e.Path = path
	return e
}

// AtLine sets the patch line the failure is at.
func (e *Error) AtLine(patchLine int) *Error {
	e.PatchLine = patchLine
	return e
}

// InChunk sets the chunk (1-based) and the patch line it starts on (0: not known).
func (e *Error) InChunk(chunk, patchLine int) *Error {
	e.Chunk, e.PatchLine = chunk, patchLine
	return e
}

// AllDetails is Details with the place fields (path, chunk, patchLine) in it.
func (e *Error) AllDetails() map[string]any {
	m := make(map[string]any, len(e.Details)+3)
	for k, v := range e.Details {
		m[k] = v
	}
	if e.Path != "" {
		m["path"] = e.Path
	}
	if e.Chunk != 0 {
		m["chunk"] = e.Chunk
	}
	if e.PatchLine != 0 {
		m["patchLine"] = e.PatchLine
	}
	return m
}

// As returns err as an *Error; errors of other types become IO_ERROR (or
// NOT_FOUND / ALREADY_EXISTS / IS_DIRECTORY when the cause says so).
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code := IOError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = NotFound
	case errors.Is(err, fs.ErrExist):
		code = AlreadyExists
	}
	return &Error{Code: code, Msg: err.Error(), Err: err}
}

// SilentExit ends hunk with Code and prints nothing more: what had to be
// said was said (exec's command's own output and exit code, or a result
// already printed).
type SilentExit struct{ Code int }

func (e *SilentExit) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the one table from an error to the process exit code (SPEC
// "Exit codes"): nil is 0, usage errors and INVALID_ARGUMENT 2, an explicit
// Exit wins, the sandbox codes of exec map to 124/125, everything else is 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var se *SilentExit
	if errors.As(err, &se) {
		return se.Code
	}
	e := As(err)
	switch {
	case e.Exit != 0:
		return e.Exit
	case e.Code == Interrupted:
		return 130 // as a shell reports a command ended by SIGINT
	case e.Usage, e.Code == InvalidArgument:
		return 2
	case e.Code == Timeout:
		return 124
	case e.Code == SandboxUnavailable, e.Code == LimitUnenforceable:
		return 125
	case e.Code == ConfirmationRequired:
		return 3
	}
	return 1
}

// Content is one block of model-facing content.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	// URI names an embedded resource (Type "resource"; Data is its blob).
	URI string `json:"uri,omitempty"`
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Image returns an image content block holding base64 data.
func Image(mime, b64 string) Content { return Content{Type: "image", MimeType: mime, Data: b64} }

// ToolResult is the document `--json` prints: exactly one, on success and on failure.
type ToolResult struct {
	IsError bool      `json:"isError,omitempty"`
	Error   string    `json:"error,omitempty"`
	Code    Code      `json:"code,omitempty"`
	Content []Content `json:"content"`
	Details any       `json:"details,omitempty"`
	// Ignored are the call's arguments the tool does not know and passed
	// over (the filesystem tools, as the reference server does).
	Ignored []string `json:"ignoredArguments,omitempty"`
}

// Success builds a successful result with one text block.
func Success(text string, details any) ToolResult {
	return ToolResult{Content: []Content{Text(text)}, Details: details}
}

// SetSource names the input the patch lines of e and of every failure
// reported with it count in.
func (e *Error) SetSource(name string) {
	e.Source = name
	for _, a := range e.Also {
		a.Source = name
	}
}

// place is where a failure is: "SOURCE:LINE" (as compilers and git name a
// place), "patch line N" without a source, "" when the line is not known.
func (e *Error) place() string {
	switch {
	case e.PatchLine == 0:
		return ""
	case e.Source != "":
		return fmt.Sprintf("%s:%d", e.Source, e.PatchLine)
	}
	return fmt.Sprintf("patch line %d", e.PatchLine)
}

// failures is e and the failures reported with it.
func (e *Error) failures() []*Error { return append([]*Error{e}, e.Also...) }

// Failure builds a failed result from err. details, when a map, is merged with
// the error's own Details; otherwise the error's Details are used when present.
// A failure reported with others is one block each, with its place and hints.
func Failure(err error, details any) ToolResult {
	e := As(err)
	var text string
	if len(e.Also) == 0 {
		text = e.Msg
		for _, h := range e.Hints {
			text += "\nhint: " + h
		}
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "%d failures; nothing was changed.", len(e.Also)+1)
		for _, f := range e.failures() {
			b.WriteString("\n\n")
			if p := f.place(); p != "" {
				b.WriteString(p + ": ")
			}
			b.WriteString(f.Msg)
			for _, h := range f.Hints {
				b.WriteString("\nhint: " + h)
			}
		}
		text = b.String()
	}
	r := ToolResult{IsError: true, Error: e.Msg, Code: e.Code, Content: []Content{Text(text)}, Details: details}
	if all := e.AllDetails(); len(all) > 0 {
		m := map[string]any{}
		if dm, ok := details.(map[string]any); ok {
			for k, v := range dm {
				m[k] = v
			}
		}
		for k, v := range all {
			m[k] = v
		}
		r.Details = m
	}
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	return r
}

// Encode writes r as one JSON document followed by a newline. HTML escaping is
// off so that code comes back byte for byte readable.
func (r ToolResult) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// Human renders an error for stderr: "hunk: error: msg" then "hunk: hint: h"
// lines; a failure with a place in a named patch reads "hunk: error:
// fix.patch:12: msg". Several failures are one such block each, then a
// line that counts them. Multi-line messages keep their extra lines as
// they are.
func Human(prog string, err error) string {
	e := As(err)
	var b strings.Builder
	for _, f := range e.failures() {
		msg := f.Msg
		if p := f.place(); p != "" && f.Source != "" {
			msg = p + ": " + msg
		}
		fmt.Fprintf(&b, "%s: error: %s\n", prog, msg)
		for _, h := range f.Hints {
			fmt.Fprintf(&b, "%s: hint: %s\n", prog, h)
		}
	}
	if len(e.Also) > 0 {
		fmt.Fprintf(&b, "%s: error: %d failures; nothing was changed\n", prog, len(e.Also)+1)
	}
	return b.String()
}

// Count is n and noun, in the plural unless n is 1: "1 block", "2 blocks"
// (every noun hunk counts takes an s).
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
