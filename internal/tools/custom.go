package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// Custom tools are the person's own (tools.custom in the config): a name,
// a description, a JSON Schema of the parameters and an argv template. A
// call's arguments are validated against the schema before anything runs,
// then put into whole elements of the argv — never into a shell string —
// and the command runs as exec's does: the session's sandbox, its command
// rules, its confirmation. confirm makes every call need a person's yes.

// CustomDef is one custom tool as the config gives it.
type CustomDef struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments (an object's).
	Parameters json.RawMessage
	// Argv is the command: literal words, and "{NAME}" elements that are
	// the parameter NAME's value (an array's values, several elements; an
	// optional parameter left out, none).
	Argv []string
	// Confirm: every call needs a person's yes, whatever the command
	// rules say; Dangerous marks it destructive for the clients.
	Confirm, Dangerous bool
	// Timeout bounds a call's command (0: the session's exec timeout).
	Timeout time.Duration
	// Source is where it is set (the config file's line).
	Source string
}

var customName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)
var placeholder = regexp.MustCompile(`^\{([a-zA-Z_][a-zA-Z0-9_]*)\}$`)
var validating = regexp.MustCompile(`validating /properties/([^:]+): `)
var inside = regexp.MustCompile(`\{[a-zA-Z_][a-zA-Z0-9_]*\}`) // a parameter inside a word: refused

// Custom builds the custom tools, refusing a definition that cannot work:
// a name of hunk's own tools or given twice, a schema that is not an
// object's or does not compile, an argv naming an undeclared parameter.
func Custom(defs []CustomDef) (Set, error) {
	var set Set
	for _, d := range defs {
		bad := func(format string, a ...any) error {
			return result.Usagef("tools.custom %q (%s): %s", d.Name, d.Source, fmt.Sprintf(format, a...))
		}
		switch {
		case !customName.MatchString(d.Name):
			return nil, bad("a name is a letter, then letters, digits, _ or - (64 at most)")
		case isTool(d.Name) || set.Lookup(d.Name) != nil:
			return nil, bad("the name is taken (%s)", "a tool of hunk's, or a custom tool before it")
		case strings.TrimSpace(d.Description) == "":
			return nil, bad("a description is needed: it is what the model reads to choose the tool")
		case len(d.Argv) == 0:
			return nil, bad("argv is needed: the command, as a list of words")
		}
		params := d.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		var schema jsonschema.Schema
		if err := json.Unmarshal(params, &schema); err != nil {
			return nil, bad("parameters is not a JSON Schema: %v", err)
		}
		if schema.Type != "object" {
			return nil, bad(`parameters must be an object's schema ("type": "object")`)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			return nil, bad("parameters: %v", err)
		}
		for _, w := range d.Argv {
			if m := placeholder.FindStringSubmatch(w); m != nil && schema.Properties[m[1]] == nil {
				return nil, bad("argv names {%s}, which parameters does not declare", m[1])
			} else if m == nil && inside.MatchString(w) {
				return nil, bad("argv element %q: a parameter is a whole element, {NAME}, never part of one", w)
			}
		}
		def := d
		set = append(set, &Tool{
			Name: d.Name, Title: d.Name, Description: d.Description,
			Input: &schema, Output: output(detailsOf[execrun.ToolDetails]()),
			Destructive: d.Dangerous || d.Confirm, command: true, set: "custom",
			run: func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
				return def.call(ctx, s, resolved, args)
			},
		})
	}
	return set, nil
}

// call validates args, makes the argv and runs it as exec.
func (d CustomDef) call(ctx context.Context, s *Session, schema *jsonschema.Resolved, args json.RawMessage) (*ops.Output, error) {
	var in map[string]any
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &in); err != nil || in == nil {
		return nil, result.Errorf(result.InvalidArgument, "%s: the arguments are not a JSON object", d.Name)
	}
	if err := schema.Validate(in); err != nil {
		msg := strings.ReplaceAll(err.Error(), "validating root: ", "")
		msg = validating.ReplaceAllString(msg, `argument "$1": `)
		return nil, result.Errorf(result.InvalidArgument, "%s: %s; nothing was run", d.Name, msg).
			WithHint("the parameters are as the tool's schema declares: " + strings.Join(slices.Sorted(maps.Keys(schema.Schema().Properties)), ", "))
	}
	var argv []string
	for _, w := range d.Argv {
		m := placeholder.FindStringSubmatch(w)
		if m == nil {
			argv = append(argv, w)
			continue
		}
		vals, err := words(in[m[1]])
		if err != nil {
			return nil, result.Errorf(result.InvalidArgument, "%s: parameter %s: %v", d.Name, m[1], err)
		}
		argv = append(argv, vals...)
	}
	cs := *s
	if d.Confirm {
		// Every call asks: an ask rule for this very command, over the
		// person's rules (deny still wins).
		rs := &cmdrule.Rules{}
		if s.Exec.Rules != nil {
			*rs = *s.Exec.Rules
		}
		rs.List = append(slices.Clone(rs.List), cmdrule.Rule{Decision: cmdrule.Ask, Prefix: []string{argv[0]}, Source: "tools.custom " + d.Name + " confirm, " + d.Source})
		cs.Exec.Rules = rs
	}
	in2 := ExecInput{Argv: argv}
	if d.Timeout > 0 && s.Timeouts[d.Name] == 0 { // tools.timeout.NAME wins
		cs.Exec.Timeout = d.Timeout
	}
	out, det, err := cs.RunExec(ctx, in2)
	if err == nil {
		out.Details = det.Tool()
	}
	return out, err
}

// words are a parameter's value as argv elements: a string as it is, a
// number or boolean as JSON writes it, an array's values each; nil (left
// out) none.
func words(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case bool:
		return []string{strconv.FormatBool(v)}, nil
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}, nil
	case []any:
		var out []string
		for _, e := range v {
			w, err := words(e)
			if err != nil || len(w) != 1 {
				return nil, fmt.Errorf("an array's values must be strings, numbers or booleans")
			}
			out = append(out, w...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("an object cannot be an argument of a command")
}
