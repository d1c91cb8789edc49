package call

// Gemini's functionCall: a part of a model's content ({"functionCall":
// {"name", "args", "id"}}), of Gemini CLI's own tools (the gemini set:
// read_file, write_file, replace) or any tool hunk declares, answered as
// the functionResponse part Gemini takes back ({"functionResponse":
// {"name", "id", "response": {"output"}}}, "error" for a failure).

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// geminiCall is a functionCall part's call.
type geminiCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id,omitempty"`
}

var geminiShape = shape{
	name:   Gemini,
	detect: func(e envelope) bool { return e.FunctionCall != nil },
	run:    gemini,
	fail:   func(e envelope, err error) any { return geminiAnswer(e, modelText(result.Failure(err, nil)), true) },
}

type geminiResponse struct {
	FunctionResponse struct {
		ID       string            `json:"id,omitempty"`
		Name     string            `json:"name"`
		Response map[string]string `json:"response"`
	} `json:"functionResponse"`
}

func geminiAnswer(e envelope, text string, failed bool) any {
	var r geminiResponse
	if e.FunctionCall != nil {
		r.FunctionResponse.ID, r.FunctionResponse.Name = e.FunctionCall.ID, e.FunctionCall.Name
	}
	key := "output"
	if failed {
		key = "error"
	}
	r.FunctionResponse.Response = map[string]string{key: text}
	return r
}

// gemini answers a functionCall: the tool of Gemini's own set by that name
// when the session serves it (never the filesystem set's read_file for
// Gemini's), else the served tool by that name.
func gemini(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	c := e.FunctionCall
	t := declared(s).Find(c.Name, "gemini")
	if t == nil {
		if err := s.Guard(c.Name); err != nil {
			return geminiAnswer(e, modelText(result.Failure(err, nil)), true), true
		}
		return geminiAnswer(e, modelText(result.Failure(result.Errorf(result.InvalidArgument, "unknown tool %q", c.Name).
			WithHint("tools: "+strings.Join(served(s), ", ")), nil)), true), true
	}
	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	r := t.Call(ctx, s, args)
	return geminiAnswer(e, modelText(r), r.IsError), r.IsError
}
