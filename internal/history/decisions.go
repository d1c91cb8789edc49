package history

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// The decisions of the person's rules — a command rule's allow, deny or
// ask and the person's answer, a tool not served — one JSON line each in
// the workspace's history store, out of every sandbox's reach (hunk log
// --decisions). A line names the rule, the tool and a command's program,
// never a call's arguments or a file's text. The file is bounded: past
// maxDecisions bytes it becomes decisions.1.jsonl (the one before it
// dropped) and a new one begins.

// Decision is one decision of the person's rules.
type Decision struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session,omitempty"`
	Tool     string    `json:"tool"`              // the tool or command decided: exec, write, ...
	Decision string    `json:"decision"`          // allowed, denied, approved, declined, unconfirmed, disabled
	By       string    `json:"by"`                // the rule and where it is set, the default, the tool selection
	How      string    `json:"how,omitempty"`     // how the person was asked: terminal, elicitation, --yes
	Program  string    `json:"program,omitempty"` // the program a command rule decided (its name)
	Reason   string    `json:"reason,omitempty"`  // what could not be known before the run
}

// The decisions' values.
const (
	Allowed     = "allowed"
	Denied      = "denied"
	Approved    = "approved"
	Declined    = "declined"
	Unconfirmed = "unconfirmed" // asked, with no way to ask a person
	Disabled    = "disabled"
)

const (
	decisionsFile = "decisions.jsonl"
	maxDecisions  = 1 << 20
)

// Decided appends d to the decisions (its time set now when zero).
func (s *Store) Decided(d Decision) error {
	if d.Time.IsZero() {
		d.Time = time.Now().UTC().Truncate(time.Millisecond)
	}
	line, err := json.Marshal(d)
	if err != nil {
		return err
	}
	p := filepath.Join(s.dir, decisionsFile)
	if fi, err := os.Lstat(p); err == nil && fi.Size() > maxDecisions {
		// Rotated under the history's lock, the size seen again there: two
		// runs rotating at once would drop the older file's decisions.
		if unlock, err := s.lock(); err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.Size() > maxDecisions {
				_ = os.Rename(p, filepath.Join(s.dir, "decisions.1.jsonl"))
			}
			unlock()
		}
	}
	f, err := openFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n')) // one write: lines of several processes never mix
	return err
}

// Decisions are the decisions kept, oldest first; lines that do not read
// (a torn last line) are passed over.
func (s *Store) Decisions() ([]Decision, error) {
	var out []Decision
	for _, name := range []string{"decisions.1.jsonl", decisionsFile} {
		b, err := readFile(filepath.Join(s.dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return out, err
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			var d Decision
			if len(l) > 0 && json.Unmarshal(l, &d) == nil {
				out = append(out, d)
			}
		}
	}
	return out, nil
}
