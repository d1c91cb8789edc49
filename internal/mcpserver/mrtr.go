package mcpserver

// A person's yes in the 2026-07-28 era. The era has no requests from the
// server to the client (multi round-trip requests instead): a call a rule
// asks about, from a client whose request declares elicitation, answers
// resultType "input_required" with the form in inputRequests and a
// requestState; the client asks the person and sends the same call again
// with their answer in inputResponses and the requestState as it was.
// Nothing is stored, so it works behind a stateless router: the state is
// sealed (HMAC-SHA256 under a key this process made) to the tool, a digest
// of the call's arguments, the digest of the plan the person was shown, and
// an expiry. A state hunk did not seal, for another call, or expired is
// refused, and an answer for another plan (a file changed since) is asked
// again.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/result"
)

// sealKey seals requestState: made once per process, on the first seal
// or unseal (never at start-up of a command that asks no one).
var sealKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
})

const (
	confirmInput = "hunk_confirm" // the inputRequests key of the person's yes
	stateTTL     = 10 * time.Minute
)

// sealed is what a requestState carries.
type sealed struct {
	Tool    string `json:"t"`
	Args    string `json:"a"` // argsDigest of the call
	Plan    string `json:"p"` // the digest of the plan asked about
	Expires int64  `json:"e"` // Unix seconds
}

func seal(s sealed) string {
	b, _ := json.Marshal(s)
	m := hmac.New(sha256.New, sealKey())
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// unseal is the state a requestState carries, if hunk sealed it and it has
// not expired.
func unseal(state string, now time.Time) (sealed, bool) {
	body, sig, ok := strings.Cut(state, ".")
	enc := base64.RawURLEncoding.Strict() // one spelling of each state
	b, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil {
		return sealed{}, false
	}
	m := hmac.New(sha256.New, sealKey())
	m.Write(b)
	var s sealed
	if !hmac.Equal(mac, m.Sum(nil)) || json.Unmarshal(b, &s) != nil || now.Unix() >= s.Expires {
		return sealed{}, false
	}
	return s, true
}

// argsDigest names a call's arguments, whitespace aside.
func argsDigest(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Write(args)
	}
	h := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(h[:])
}

// roundTrip is one stateless tools/call's part in asking the person.
type roundTrip struct {
	tool, args string
	answer     json.RawMessage // inputResponses' answer to the form
	state      *sealed         // the requestState, verified
	bad        bool            // a requestState came that hunk did not seal for this call, or it expired
	mu         sync.Mutex
	need       *InputRequired // the form to send, once a rule asked
}

// newRoundTrip is the call's round trip when its request declares
// elicitation (nil otherwise: the call gets CONFIRMATION_REQUIRED).
func newRoundTrip(tool string, p *callParams, now time.Time) *roundTrip {
	if el := p.Meta.Capabilities["elicitation"]; len(el) == 0 || string(el) == "null" {
		return nil
	}
	rt := &roundTrip{tool: tool, args: argsDigest(p.Arguments), answer: p.InputResponses[confirmInput]}
	if p.RequestState != nil {
		s, ok := unseal(*p.RequestState, now)
		if rt.bad = !ok || s.Tool != tool || s.Args != rt.args; !rt.bad {
			rt.state = &s
		}
	}
	return rt
}

// ask is the person's answer to the plan of digest, shown as message: the
// answer the retry carries when its state was sealed to this plan, else the
// form to send (need) and an error that ends the call before anything of
// it is done.
func (rt *roundTrip) ask(message, title, digest string) (bool, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.bad {
		return false, result.Errorf(result.InvalidArgument, "the requestState is not one hunk sealed for this call, or it expired; nothing was done").
			WithHint("make the call again without inputResponses and requestState: the person is asked anew")
	}
	if rt.state != nil && rt.state.Plan == digest && len(rt.answer) > 0 {
		return decision(rt.answer) == allowOnce, nil
	}
	params := form(message, title, "allow once goes ahead with this call; deny refuses it", allowOnce, denyIt)
	rt.need = &InputRequired{
		InputRequests: map[string]any{confirmInput: map[string]any{"method": "elicitation/create", "params": params}},
		RequestState:  seal(sealed{Tool: rt.tool, Args: rt.args, Plan: digest, Expires: time.Now().Add(stateTTL).Unix()}),
	}
	return false, result.Errorf(result.Declined, "waiting for the person's answer") // replaced by need
}

func (rt *roundTrip) confirm(_ context.Context, p execrun.Plan) (bool, error) {
	return rt.ask("hunk: a command rule asks for your yes before this runs:\n"+p.Text(), "Run it?", p.Digest)
}

func (rt *roundTrip) confirmWrite(_ context.Context, text, digest string) (bool, error) {
	return rt.ask("hunk: a write.ask rule asks for your yes before this change is made:\n"+text, "Make it?", digest)
}

// needed is the input_required result to send, when the call asked.
func (rt *roundTrip) needed() *InputRequired {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.need
}

// InputRequired answers a stateless call that needs the person's yes.
type InputRequired struct {
	Meta          map[string]any `json:"_meta"`
	ResultType    string         `json:"resultType"`
	InputRequests map[string]any `json:"inputRequests"`
	RequestState  string         `json:"requestState"`
}

func (r *InputRequired) complete(info Implementation) {
	r.ResultType, r.Meta = "input_required", map[string]any{metaServerInfo: info}
}
