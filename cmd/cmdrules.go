package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/result"
)

// ruleFlags are the command-rule flags, each a rule of its decision
// (repeatable: one prefix each).
var ruleFlags = []struct {
	name string
	d    cmdrule.Decision
	help string
}{
	{"deny-cmd", cmdrule.Deny, "never run a command starting with `PREFIX` (repeatable; e.g. 'git push', 'rm -rf'): exec refuses it, DENIED"},
	{"ask-cmd", cmdrule.Ask, "run a command starting with `PREFIX` only on a person's yes (repeatable): hunk exec --yes; a tool call gets CONFIRMATION_REQUIRED"},
	{"allow-cmd", cmdrule.Allow, "run a command starting with `PREFIX` (repeatable), whatever exec.default says"},
}

func addRuleFlags(f *pflag.FlagSet) {
	for _, r := range ruleFlags {
		f.StringArray(r.name, nil, r.help)
	}
}

// execRules are the command rules, read once, when first asked for: only
// the surfaces that run commands (exec, mcp, call, serve, tools, policy
// check --exec) pay for reading and checking them.
func (a *App) execRules() (*cmdrule.Rules, error) {
	if a.Cfg.Exec.Rules == nil {
		rs, err := commandRules(a.cfgCmd, a.Cfg.ConfigFile, a.cfgText, a.Cfg.Exec.Default)
		if err != nil {
			return nil, err
		}
		a.Cfg.Exec.Rules = rs
	}
	return a.Cfg.Exec.Rules, nil
}

// commandRules are exec's command rules: the config file's exec.rules,
// each with its line, then the flags' (they add up: a flag cannot take
// away a rule of the file), and exec.default for what no rule names. Each
// rule's examples are checked now: a rule that does not decide its own
// match lines, or decides a not_match line, is a usage error naming it.
func commandRules(cmd *cobra.Command, file string, text []byte, def string) (*cmdrule.Rules, error) {
	rs := &cmdrule.Rules{}
	if file != "" && len(text) > 0 {
		list, err := fileRules(file, text)
		if err != nil {
			return nil, err
		}
		rs.List = list
	}
	for _, rf := range ruleFlags {
		if cmd == nil {
			break
		}
		vals, _ := cmd.Flags().GetStringArray(rf.name)
		for _, v := range vals {
			r, err := cmdrule.ParseRule(rf.d, v, "--"+rf.name)
			if err != nil {
				return nil, result.Usagef("%v", err).WithHint("a rule is a command's first words: --deny-cmd 'git push'")
			}
			rs.List = append(rs.List, r)
		}
	}
	d, err := cmdrule.ParseDecision(def)
	if err != nil {
		return nil, result.Usagef("exec.default: %v", err)
	}
	rs.Default, rs.DefaultSource = d, "exec.default"
	if err := rs.Check(); err != nil {
		return nil, result.Usagef("%v", err).WithHint("fix the rule or its example; a rule decides the commands that start with its words")
	}
	return rs, nil
}

// fileRules reads exec.rules from the config file's text: a list of
// entries, each one of deny:, ask: or allow: PREFIX, with why: (shown in
// a refusal), match: and not_match: (example command lines).
func fileRules(file string, text []byte) ([]cmdrule.Rule, error) {
	list := configNode(text, "exec", "rules")
	if list == nil {
		return nil, nil
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return result.Errorf(result.InvalidArgument, "config file %s:%d: exec.rules: %s", file, n.Line, fmt.Sprintf(format, args...)).
			WithHint("each rule is one of deny:, ask: or allow: with the command's first words, and may have why:, match: and not_match: (docs/exec.md, 'Command rules')")
	}
	if list.Kind != yaml.SequenceNode {
		return nil, bad(list, "a list of rules, not %s", kindName(list))
	}
	var out []cmdrule.Rule
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, bad(item, "a rule is a mapping (deny: git push), not %s", kindName(item))
		}
		var r cmdrule.Rule
		var prefix string
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			switch k.Value {
			case "deny", "ask", "allow":
				if prefix != "" {
					return nil, bad(k, "a rule has one decision, not %s and %s", r.Decision, k.Value)
				}
				r.Decision, prefix = cmdrule.Decision(k.Value), v.Value
				if v.Kind != yaml.ScalarNode || prefix == "" {
					return nil, bad(v, "%s: the command's first words, as one string", k.Value)
				}
			case "why":
				r.Why = v.Value
			case "match", "not_match":
				var ex []string
				if err := v.Decode(&ex); err != nil {
					return nil, bad(v, "%s: a list of command lines", k.Value)
				}
				if k.Value == "match" {
					r.Match = ex
				} else {
					r.NotMatch = ex
				}
			default:
				return nil, bad(k, "unknown key %q in a rule", k.Value)
			}
		}
		if prefix == "" {
			return nil, bad(item, "the rule has no deny:, ask: or allow:")
		}
		parsed, err := cmdrule.ParseRule(r.Decision, prefix, fmt.Sprintf("%s:%d", file, item.Line))
		if err != nil {
			return nil, bad(item, "%v", err)
		}
		parsed.Why, parsed.Match, parsed.NotMatch = r.Why, r.Match, r.NotMatch
		out = append(out, parsed)
	}
	return out, nil
}

// child is the value of key in the mapping n (nil when none).
// configNode is the node the config file's text holds at path (exec,
// rules), nil when there is none or the text is not YAML (the config
// reader refuses that).
func configNode(text []byte, path ...string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	n := doc.Content[0]
	for _, k := range path {
		n = child(n, k)
	}
	return n
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", strings.TrimSpace(n.Value))
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "that"
}
