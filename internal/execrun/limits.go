// Package execrun is exec's engine around the sandbox: the spec of one
// run assembled from the person's settings (Limits) and a call's command —
// host paths, build caches, the offline environment, the path policy's
// mounts and placeholders, hunk's own state hidden — the record of what a
// recorded command changed (the history's scan before and after), and the
// hints a failed run's output earns. The sandbox runs it; ops asks and
// renders.
package execrun

import (
	"os"
	"time"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/egress"
)

// Limits are exec's settings: the driver, what the command may reach and
// its limits. The person running hunk sets it — flags, environment and the
// configuration file, gathered in one place by the command line — and every
// front-end carries it whole: `hunk exec`, and the session `hunk mcp` and
// `hunk call` run every call in, where a call sets only its command, working
// directory, environment and (within Timeout) its timeout. A new rule or
// driver option is a field here, mapped onto the sandbox's Spec in Prepare.
type Limits struct {
	Driver string
	// Timeout kills the whole process tree (0: none); for a tool call, the
	// longest it may ask for.
	Timeout  time.Duration
	Network  sandbox.Network
	ReadOnly bool
	RW, RO   []string // host paths (--rw, --ro)
	Hide     []string // host paths, beside sandbox.DefaultHidden
	Caches   bool     // the workspace's build caches (sandbox.CacheEnv)
	GitWrite bool     // let the command change the workspace's .git (sandbox.ProtectedPaths)
	// Record makes what the command changes in the workspace one operation
	// of the history (record.go), so that hunk undo takes it back.
	Record bool
	Memory int64
	Pids   int
	CPUs   float64
	// MaxOutput bounds each captured stream (0: all).
	MaxOutput int64
	// Shown bounds what a result's text shows a model of each stream,
	// head and tail (0: DefaultShown; negative: all); the rest is kept
	// for the read tool (ForModel). For a tool call, the most it may ask.
	Shown int64
	// Docker only.
	Image    string
	Pull     bool
	KeepWarm bool
	Idle     time.Duration
	// Rules are the person's command rules (nil: every command allowed);
	// Yes is the person's yes to a command an ask rule names (hunk exec
	// --yes; never a tool call's). Confirm, when set, asks the person
	// (a terminal's prompt, an MCP client's elicitation) and says whether
	// they said yes; without it an ask is CONFIRMATION_REQUIRED.
	Rules     *cmdrule.Rules
	Yes       bool
	Confirm   func(Plan) (bool, error) `json:"-"`
	ConfirmBy string                   // how Confirm asks (terminal, elicitation), for the audit trail
	// Decided, when set, is told every decision of the rules as it goes
	// to the audit trail (hunk serve's access log).
	Decided func(history.Decision) `json:"-"`
}

// EnvAllowList are the variables of hunk's environment a command gets.
var EnvAllowList = []string{"PATH", "HOME", "LANG", "TERM"}

// DefaultPath is the command's PATH when hunk has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// CommandEnv is the command's environment: the allow-list from hunk's, then extra.
func CommandEnv(extra []string) []string {
	var env []string
	for _, k := range EnvAllowList {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		} else if k == "PATH" {
			env = append(env, "PATH="+DefaultPath)
		}
	}
	return append(env, extra...)
}

// Check refuses limits no run can have.
func (l Limits) Check() error {
	switch {
	case l.Timeout < 0:
		return result.Usagef("the timeout must not be negative")
	case l.Pids < 0:
		return result.Usagef("--pids must not be negative")
	case l.CPUs < 0:
		return result.Usagef("--cpus must not be negative")
	case l.Network.Host && (len(l.Network.Allow) > 0 || len(l.Network.Deny) > 0):
		return result.Usagef("--network gives the command the whole network; --allow-host and --deny-host narrow it to named hosts: give one or the other").
			WithHint("drop --network to keep only the allowed hosts (config exec.network.allow)")
	case len(l.Network.Deny) > 0 && len(l.Network.Allow) == 0:
		return result.Usagef("--deny-host needs --allow-host: without an allowlist the command has no network to deny from").
			WithHint("--allow-host '*' allows every public host but the denied ones")
	}
	if _, err := egress.Parse(l.Network.Allow, l.Network.Deny); err != nil {
		return result.Usagef("%v", err).WithHint("patterns: example.org, *.example.org, example.org:8443, 10.1.2.3, 10.0.0.0/8, [::1]:8080, *")
	}
	return nil
}
