package execrun

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// CheckRules decides argv — the command the sandbox would run, a shell
// line as sh -c LINE — by the person's command rules, before anything
// starts: a deny refuses it (DENIED), an ask needs the person's yes (the
// command line's --yes; else CONFIRMATION_REQUIRED, exit 3). A tool call
// can give neither: a model's yes is never a person's. The decision is
// returned for the audit trail (Decision "" when there are no rules).
//
// A yes given out of band (hunk approve) is taken from asked (nil: none),
// and an ask nothing can put to a person is left there, under the plan id
// the refusal names.
func CheckRules(c Command, asked *approval.Store, wsDir string) (history.Decision, error) {
	l, argv, sf := c.Limits, c.Argv, c.Surface
	rs := l.Rules
	if l.Network.Host || len(l.Network.Allow) > 0 || l.Driver == "none" {
		rs = rs.WithIrreversible() // what publishes asks where it can reach out
	}
	if rs.Empty() {
		return history.Decision{}, nil
	}
	v := rs.Argv(argv)
	shown := v.Command
	if shown == "" {
		shown = strings.Join(argv, " ")
	}
	by := "the default for what no rule names (exec.default " + string(rs.Default) + ")"
	d := history.Decision{Session: c.Session, Tool: "exec", Decision: history.Allowed, By: "exec.default " + string(rs.Default), Reason: v.Reason}
	if v.Rule != nil {
		by = "command rule " + v.Rule.String()
		d.By = v.Rule.String()
	} else if v.Reason != "" {
		d.By = "the command rules" // what no rule names, asked about: see Reason
	}
	if ws := strings.Fields(v.Command); len(ws) > 0 {
		d.Program = path.Base(ws[0])
	} else if len(argv) > 0 {
		d.Program = path.Base(argv[0])
	}
	switch v.Decision {
	case cmdrule.Deny:
		d.Decision = history.Denied
		e := result.Errorf(result.Denied, "exec: %q is denied by %s; the command was not run", shown, by)
		if v.Rule != nil && v.Rule.Why != "" {
			e = e.WithHint(v.Rule.Why)
		}
		return d, e.WithHint(sf.rulesHint(argv))
	case cmdrule.Ask:
		if l.Yes {
			d.Decision, d.How = history.Approved, "--yes"
			return d, nil
		}
		why := by
		if v.Reason != "" && v.Rule == nil {
			why = "the command rules, as " + v.Reason
		} else if v.Reason != "" {
			why += ", as " + v.Reason
		}
		p := Plan{Command: cmdrule.Quote(argv), Deciding: v.Command, Why: why, Workdir: c.Workdir, Driver: l.Driver, Network: networkSaid(l), Key: v.Command}
		if v.Rule != nil && v.Reason == "" {
			p.RuleWhy, p.Key = v.Rule.Why, "rule "+v.Rule.String()
		}
		id, digest := planDigest(c, wsDir)
		p.Digest = digest
		if a, ok := asked.Take(digest); ok {
			d.Decision, d.How = history.Approved, "hunk approve "+a.ID+" by "+a.By
			return d, nil
		}
		if l.Confirm != nil {
			d.How = l.ConfirmBy
			yes, err := l.Confirm(p)
			switch {
			case err != nil && result.As(err).Code != result.ConfirmationRequired:
				d.Decision = history.Unconfirmed
				return d, err
			case err != nil: // the client could not ask: out of band, below
			case !yes && l.ConfirmBy != "elicitation":
				d.Decision = history.Declined
				return d, result.Errorf(result.Declined, "exec: %q was not run: the person said no (%s)", shown, why).
					WithHint("do something else, or ask the user what they want")
			case !yes:
				// A client with no person at hand (Codex exec, Claude Code
				// -p) says no by itself: the plan waits for a yes out of
				// band all the same.
				d.Decision = history.Declined
				e := result.Errorf(result.Declined, "exec: %q was not run: the client said no when asked for its person's yes (%s)", shown, why).
					WithHint("do something else, or ask the user what they want")
				if asked != nil {
					if _, err := asked.Ask(approval.Plan{ID: id, Digest: digest, Tool: "exec", Summary: cmdrule.Quote(argv), Text: p.Text()}); err == nil {
						e = e.WithDetail("plan", id).WithHint("if no person was there to answer (a client run without one says no by itself), " + sf.approveHint(id, wsDir))
					}
				}
				return d, e
			default:
				d.Decision = history.Approved
				return d, nil
			}
		}
		d.Decision, d.How = history.Unconfirmed, ""
		e := result.Errorf(result.ConfirmationRequired, "exec: %q needs a person's yes (%s); the command was not run", shown, why)
		if v.Rule != nil && v.Rule.Why != "" {
			e = e.WithHint(v.Rule.Why)
		}
		if asked != nil {
			if _, err := asked.Ask(approval.Plan{ID: id, Digest: digest, Tool: "exec", Summary: cmdrule.Quote(argv), Text: p.Text()}); err == nil {
				return d, e.WithDetail("plan", id).WithHint(sf.approveHint(id, wsDir))
			}
		}
		return d, e.WithHint(sf.confirmHint(argv))
	}
	return d, nil
}

// planDigest names what an approval of c covers: the workspace, the
// command, where and with what it runs, and what the sandbox lets it reach
// — a yes for one is never a yes for another.
func planDigest(c Command, wsDir string) (id, digest string) {
	env := slices.Clone(c.Env)
	slices.Sort(env)
	reach, _ := json.Marshal(struct {
		Network                    sandbox.Network
		RW, RO, Hide               []string
		GitWrite, ReadOnly, Caches bool
		Image                      string
	}{c.Network, c.RW, c.RO, c.Hide, c.GitWrite, c.ReadOnly, c.Caches, c.Image})
	return approval.Digest(append([]string{wsDir, "exec", c.Workdir, c.Driver, string(reach), strings.Join(env, "\x00"), "argv"}, c.Argv...)...)
}

// approveHint says how the person says yes out of band.
func (s Surface) approveHint(id, wsDir string) string {
	approve := fmt.Sprintf("hunk -C %s approve %s", cmdrule.Quote([]string{wsDir}), id)
	if s.Setting == nil {
		return fmt.Sprintf("run it again with --yes to say yes; or approve plan %s with `%s` and run it again within %d minutes; or allow it: --allow-cmd PREFIX or an allow rule in exec.rules", id, approve, int(approval.TTL.Minutes()))
	}
	return fmt.Sprintf("only a person can say yes, never a tool call: ask the user to run `%s` (it shows the command first), then make the same call again within %d minutes", approve, int(approval.TTL.Minutes()))
}

// rulesHint says where the rules come from and how to see one decided.
func (s Surface) rulesHint(argv []string) string {
	if s.Setting != nil {
		return "the person running hunk sets the command rules; run something else, or ask the user"
	}
	return fmt.Sprintf("the command rules are --allow-cmd, --ask-cmd, --deny-cmd and exec.rules in the config; hunk policy check --exec -- %s explains the decision", cmdrule.Quote(argv))
}

// confirmHint says how a person says yes.
func (s Surface) confirmHint(argv []string) string {
	if s.Setting != nil {
		return "only a person can say yes, never a tool call: ask the user to run it themselves (hunk exec --yes), or to allow it with an allow rule in hunk's config"
	}
	return "run it again with --yes to say yes, or allow it: --allow-cmd PREFIX or an allow rule in exec.rules"
}

// CommandCheck is how the command rules decide a command (hunk policy
// check --exec): the decision, the rule that made it (or the default), and
// what the rules could not pin down.
type CommandCheck struct {
	Command  string `json:"command" jsonschema:"the command decided, as a shell line"`
	Decision string `json:"decision" jsonschema:"allow, ask or deny"`
	Rule     string `json:"rule,omitempty" jsonschema:"the deciding rule and where it is set; empty: the default"`
	Deciding string `json:"deciding,omitempty" jsonschema:"the simple command of the line that decided"`
	Reason   string `json:"reason,omitempty" jsonschema:"what could not be known before the run, when that decided"`
	Rules    int    `json:"rules" jsonschema:"how many command rules there are"`
}

// Explain decides argv by the rules (and hunk's own asks, said to apply
// only where a network is open) without running anything: the
// check, its text, and the exit code (0 allowed, 1 otherwise).
func Explain(rs *cmdrule.Rules, argv []string) (CommandCheck, string, int) {
	rs = rs.WithIrreversible()
	v := rs.Argv(argv)
	c := CommandCheck{Command: cmdrule.Quote(argv), Decision: string(v.Decision), Deciding: v.Command, Reason: v.Reason, Rules: len(rs.List)}
	by := "the default for what no rule names (exec.default " + string(rs.Default) + ")"
	if rs.Default == "" {
		by = "the default for what no rule names (allow)"
	}
	if v.Rule != nil {
		c.Rule = v.Rule.String()
		by = "command rule " + c.Rule
	}
	text := fmt.Sprintf("%s  %s  %s", v.Decision, c.Command, by)
	if v.Reason != "" {
		text += " (" + v.Reason + ")"
	}
	if v.Command != "" && v.Command != c.Command {
		text += "\n  decided by: " + v.Command
	}
	if v.Rule != nil && v.Rule.Why != "" {
		text += "\n  why: " + v.Rule.Why
	}
	if v.Rule.IsIrreversible() {
		text += "\n  asked only where the command can reach a network (--network, --allow-host, driver none); elsewhere allowed"
	}
	code := 0
	if v.Decision != cmdrule.Allow {
		code = 1
	}
	return c, text, code
}

// Plan is what a person is asked to say yes to before a command runs: the
// command, the simple command of it that asked, why, and where and how it
// would run.
type Plan struct {
	Command  string // the command as a shell line
	Deciding string // the simple command a rule asked about
	Why      string // the rule that asks, or what could not be pinned down
	RuleWhy  string // the rule's own reason, when it gives one
	Workdir  string // inside the workspace ("" its root)
	Driver   string
	Network  string // what the command may reach
	// Key is what a yes "for this session" covers: the rule that asks
	// (every command it names), or this very command when no rule named it.
	Key string
	// Digest names what a yes for this plan covers (planDigest): a yes
	// sealed to it is never a yes for another.
	Digest string `json:"-"`
}

// Text is the plan as a person reads it, one fact a line.
func (p Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  command:  %s\n", p.Command)
	if p.Deciding != "" && p.Deciding != p.Command {
		fmt.Fprintf(&b, "  asks:     %s\n", p.Deciding)
	}
	fmt.Fprintf(&b, "  why:      %s\n", p.Why)
	if p.RuleWhy != "" {
		fmt.Fprintf(&b, "            %s\n", p.RuleWhy)
	}
	wd := p.Workdir
	if wd == "" {
		wd = "the workspace root"
	}
	fmt.Fprintf(&b, "  in:       %s\n", wd)
	fmt.Fprintf(&b, "  sandbox:  %s, %s\n", p.Driver, p.Network)
	return b.String()
}

// networkSaid is what a command under l may reach.
func networkSaid(l Limits) string {
	switch {
	case l.Network.Host:
		return "the host's network"
	case l.Driver == "none":
		return "the host's network (the none driver confines nothing)"
	case len(l.Network.Allow) > 0:
		return "only " + strings.Join(l.Network.Allow, ", ") + " (through hunk's proxy)"
	}
	return "no network"
}

// approvals is the workspace's store of out-of-band yeses (nil when hunk
// has no state directory: an ask then only says how to allow it).
func approvals(ws *workspace.Workspace) *approval.Store {
	st, _ := ws.Approvals()
	return st
}
