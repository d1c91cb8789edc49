package cmdrule

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is one word of a simple command: its value when the line says it
// (lit), else its text as written ($X, $(cmd), a glob).
type word struct {
	s   string
	lit bool
}

// Command is one simple command of a shell line: its words, and what it
// reads on standard input when the line says so (a here-document or
// here-string; a word not lit when it is known only at run time).
type Command struct {
	Words []word
	Stdin *word
	// Reason, when set, is why the command cannot be pinned down at all.
	Reason string
}

func (c Command) text() string {
	s := make([]string, len(c.Words))
	for i, w := range c.Words {
		s[i] = w.s
	}
	return strings.Join(s, " ")
}

func (c Command) literal() bool {
	for _, w := range c.Words {
		if !w.lit {
			return false
		}
	}
	return true
}

func (c Command) strings() []string {
	s := make([]string, len(c.Words))
	for i, w := range c.Words {
		s[i] = w.s
	}
	return s
}

// Commands parses a shell line into every simple command it runs: those
// of pipelines, lists, subshells, functions, loops and conditions, and
// those inside $( ), backticks and <( ).
func Commands(line string) ([]Command, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	var out []Command
	syntax.Walk(f, func(n syntax.Node) bool {
		if as, ok := n.(*syntax.Assign); ok && as.Name != nil && gitConfigVar(as.Name.Value) {
			// X=1 git ..., export X=1, a bare X=1: git reads it.
			out = append(out, Command{Reason: as.Name.Value + " gives git settings (an alias) the line does not show"})
		}
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		c := Command{}
		for _, a := range call.Args {
			c.Words = append(c.Words, wordOf(line, a, true))
		}
		for _, r := range st.Redirs {
			if r.N != nil && r.N.Value != "0" {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				if r.Hdoc != nil {
					w := wordOf(line, r.Hdoc, false)
					c.Stdin = &w
				} else {
					c.Stdin = &word{s: "", lit: true}
				}
			case syntax.WordHdoc:
				w := wordOf(line, r.Word, true)
				w.s += "\n"
				c.Stdin = &w
			case syntax.RdrIn, syntax.RdrInOut:
				c.Stdin = &word{s: "< " + source(line, r.Word)}
			}
		}
		out = append(out, c)
		return true
	})
	return out, nil
}

// Quote is argv as a shell line that runs it: each word quoted where it
// needs it.
func Quote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangPOSIX)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

// gitConfigVar reports a variable that gives git configuration (an alias
// among it): GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_PARAMETERS...
func gitConfigVar(name string) bool { return strings.HasPrefix(name, "GIT_CONFIG") }

// source is a node's text in the line.
func source(line string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(line) || start > end {
		return "?"
	}
	return line[start:end]
}

// wordOf is a word's value when the line says it: quotes and escapes
// removed, lit false when it holds an expansion, a substitution, or (where
// the shell would expand it, glob) a pattern or braces.
func wordOf(line string, w *syntax.Word, glob bool) word {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if glob && hasPattern(v) {
				return word{s: source(line, w)}
			}
			b.WriteString(unescape(v, !glob))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return word{s: source(line, w)}
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return word{s: source(line, w)}
				}
				b.WriteString(unescapeQuoted(l.Value))
			}
		default:
			return word{s: source(line, w)}
		}
	}
	return word{s: b.String(), lit: true}
}

// hasPattern reports an unescaped glob character or brace expansion.
func hasPattern(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		case '{':
			if strings.ContainsAny(v[i:], ",") || strings.Contains(v[i:], "..") {
				return true
			}
		}
	}
	return false
}

// unescape removes an unquoted word's backslashes (a backslash-newline
// joins lines); in a here-document's body (heredoc) only those before $ ` \
// and a newline go.
func unescape(v string, heredoc bool) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			next := v[i+1]
			if next == '\n' {
				i++
				continue
			}
			if !heredoc || strings.IndexByte("$`\\", next) >= 0 {
				b.WriteByte(next)
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeQuoted is unescape inside double quotes: \$ \` \" \\ and \newline.
func unescapeQuoted(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			if v[i+1] != '\n' {
				b.WriteByte(v[i+1])
			}
			i++
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// Words are line's words when line is one simple command of plain words
// (quoted or not), nothing a shell would do besides: no pipe, list,
// redirection, assignment, variable, substitution or glob. ok is false
// otherwise.
func Words(line string) (argv []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(st.Redirs) > 0 || st.Background || st.Negated || st.Coprocess || len(call.Assigns) > 0 {
		return nil, false
	}
	cs, err := Commands(line)
	if err != nil || len(cs) != 1 || !cs[0].literal() || cs[0].Stdin != nil {
		return nil, false
	}
	return cs[0].strings(), true
}
