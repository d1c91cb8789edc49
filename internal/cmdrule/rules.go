// Package cmdrule is exec's command rules: token-prefix rules over the
// argv a command runs ("git push", "npm test", "rm -rf"), each deciding
// deny, ask or allow, deny over ask over allow, a default for what no rule
// names. A shell line is parsed with a real POSIX shell parser into every
// simple command it runs (those inside $( ), backticks, functions, sh -c
// strings and here-documents fed to a shell included), and every one must
// pass; what the parser cannot pin down before the line runs (eval, a
// variable as the command word, sh -c of a string made at run time, a
// shell reading commands from a pipe) is at least ask.
package cmdrule

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Decision is what a rule (or the default) decides of a command.
type Decision string

// The decisions, weakest first.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

func (d Decision) rank() int { return slices.Index([]Decision{Allow, Ask, Deny}, d) }

// ParseDecision reads a decision's name.
func ParseDecision(s string) (Decision, error) {
	switch d := Decision(strings.ToLower(strings.TrimSpace(s))); d {
	case Allow, Ask, Deny:
		return d, nil
	}
	return "", fmt.Errorf("%q is no decision: allow, ask or deny", s)
}

// Rule is one command rule.
type Rule struct {
	Decision Decision
	// Prefix are the words a command starts with: its program (by name,
	// whatever directory it is run from; a name with a slash is that path
	// only), then its arguments.
	Prefix []string
	// Why is the person's reason, shown in a refusal with what to do
	// instead ("use uv run python").
	Why string
	// Source says where the rule was set (--deny-cmd, a config file's line).
	Source string
	// Match and NotMatch are command lines the rule must and must not
	// decide (checked by Check when the rules are made).
	Match, NotMatch []string
}

// String is the rule as a message names it: deny "git push" (--deny-cmd).
func (r *Rule) String() string {
	s := fmt.Sprintf("%s %q", r.Decision, strings.Join(r.Prefix, " "))
	if r.Source != "" {
		s += " (" + r.Source + ")"
	}
	return s
}

// ParseRule makes a rule of a decision and a prefix as the person wrote it
// ("git push": split at spaces; a word may be quoted as in a shell).
func ParseRule(d Decision, prefix, source string) (Rule, error) {
	cmds, err := Commands(prefix)
	if err != nil || len(cmds) != 1 || len(cmds[0].Words) == 0 || !cmds[0].literal() {
		return Rule{}, fmt.Errorf("%s: %q is not a command's first words (plain words, as `git push`)", source, prefix)
	}
	return Rule{Decision: d, Prefix: cmds[0].strings(), Source: source}, nil
}

// Rules are the rules in force and the default.
type Rules struct {
	List []Rule
	// Default decides what no rule names ("" is allow).
	Default Decision
	// DefaultSource says where the default was set.
	DefaultSource string
	// Fallback decide only what no rule in List names and the default
	// allows (hunk's own asks: WithIrreversible).
	Fallback []Rule
}

// Empty reports whether the rules decide nothing (every command allowed).
func (rs *Rules) Empty() bool {
	return rs == nil || len(rs.List) == 0 && len(rs.Fallback) == 0 && (rs.Default == "" || rs.Default == Allow)
}

// Verdict is a decision with what made it.
type Verdict struct {
	Decision Decision
	Rule     *Rule  // the deciding rule; nil: the default, or Reason
	Command  string // the simple command decided, as words joined
	// Reason is why a command was asked about with no rule naming it:
	// something the parser cannot pin down before it runs.
	Reason string
}

// worse is the stronger of two verdicts; on a tie the first, unless only
// the second names what decided it (a line whose commands a rule allows is
// allowed by that rule, not by the default).
func worse(a, b Verdict) Verdict {
	if b.Decision.rank() > a.Decision.rank() || b.Decision == a.Decision && a.Rule == nil && a.Reason == "" && b.Rule != nil {
		return b
	}
	return a
}

// Argv decides a command run without a shell.
func (rs *Rules) Argv(argv []string) Verdict {
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = word{s: a, lit: true}
	}
	return rs.command(Command{Words: ws}, 0)
}

// Line decides a shell command line (sh -c LINE): every simple command in
// it, the strongest verdict winning.
func (rs *Rules) Line(line string) Verdict {
	return rs.line(line, 0)
}

func (rs *Rules) line(line string, depth int) Verdict {
	v := Verdict{Decision: Allow}
	if depth > maxDepth {
		return rs.unpinned(line, "shells nested too deep to follow")
	}
	if strings.IndexByte(line, 0) >= 0 {
		return rs.unpinned(line, "the line holds a NUL byte, which a shell reads its own way")
	}
	if len(line) > maxLine || nesting(line) > maxNesting {
		// The parser recurses once a level: a line of 200,000 "(" overflowed
		// its stack, and took hunk down with it.
		return rs.unpinned(line[:min(len(line), 80)], "the line is too long or nested too deep to decide")
	}
	cmds, err := Commands(line)
	if err != nil {
		return rs.unpinned(line, "the shell line does not parse ("+err.Error()+")")
	}
	for _, c := range cmds {
		v = worse(v, rs.command(c, depth))
		if v.Decision == Deny {
			break
		}
	}
	return v
}

// maxDepth bounds shells within shells (sh -c "sh -c '…'"); maxLine
// and maxNesting what one line may hold and nest (subshells, groups,
// substitutions) for the parser to take it.
const (
	maxDepth   = 8
	maxLine    = 1 << 20
	maxNesting = 200
)

// nesting is how deep the line's brackets and backticks could nest, counted
// over every byte (quotes not told apart: it can only overcount).
func nesting(line string) int {
	depth, most, tick := 0, 0, false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth = max(0, depth-1)
		case '`':
			if tick = !tick; tick {
				depth++
			} else {
				depth = max(0, depth-1)
			}
		}
		most = max(most, depth)
	}
	return most
}

// command decides one simple command: what a wrapper or a shell runs is
// decided in its place, then the rules.
func (rs *Rules) command(c Command, depth int) Verdict {
	if c.Reason != "" {
		return rs.unpinned(c.text(), c.Reason)
	}
	ws := c.Words
	if len(ws) == 0 {
		return Verdict{Decision: Allow}
	}
	if !ws[0].lit {
		return rs.unpinned(c.text(), "its command word is known only when it runs")
	}
	name := path.Base(ws[0].s)
	if inner, reason, ok := unwrap(name, ws); ok {
		if reason != "" {
			return rs.unpinned(c.text(), reason)
		}
		return rs.command(Command{Words: inner, Stdin: c.Stdin}, depth)
	}
	if shells[name] {
		if script, reason, ok := shellScript(ws, c.Stdin); ok {
			if reason != "" {
				return rs.unpinned(c.text(), reason)
			}
			return worse(rs.decide(ws, c.text()), rs.line(script, depth+1))
		}
	}
	switch name {
	case "eval":
		return rs.unpinned(c.text(), "eval runs a string as commands")
	case "alias":
		return rs.unpinned(c.text(), "an alias gives a command another name")
	case "trap":
		if len(ws) > 1 && ws[1].lit {
			return worse(rs.decide(ws, c.text()), rs.line(ws[1].s, depth+1))
		} else if len(ws) > 1 {
			return rs.unpinned(c.text(), "trap runs a string known only when it runs")
		}
	case "find":
		v := rs.decide(ws, c.text())
		for _, inner := range findExecs(ws) {
			v = worse(v, rs.command(Command{Words: inner}, depth))
		}
		return v
	}
	if name == "git" {
		norm, reason := gitArgv(ws)
		if reason != "" {
			return rs.unpinned(c.text(), reason)
		}
		return rs.decide(norm, c.text())
	}
	return rs.decide(ws, c.text())
}

// decide applies the rules to a command's words: the strongest rule that
// matches, else the default. A word known only at run time, where a deny
// or ask rule compares one, makes the command at least ask.
func (rs *Rules) decide(ws []word, text string) Verdict {
	v := Verdict{Decision: rs.def(), Command: text}
	matched := false
	for i := range rs.List {
		r := &rs.List[i]
		m := match(r.Prefix, ws)
		if m == no || m == maybe && r.Decision == Allow {
			continue
		}
		d := r.Decision
		if m == maybe {
			d = Ask
		}
		if !matched || d.rank() > v.Decision.rank() {
			v = Verdict{Decision: d, Rule: r, Command: text}
			if m == maybe {
				v.Reason = "a word it compares is known only when the command runs"
			}
		}
		matched = true
	}
	if !matched && v.Decision == Allow {
		for i := range rs.Fallback {
			if r := &rs.Fallback[i]; match(r.Prefix, ws) == yes {
				return Verdict{Decision: r.Decision, Rule: r, Command: text}
			}
		}
	}
	return v
}

// unpinned is the verdict on a command the parser cannot pin down before
// it runs: at least ask under the person's rules; allowed where only hunk's
// own asks are in force (Fallback), which are a net for the commands they
// name however spelled, never a boundary — a line that does not parse is
// the shell's to refuse.
func (rs *Rules) unpinned(text, reason string) Verdict {
	if rs != nil && len(rs.List) == 0 && rs.def() == Allow {
		return Verdict{Decision: Allow, Command: text}
	}
	return Verdict{Decision: Ask, Command: text, Reason: reason}
}

func (rs *Rules) def() Decision {
	if rs == nil || rs.Default == "" {
		return Allow
	}
	return rs.Default
}

type matched int

const (
	no matched = iota
	yes
	maybe // a word compared is known only at run time
)

// match compares a rule's prefix with a command's words: the program by
// name (a prefix word with a slash: that path), then each word in order;
// options between the program and the rule's first word are passed over
// (npm --silent test is npm test; git's global options are gitArgv's).
func match(prefix []string, ws []word) matched {
	if len(ws) == 0 {
		return no
	}
	p0 := prefix[0]
	if strings.Contains(p0, "/") {
		if path.Clean(ws[0].s) != path.Clean(p0) {
			return no
		}
	} else if path.Base(ws[0].s) != p0 {
		return no
	}
	m := yes
	j := 1
	for k, want := range prefix[1:] {
		for k == 0 && j < len(ws) && ws[j].lit && strings.HasPrefix(ws[j].s, "-") && !strings.HasPrefix(want, "-") && ws[j].s != "--" {
			j++
		}
		if j >= len(ws) {
			return no
		}
		switch {
		case !ws[j].lit:
			m = maybe
		case ws[j].s != want:
			return no
		}
		j++
	}
	return m
}

// Check runs every rule's examples: each Match line must be decided by the
// rule, each NotMatch line not. It says which failed, naming the rule.
func (rs *Rules) Check() error {
	for i := range rs.List {
		r := &rs.List[i]
		one := &Rules{List: []Rule{*r}, Default: ""}
		for _, ex := range r.Match {
			if v := one.Line(ex); v.Rule == nil {
				return fmt.Errorf("rule %s: its example %q (match) is not decided by it", r, ex)
			}
		}
		for _, ex := range r.NotMatch {
			if v := one.Line(ex); v.Rule != nil && v.Reason == "" {
				return fmt.Errorf("rule %s: its example %q (not_match) is decided by it", r, ex)
			}
		}
	}
	return nil
}
