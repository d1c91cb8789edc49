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
	Usage     bool  // a command-line usage error: exit 2
	Exit      int   // a specific exit code (exec: 124, 125, ...); 0 means "from Code"
	Err       error // the underlying cause, if any
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
	}
	return 1
}

// Content is one block of model-facing content.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
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
}

// Success builds a successful result with one text block.
func Success(text string, details any) ToolResult {
	return ToolResult{Content: []Content{Text(text)}, Details: details}
}

// Failure builds a failed result from err. details, when a map, is merged with
// the error's own Details; otherwise the error's Details are used when present.
func Failure(err error, details any) ToolResult {
	e := As(err)
	text := e.Msg
	for _, h := range e.Hints {
		text += "\nhint: " + h
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

// Human renders an error for stderr: "hunk: error: msg" then "hunk: hint: h" lines.
// Multi-line messages keep their extra lines as they are.
func Human(prog string, err error) string {
	e := As(err)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: error: %s\n", prog, e.Msg)
	for _, h := range e.Hints {
		fmt.Fprintf(&b, "%s: hint: %s\n", prog, h)
	}
	return b.String()
}
