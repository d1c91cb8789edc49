// Package policy is hunk's path policy inside the workspace: which paths may
// be read and which written, by gitignore-style rules that each remember
// where they came from (a flag, a variable, a line of the config file), so
// that a refusal can name the rule that decided it.
//
// Rules are of three kinds. read.deny: the path may be neither read nor
// written. write.deny: the path may not be written. write.allow: when any
// is given, only the paths one of them matches may be written. Deny wins
// over allow. A rule that matches a directory matches everything under it.
package policy

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Kind is the kind of a rule.
type Kind string

// The kinds of rules, named as their configuration keys (policy.KIND).
const (
	ReadDeny   Kind = "read.deny"
	WriteDeny  Kind = "write.deny"
	WriteAllow Kind = "write.allow"
	// WriteAsk: a change there is allowed with a person's yes (the
	// workspace's gate asks); exec holds it read-only, as write.deny.
	WriteAsk Kind = "write.ask"
)

// Flag is the command-line flag of a kind.
func (k Kind) Flag() string {
	switch k {
	case ReadDeny:
		return "--deny-read"
	case WriteDeny:
		return "--deny-write"
	case WriteAsk:
		return "--ask-write"
	}
	return "--allow-write"
}

// Rule is one rule: a gitignore-style pattern relative to the workspace root
// — * and ? within a segment, ** across segments, [...] classes, a leading /
// anchoring it to the root, a bare name (no / but a trailing one) matching
// at any depth, a trailing / naming a directory.
type Rule struct {
	Kind    Kind
	Pattern string
	// Source says where the rule came from: "--deny-read", "HUNK_DENY_READ",
	// "/home/me/.config/hunk/config.toml:12".
	Source string

	segs []string // the pattern's segments, "**" for any number
	// lits holds, for each segment, how it matches without path.Match:
	// the whole name (literal), or a prefix and suffix around one "*".
	lits []segLit
}

// segLit is a segment matched without path.Match: exactly (no star) or
// as prefix "*" suffix.
type segLit struct {
	ok             bool // the segment is one of these forms
	star           bool
	prefix, suffix string
}

// compileSeg sees whether seg is a literal or holds one "*" and no other
// wildcard (".env", "*.pem", "id_rsa*"), the common forms.
func compileSeg(seg string) segLit {
	if strings.ContainsAny(seg, "?[\\") {
		return segLit{}
	}
	switch strings.Count(seg, "*") {
	case 0:
		return segLit{ok: true, prefix: seg}
	case 1:
		pre, suf, _ := strings.Cut(seg, "*")
		return segLit{ok: true, star: true, prefix: pre, suffix: suf}
	}
	return segLit{}
}

// segMatch matches name against segment i of r.
func (r *Rule) segMatch(i int, name string) bool {
	l := r.lits[i]
	switch {
	case !l.ok:
		return segMatch(r.segs[i], name)
	case !l.star:
		return name == l.prefix
	}
	return len(name) >= len(l.prefix)+len(l.suffix) && strings.HasPrefix(name, l.prefix) && strings.HasSuffix(name, l.suffix) && !strings.Contains(name, "/")
}

// String is the rule as a refusal names it.
func (r *Rule) String() string {
	return fmt.Sprintf("%s %q (%s)", r.Kind, r.Pattern, r.Source)
}

// Policy is a set of rules.
type Policy struct {
	rules []*Rule
	// fold compares names without regard to case (a file system that folds
	// case: "a/.ENV" is "a/.env").
	fold bool
	// prefix is where the names decided lie below the root the rules are
	// relative to (Within).
	prefix string
}

// Within is the policy for a workspace narrowed to dir (a path relative to
// the root the rules are written for): its names are decided as dir/NAME.
func (p *Policy) Within(dir string) *Policy {
	if p == nil {
		return nil
	}
	q := *p
	q.prefix = path.Join(p.prefix, dir)
	return &q
}

// New compiles rules; a pattern that is empty, or whose brackets do not
// close, is an error naming the rule. fold makes matching case-insensitive.
func New(rules []Rule, fold bool) (*Policy, error) {
	p := &Policy{fold: fold}
	for i := range rules {
		r := rules[i]
		pat := nfc(strings.TrimSpace(r.Pattern))
		if fold {
			pat = strings.ToLower(pat)
		}
		if pat == "" || pat == "/" {
			return nil, fmt.Errorf("policy rule %s: an empty pattern", r.String())
		}
		anchored := strings.HasPrefix(pat, "/")
		pat = strings.Trim(pat, "/")
		for strings.Contains(pat, "//") {
			pat = strings.ReplaceAll(pat, "//", "/")
		}
		if strings.Contains(pat, "/") {
			anchored = true // as gitignore: a / before the end anchors the pattern
		}
		segs := strings.Split(pat, "/")
		for _, s := range segs {
			if s == "." || s == ".." {
				return nil, fmt.Errorf("policy rule %s: %q is not a name; patterns are relative to the workspace root", r.String(), s)
			}
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("policy rule %s: %v", r.String(), err)
			}
		}
		if !anchored {
			segs = append([]string{"**"}, segs...)
		}
		if len(segs) > maxSegments {
			return nil, fmt.Errorf("policy rule %s: more than %d names deep", r.String(), maxSegments-1)
		}
		r.segs = segs
		for _, seg := range segs {
			r.lits = append(r.lits, compileSeg(seg))
		}
		p.rules = append(p.rules, &r)
	}
	return p, nil
}

// Empty reports whether the policy has no rules (everything is allowed).
func (p *Policy) Empty() bool { return p == nil || len(p.rules) == 0 }

// Rules lists the rules.
func (p *Policy) Rules() []*Rule {
	if p == nil {
		return nil
	}
	return p.rules
}

// Decision is the answer for one path: allowed, or denied by Rule (nil when
// denied for lack of a write.allow rule: then Allow lists those).
type Decision struct {
	Allowed bool
	Rule    *Rule
	Allow   []*Rule
}

// Reason says why a denied path is denied.
func (d Decision) Reason() string {
	if d.Rule != nil {
		return "denied by policy rule " + d.Rule.String()
	}
	var names []string
	for _, r := range d.Allow {
		names = append(names, r.String())
	}
	return "not under any policy write.allow rule (" + strings.Join(names, ", ") + ")"
}

// Read decides whether name (a clean slash path relative to the workspace
// root, "." for the root) may be read.
func (p *Policy) Read(name string) Decision {
	segs := p.segments(name)
	if r := p.first(segs, ReadDeny); r != nil {
		return Decision{Rule: r}
	}
	return Decision{Allowed: true}
}

// Write decides whether name may be written (created, changed, removed,
// renamed to or from).
func (p *Policy) Write(name string) Decision {
	segs := p.segments(name)
	if r := p.first(segs, ReadDeny); r != nil {
		return Decision{Rule: r}
	}
	if r := p.first(segs, WriteDeny); r != nil {
		return Decision{Rule: r}
	}
	var allow []*Rule
	for _, r := range p.Rules() {
		if r.Kind == WriteAllow {
			if r.matches(segs) {
				return Decision{Allowed: true}
			}
			allow = append(allow, r)
		}
	}
	if len(allow) > 0 {
		return Decision{Allow: allow}
	}
	return Decision{Allowed: true}
}

// Asks is the write.ask rule that makes a change of name need a person's
// yes (nil: none does).
func (p *Policy) Asks(name string) *Rule {
	if p.Empty() {
		return nil
	}
	return p.first(p.segments(name), WriteAsk)
}

// HasAsks reports whether any write.ask rule is set.
func (p *Policy) HasAsks() bool {
	for _, r := range p.Rules() {
		if r.Kind == WriteAsk {
			return true
		}
	}
	return false
}

// Hides reports whether a listing of the directory name should leave it
// out: it may not be read.
func (p *Policy) Hides(name string) bool { return !p.Read(name).Allowed }

// first is the first rule of kind that matches the name of segments segs.
func (p *Policy) first(segs []string, kind Kind) *Rule {
	for _, r := range p.Rules() {
		if r.Kind == kind && r.matches(segs) {
			return r
		}
	}
	return nil
}

// segments are the segments of name as the rules see them: relative to
// the root the rules are written for, in normalization form C, case-folded
// where the file system folds case; none for the root itself (a rule names
// something in it).
func (p *Policy) segments(name string) []string {
	name = path.Clean(strings.TrimPrefix(name, "/"))
	if p != nil && p.prefix != "" {
		name = path.Join(p.prefix, name)
	}
	if name == "." {
		return nil
	}
	return strings.Split(p.norm(name), "/")
}

// norm is a name (or a segment) as the rules compare it.
func (p *Policy) norm(name string) string {
	name = nfc(name)
	if p != nil && p.fold {
		name = strings.ToLower(name)
	}
	return name
}

// matches reports whether r matches the name of segments segs or a
// directory above it.
func (r *Rule) matches(segs []string) bool {
	if len(segs) == 0 {
		return false
	}
	s := r.closure(1)
	for _, seg := range segs {
		if s = r.step(s, seg); s == 0 {
			return false
		}
	}
	return s&r.done() != 0
}

// nfc is s in Unicode normalization form C: a name written with combining
// accents (NFD, as macOS writes names) is decided as the same name
// precomposed, whichever form the rule or the file system uses.
func nfc(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// segMatch matches one segment as path.Match does.
func segMatch(pattern, name string) bool {
	m, _ := path.Match(pattern, name)
	return m
}
