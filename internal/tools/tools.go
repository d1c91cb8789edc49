// Package tools defines hunk's tools once — names, descriptions, input and
// output schemas, annotations and how a call's arguments become an
// operation request — for the three places that speak to agents: the MCP
// server (hunk mcp), one-shot calls in the providers' shapes (hunk call)
// and the declarations printed for harnesses (hunk tools). None can drift
// from another, because all read this table.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/verify"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Tool is one tool an agent can call.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Input is the JSON schema of the arguments; Output the schema of the
	// structured result (a tool result's details).
	Input, Output *jsonschema.Schema
	// Annotations (MCP's hints).
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Lenient tools pass over arguments they do not know (listed in the
	// result's ignoredArguments), as the reference filesystem server does;
	// hunk's own refuse them.
	Lenient bool
	// Reference tools' structuredContent is the reference filesystem
	// server's: {"content": ...} alone (error and code added on failure).
	Reference bool

	set     string // the set the tool is of (SetDef.Name)
	command bool   // it runs a command (exec), which the sandbox confines
	// stoppable: its call can be stopped part way with nothing half-made
	// (a search; a command is killed with its process tree).
	stoppable bool
	// checks: the tool runs the configured checks itself (its verify
	// argument: apply_patch, write, edit of hunk's set); any other that
	// changes files has them run after it by Call.
	checks bool
	run    func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error)
}

// Session is what calls run against: the operations' environment and the
// exec policy the front-end was started with (never widened by a call).
type Session struct {
	Env *ops.Env
	// Exec is the policy every exec call runs under: driver, network,
	// limits, extra host paths. A call sets only the command, its working
	// directory, environment and (within Exec.Timeout) its timeout.
	Exec ops.ExecLimits
	// Ready, when set, is closed once an interrupt would reach a call's
	// command (hunk call's signal handlers are in place).
	Ready <-chan struct{}
	// Tools are the tools this session's surface serves (--tools less
	// tools.disable, for hunk mcp, hunk call, and hunk serve's /mcp and
	// /call alike); nil: every tool hunk has. A call of any shape is
	// answered only when it runs one of them (Selection.Refuse).
	Tools *Selection
	// Confirm, when set, asks the person (an MCP client's elicitation)
	// whether a command an ask rule names may run; without it the call
	// gets CONFIRMATION_REQUIRED.
	Confirm func(context.Context, execrun.Plan) (bool, error)
	// ConfirmWrite, when set, asks the person the same way whether a change
	// a write.ask rule names may be made (text: the files, rules and diff;
	// digest: what a yes covers, its files' hashes before and after).
	ConfirmWrite func(ctx context.Context, text, digest string) (bool, error)
	// Timeouts are the longest a call of each tool may run (tools.timeout
	// in the config; TimeoutTakers says which tools take one).
	Timeouts map[string]time.Duration
	// Checks are the configured checks (checks: in the config) run after
	// a change of apply_patch, write and edit (package verify).
	Checks []verify.Configured
}

// TimeoutTaker says a call of t can be given a timeout (tools.timeout):
// it can be stopped with nothing half-made. A file tool cannot — stopped
// between its files, a change would be half made — and its time is
// bounded by its size limits instead.
func (t *Tool) TimeoutTaker() bool { return t.command || t.stoppable }

// Set is a list of tools, by name.
type Set []*Tool

// Lookup finds a tool by name.
func (s Set) Lookup(name string) *Tool {
	for _, t := range s {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Names lists the tools' names.
func (s Set) Names() []string {
	names := make([]string, len(s))
	for i, t := range s {
		names[i] = t.Name
	}
	return names
}

// MayAsk says a call of the tool may wait for a person's yes: it runs a
// command (a command rule may ask) or changes files (a write.ask rule).
func (t *Tool) MayAsk() bool { return t.command || !t.ReadOnly }

// Call runs the tool with raw JSON arguments and returns its tool result,
// failures included (a bad argument is an INVALID_ARGUMENT result, never a
// crash).
func (t *Tool) Call(ctx context.Context, s *Session, args json.RawMessage) result.ToolResult {
	var ignored []string
	if t.Lenient {
		args, ignored = known(t.Input, args)
	}
	if err := s.Guard(t.Name); err != nil {
		if f := decidedHook(ctx); f != nil {
			f(history.Decision{Tool: t.Name, Decision: history.Disabled, By: "the tool selection"})
		}
		return result.Failure(err, nil)
	}
	// The call's changes are recorded in the history as this tool's.
	cs, env := *s, *s.Env
	env.Tool, cs.Env = t.Name, &env
	if g := (workspace.CallGate{Decided: decidedHook(ctx)}); s.ConfirmWrite != nil || g.Decided != nil {
		if s.ConfirmWrite != nil {
			g.Ask = func(text, digest string) (bool, error) { return s.ConfirmWrite(ctx, text, digest) }
		}
		env.Gate = &g
	}
	if d := s.Timeouts[t.Name]; d > 0 && t.TimeoutTaker() {
		if t.command && (cs.Exec.Timeout == 0 || d < cs.Exec.Timeout) {
			cs.Exec.Timeout = d // the command's own: killed with its tree, exit 124
		} else if !t.command {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	var out *ops.Output
	var err error
	if len(cs.Checks) > 0 && !t.ReadOnly && !t.command && !t.checks {
		// The configured checks after every change, whatever the tool's
		// shape (Claude Code's Edit, Gemini's replace, write_file, …).
		verify.Settle(cs.Env)
		out, err = verify.Run(ctx, cs.Env, &verify.Request{Checks: cs.Checks, Limits: cs.Exec, Exec: cs.checkExec()},
			func(e *ops.Env) (*ops.Output, error) { c := cs; c.Env = e; return t.run(ctx, &c, args) })
	} else {
		out, err = t.run(ctx, &cs, args)
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded && !t.command {
		err = result.Errorf(result.Timeout, "%s: stopped after %s (tools.timeout.%s); nothing was changed", t.Name, s.Timeouts[t.Name], t.Name).
			WithHint("narrow it (a glob, a path, a plainer pattern), or ask the person to raise tools.timeout." + t.Name)
	}
	var r result.ToolResult
	if err != nil {
		t.surfaceHints(err)
		r = result.Failure(err, nil)
	} else {
		r = out.ToolResult()
	}
	r.Ignored = ignored
	return r
}

type decidedKey struct{}

// WithDecided is ctx carrying f, told every decision of the person's rules
// that the calls made under ctx meet (hunk serve's access log).
func WithDecided(ctx context.Context, f func(history.Decision)) context.Context {
	return context.WithValue(ctx, decidedKey{}, f)
}

// decidedHook is ctx's WithDecided function (nil: none).
func decidedHook(ctx context.Context) func(history.Decision) {
	f, _ := ctx.Value(decidedKey{}).(func(history.Decision))
	return f
}

// known drops the members of args (a JSON object) that the schema does not
// declare — and of the objects in its arrays (an edits item's), as the
// reference server passes them over — and names them ("edits[0].why").
func known(schema *jsonschema.Schema, args json.RawMessage) (json.RawMessage, []string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args, nil
	}
	var ignored []string
	for k, v := range m {
		p := schema.Properties[k]
		if p == nil {
			ignored = append(ignored, k)
			delete(m, k)
			continue
		}
		var items []json.RawMessage
		if p.Items == nil || len(p.Items.Properties) == 0 || json.Unmarshal(v, &items) != nil {
			continue
		}
		changed := false
		for i, item := range items {
			kept, dropped := known(p.Items, item)
			for _, d := range dropped {
				ignored = append(ignored, fmt.Sprintf("%s[%d].%s", k, i, d))
			}
			if len(dropped) > 0 {
				items[i], changed = kept, true
			}
		}
		if changed {
			m[k], _ = json.Marshal(items)
		}
	}
	if len(ignored) == 0 {
		return args, nil
	}
	sort.Strings(ignored)
	b, _ := json.Marshal(m)
	return b, ignored
}

// Structured returns r's details as the JSON object MCP's structuredContent
// and the output schemas describe: the details, "content" — the text the
// model reads, as in the content blocks (a read's lines with their notice, a
// failure's message with its hints), since some clients forward only this
// object to the model — plus "error" and "code" on failure. A Reference
// tool's is its "content" alone, as the reference server's, and a failure
// has none (nil), as there: the model reads its text blocks.
func (t *Tool) Structured(r result.ToolResult) any {
	m := map[string]any{}
	if t.Reference {
		if r.IsError {
			return nil
		}
		var d struct {
			Content json.RawMessage `json:"content"`
		}
		if b, err := json.Marshal(r.Details); err == nil {
			_ = json.Unmarshal(b, &d)
		}
		if len(d.Content) > 0 {
			m["content"] = d.Content
		}
	} else if r.Details != nil {
		b, err := json.Marshal(r.Details)
		if err == nil {
			_ = json.Unmarshal(b, &m)
		}
		if m == nil {
			m = map[string]any{}
		}
	}
	if _, ok := m["content"]; !ok {
		var text []string
		for _, c := range r.Content {
			if c.Type == "text" {
				text = append(text, c.Text)
			}
		}
		m["content"] = strings.Join(text, "\n")
	}
	if r.IsError {
		m["error"], m["code"] = r.Error, string(r.Code)
	}
	return m
}

// runs is a tool's run for an operation taking a request R: the call's
// arguments decoded into R (required: the fields it must have), then the
// operation.
func runs[R any](tool string, op func(*ops.Env, R) (*ops.Output, error), required ...string) func(context.Context, *Session, json.RawMessage) (*ops.Output, error) {
	return func(_ context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
		var req R
		if err := decode(tool, args, &req, required...); err != nil {
			return nil, err
		}
		return op(s.Env, req)
	}
}

// decode reads args strictly into v: unknown fields and wrong types are an
// INVALID_ARGUMENT naming the field, and so is a missing required one.
func decode(tool string, args json.RawMessage, v any, required ...string) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			msg = fmt.Sprintf("argument %q must be %s, not %s", te.Field, jsonType(te.Type), te.Value)
		case strings.HasPrefix(msg, "json: unknown field "):
			msg = "unknown argument " + strings.TrimPrefix(msg, "json: unknown field ")
		}
		return result.Errorf(result.InvalidArgument, "%s: %s", tool, msg).
			WithHint("the arguments are: " + strings.Join(fieldNames(v), ", "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return result.Errorf(result.InvalidArgument, "%s: the arguments must be one JSON object", tool)
	}
	var present map[string]json.RawMessage
	_ = json.Unmarshal(args, &present)
	for _, k := range required {
		if _, ok := present[k]; !ok {
			return result.Errorf(result.InvalidArgument, "%s: missing required argument %q", tool, k).
				WithHint("the arguments are: " + strings.Join(fieldNames(v), ", "))
		}
	}
	return nil
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// fieldNames lists the JSON names of v's (a pointer to a struct) fields.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// schemaFor infers the input schema of T from its json and jsonschema tags:
// closed to unknown arguments, portable (Portable).
func schemaFor[T any]() *jsonschema.Schema {
	s := detailsOf[T]()
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s
}

// detailsOf infers the schema of T, a request or details type, made
// portable.
func detailsOf[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // a programming error in a request or details type
	}
	return Portable(s)
}

// output is the output schema of a tool whose details are of the given
// kinds (detailsOf each; read has three): their properties and a failure's
// (ops.FailureDetails), none required but "content" (a failure carries only
// some of them), plus "content", the text the model reads, and "error" and
// "code" of a failure. It is open to more properties.
func output(kinds ...*jsonschema.Schema) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: []string{"content"}}
	for _, k := range append(kinds, failureDetails()) {
		for name, p := range k.Properties {
			if _, ok := s.Properties[name]; !ok {
				s.Properties[name] = p
			}
		}
	}
	s.Properties["content"] = &jsonschema.Schema{Type: "string", Description: "the text the model reads: a read's lines with their notice, the result's message, a failure with its hints"}
	s.Properties["error"] = &jsonschema.Schema{Type: "string", Description: "on failure: what went wrong"}
	s.Properties["code"] = &jsonschema.Schema{Type: "string", Description: "on failure: hunk's error code (NO_MATCH, AMBIGUOUS, STALE, OUTSIDE_WORKSPACE, ...)"}
	return s
}

// failureDetails declares what a failure's details may carry; inferred on
// first use, not when every hunk process starts.
var failureDetails = sync.OnceValue(detailsOf[ops.FailureDetails])

// Portable rewrites s in place so that every client reads it: a nullable
// type (["null", "array"], as Go's nil slices, maps and pointers infer) is
// declared as its one other type — a tool's arguments are optional by
// leaving them out, and hunk reads a null as left out. Clients that take
// "type" as a single string (Gemini's dialect, some MCP gateways) reject the
// array form, and the MCP Inspector's --strict check warns of it.
func Portable(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if len(s.Types) > 0 {
		var kept []string
		for _, t := range s.Types {
			if t != "null" {
				kept = append(kept, t)
			}
		}
		if len(kept) == 1 {
			s.Type, s.Types = kept[0], nil
		} else {
			s.Types = kept
		}
	}
	for _, p := range s.Properties {
		Portable(p)
	}
	for _, sub := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.Not} {
		Portable(sub)
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems} {
		for _, sub := range list {
			Portable(sub)
		}
	}
	for _, d := range s.Defs {
		Portable(d)
	}
	return s
}
