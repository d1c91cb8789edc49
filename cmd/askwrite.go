package cmd

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// writeGate is the workspace's pre-commit gate for the path policy's
// write.ask rules (--ask-write, policy.write.ask): a change of a file one
// names needs a person's yes — at the terminal for a person's own command,
// else out of band (hunk approve, by the change's plan id) — and every
// other change passes untouched. nil when no rule asks.
func (a *App) writeGate(ws *workspace.Workspace) *workspace.Gate {
	p := ws.Policy()
	if !p.HasAsks() {
		return nil
	}
	agent := a.cfgCmd != nil && (a.cfgCmd.Name() == "mcp" || a.cfgCmd.Name() == "call" || a.cfgCmd.Name() == "serve")
	var ask func(string) (bool, error)
	if !agent {
		ask = ttyAsk(a.Stderr)
	}
	session := a.Cfg.Session
	return &workspace.Gate{
		Wants: func(name string) bool { return p.Asks(name) != nil },
		Decide: func(plan workspace.Plan) error {
			d, err := decideWrite(ws, plan, ask, agent)
			d.Session = session
			if plan.Call != nil && plan.Call.Decided != nil {
				plan.Call.Decided(d)
			}
			if st, herr := ws.History(); herr == nil {
				if herr := st.Decided(d); herr != nil {
					a.Warn("the audit trail: %v", herr)
				}
			}
			return err
		},
	}
}

// decideWrite decides one plan of changes some write.ask rule names.
func decideWrite(ws *workspace.Workspace, plan workspace.Plan, ask func(string) (bool, error), agent bool) (history.Decision, error) {
	p := ws.Policy()
	parts := []string{ws.Dir(), "write"}
	var text, names, rules strings.Builder
	seen := map[string]bool{}
	for i, f := range plan.Files {
		parts = append(parts, f.Path, f.Old, f.New)
		r := p.Asks(f.Path)
		fmt.Fprintf(&text, "  %s %s   (%s)\n", f.Change(), f.Path, r)
		if i > 0 {
			names.WriteString(", ")
		}
		names.WriteString(f.Path)
		if !seen[r.String()] {
			if len(seen) > 0 {
				rules.WriteString(", ")
			}
			seen[r.String()] = true
			rules.WriteString(r.String())
		}
	}
	text.WriteString(planDiff(plan, maxPlanDiff))
	d := history.Decision{Tool: "write", By: rules.String()}
	id, digest := approval.Digest(parts...)
	store, _ := ws.Approvals()
	if store != nil {
		if a, ok := store.Take(digest); ok {
			d.Decision, d.How = history.Approved, "hunk approve "+a.ID+" by "+a.By
			return d, nil
		}
	}
	what := fmt.Sprintf("changing %s needs a person's yes (%s)", names.String(), rules.String())
	e := result.Errorf(result.ConfirmationRequired, "%s; nothing was written", what)
	d.Decision = history.Unconfirmed
	if plan.Call != nil && plan.Call.Ask != nil {
		d.How = "elicitation"
		yes, err := plan.Call.Ask(text.String(), digest)
		switch {
		case err != nil && result.As(err).Code != result.ConfirmationRequired:
			return d, err
		case err != nil: // the client could not ask: out of band, below
		case !yes:
			// A client with no person at hand says no by itself: the plan
			// waits for a yes out of band all the same (below).
			d.Decision = history.Declined
			e = result.Errorf(result.Declined, "%s, and the client said no when asked for its person's yes; nothing was written", what).
				WithHint("do something else, or ask the user what they want")
		default:
			d.Decision = history.Approved
			return d, nil
		}
	} else if ask != nil {
		d.How = "terminal"
		yes, err := ask("hunk: a write.ask rule asks for your yes before this change is made:\n" + text.String() + "Make it?")
		switch {
		case err != nil:
			d.Decision = history.Unconfirmed
			return d, err
		case !yes:
			d.Decision = history.Declined
			return d, result.Errorf(result.Declined, "%s, and the person said no; nothing was written", what)
		}
		d.Decision = history.Approved
		return d, nil
	}
	if d.Decision != history.Declined {
		d.How = ""
	}
	if len(plan.Files) > 0 {
		e = e.At(plan.Files[0].Path)
	}
	if store == nil {
		return d, e.WithHint("hunk has no state directory to keep an approval in (set HOME or XDG_STATE_HOME); make the change at a terminal")
	}
	if _, err := store.Ask(approval.Plan{ID: id, Digest: digest, Tool: "write", Summary: names.String(), Text: text.String()}); err != nil {
		return d, e
	}
	approve := fmt.Sprintf("hunk -C %s approve %s", cmdrule.Quote([]string{ws.Dir()}), id)
	min := int(approval.TTL.Minutes())
	pre := ""
	if d.Decision == history.Declined {
		pre = "if no person was there to answer (a client run without one says no by itself), "
	}
	if agent {
		return d, e.WithDetail("plan", id).WithHint(pre + fmt.Sprintf("only a person can say yes, never a tool call: ask the user to run `%s` (it shows the files first), then make the same call again within %d minutes; the yes holds only while the files are as they are now", approve, min))
	}
	return d, e.WithDetail("plan", id).WithHint(fmt.Sprintf("run it at a terminal to be asked; or approve plan %s with `%s` and run it again within %d minutes", id, approve, min))
}

// maxPlanDiff is how many lines of diff a person is shown of one plan.
const maxPlanDiff = 200

// planDiff is the plan's change as a unified diff per file, the lines
// indented, at most max of them (the rest counted); a binary file, a link
// or a directory is said in words.
func planDiff(plan workspace.Plan, max int) string {
	var b strings.Builder
	shown, more := 0, 0
	for _, f := range plan.Files {
		var d string
		switch {
		case strings.HasPrefix(f.New, "link:") || strings.HasPrefix(f.Old, "link:") || f.Old == "dir":
			d = fmt.Sprintf("%s: %s -> %s\n", f.Path, orNone(f.Old), orNone(f.New))
		case bytes.IndexByte(f.Before, 0) >= 0 || bytes.IndexByte(f.After, 0) >= 0:
			d = fmt.Sprintf("%s: binary, %d bytes -> %d bytes\n", f.Path, len(f.Before), len(f.After))
		case f.New == "":
			d = diff.Deletion(f.Path, f.Before)
		default:
			d = diff.File(f.Path, f.Before, f.After, f.Old == "")
		}
		for _, l := range strings.SplitAfter(d, "\n") {
			switch {
			case l == "":
			case shown >= max:
				more++
			default:
				shown++
				b.WriteString("    " + l)
			}
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "    … %d more lines of diff\n", more)
	}
	return b.String()
}

// orNone names a plan's hash for a person: a link's target, else what it is.
func orNone(h string) string {
	switch {
	case h == "":
		return "(absent)"
	case strings.HasPrefix(h, "link:"):
		return "link to " + strings.TrimPrefix(h, "link:")
	case h == "dir":
		return "a directory"
	}
	return "a file"
}
