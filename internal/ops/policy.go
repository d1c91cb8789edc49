package ops

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// PolicyCheck is `hunk policy check`: whether each path may be read and
// written under the workspace's path policy, and the rule that decides (as
// `git check-ignore -v` names the pattern that ignores a path).
type PolicyCheck struct {
	Path  string `json:"path" jsonschema:"the path, relative to the workspace"`
	Kind  string `json:"kind" jsonschema:"read or write"`
	Allow bool   `json:"allowed" jsonschema:"the policy allows it"`
	// Rule names the deciding rule, with its source ("" when nothing
	// denies the path).
	Rule string `json:"rule,omitempty" jsonschema:"the rule that denies it (or asks), with where it comes from"`
	Ask  bool   `json:"ask,omitempty" jsonschema:"a change needs a person's yes (a write.ask rule)"`
}

// PolicyCheckDetails are `hunk policy check`'s facts.
type PolicyCheckDetails struct {
	Checks []PolicyCheck `json:"checks"`
	Rules  int           `json:"rules" jsonschema:"how many rules the policy has"`
}

// CheckPolicy decides each path for reading, writing or both. The Output's
// ExitCode is 1 when any is denied.
func CheckPolicy(env *Env, paths []string, read, write bool) (*Output, error) {
	if len(paths) == 0 {
		return nil, result.Usagef("name the paths to check").WithHint("hunk policy check [--read|--write] PATH...")
	}
	if !read && !write {
		read, write = true, true
	}
	ws := env.Workspace
	d := &PolicyCheckDetails{Checks: []PolicyCheck{}, Rules: len(ws.Policy().Rules())}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	code := 0
	for _, p := range paths {
		name, err := ws.Resolve(p)
		if err != nil {
			return nil, err
		}
		for _, k := range []struct {
			on    bool
			kind  string
			write bool
		}{{read, "read", false}, {write, "write", true}} {
			if !k.on {
				continue
			}
			decision, by := ws.Decide(name, k.write)
			c := PolicyCheck{Path: name, Kind: k.kind, Allow: decision.Allowed}
			verdict := "allowed"
			if !c.Allow {
				c.Rule, verdict, code = decision.Reason()+workspace.Via(name, by), "denied", 1
			} else if r := ws.Policy().Asks(name); k.write && r != nil {
				c.Rule, c.Ask, verdict = "asked by policy rule "+r.String(), true, "ask"
			}
			d.Checks = append(d.Checks, c)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", verdict, k.kind, workspace.Quote(name), c.Rule)
		}
	}
	tw.Flush()
	if d.Rules == 0 {
		b.WriteString("(no policy rules: every path may be read and written)\n")
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	text := strings.Join(lines, "\n")
	return &Output{Text: text, Message: text, Data: true, Details: d, ExitCode: code}, nil
}
