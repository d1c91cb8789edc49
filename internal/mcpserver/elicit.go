package mcpserver

// A person's yes through the client: when a command rule asks about an
// exec call, and the client declared elicitation (legacy eras, on a
// connection the server can send requests on), the server asks it with
// elicitation/create — the client shows the person a form — and runs the
// command only on their yes. The model cannot answer it: the request goes
// to the client, not into the conversation.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/result"
)

// The answers of the form.
const (
	allowOnce    = "allow once"
	allowSession = "allow for this session"
	denyIt       = "deny"
)

// confirmWait bounds how long a call waits for the person's answer.
const confirmWait = 10 * time.Minute

// confirm asks the person, through the client, whether the plan may run.
func (c *conn) confirm(ctx context.Context, p execrun.Plan) (bool, error) {
	return c.confirmOn(ctx, c.send, p)
}

// confirmOn is confirm with the request sent on send.
func (c *conn) confirmOn(ctx context.Context, send func(any), p execrun.Plan) (bool, error) {
	key := p.Key
	c.mu.Lock()
	if c.allowed[key] {
		c.mu.Unlock()
		return true, nil
	}
	c.mu.Unlock()
	params := form("hunk: a command rule asks for your yes before this runs:\n"+p.Text(), "Run it?",
		"allow once runs this call; allow for this session runs it, and every command the same rule asks about, without asking again on this connection",
		allowOnce, allowSession, denyIt)
	ctx, cancel := context.WithTimeout(ctx, confirmWait)
	defer cancel()
	m, err := c.requestOn(ctx, send, "elicitation/create", params)
	if err != nil {
		return false, result.Errorf(result.ConfirmationRequired, "exec: %q needs a person's yes, and the client did not ask them (%v); the command was not run", p.Command, err).
			WithHint("ask the user to run it themselves (hunk exec --yes), or to allow it with an allow rule in hunk's config")
	}
	switch decision(m.Result) { // "": decline, cancel, or an answer hunk cannot read: no
	case allowSession:
		c.mu.Lock()
		c.allowed[key] = true
		c.mu.Unlock()
		return true, nil
	case allowOnce:
		return true, nil
	}
	return false, nil
}

// confirmWrite asks the person, through the client, whether a change a
// write.ask rule names may be made (text: its files, rules and diff). Each
// change is its own: there is no yes for the session.
func (c *conn) confirmWrite(ctx context.Context, text, _ string) (bool, error) {
	return c.confirmWriteOn(ctx, c.send, text)
}

// confirmWriteOn is confirmWrite with the request sent on send.
func (c *conn) confirmWriteOn(ctx context.Context, send func(any), text string) (bool, error) {
	params := form("hunk: a write.ask rule asks for your yes before this change is made:\n"+text, "Make it?",
		"allow once makes this change; deny refuses it", allowOnce, denyIt)
	ctx, cancel := context.WithTimeout(ctx, confirmWait)
	defer cancel()
	m, err := c.requestOn(ctx, send, "elicitation/create", params)
	if err != nil {
		return false, result.Errorf(result.ConfirmationRequired, "the change needs a person's yes, and the client did not ask them (%v); nothing was written", err)
	}
	return decision(m.Result) == allowOnce, nil
}

// form is an elicitation's params: message, and one choice among answers
// (titled, described) the person picks.
func form(message, title, description string, answers ...string) map[string]any {
	return map[string]any{
		"message": message,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{"decision": map[string]any{
				"type": "string", "title": title, "enum": answers, "description": description,
			}},
			"required": []string{"decision"},
		},
	}
}

// decision is the answer an elicitation result accepted ("" for a decline,
// a cancel, or an answer hunk cannot read).
func decision(raw json.RawMessage) string {
	var res struct {
		Action  string `json:"action"`
		Content struct {
			Decision string `json:"decision"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Action != "accept" {
		return ""
	}
	return res.Content.Decision
}
