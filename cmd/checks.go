package cmd

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/verify"
)

// configChecks reads checks from the config file's text: a mapping of
// globs (workspace paths, ** across directories) to a command — a list,
// its argv, or a string, a shell line — run in the sandbox after a change
// for the changed files the glob matches, "{file}" standing for them
// (docs/verify.md). A value of another shape is INVALID_ARGUMENT naming
// the file and the line.
func configChecks(file string, text []byte) ([]verify.Configured, error) {
	m := configNode(text, "checks")
	if file == "" || m == nil {
		return nil, nil
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return result.Errorf(result.InvalidArgument, "config file %s:%d: checks: %s", file, n.Line, fmt.Sprintf(format, args...)).
			WithHint(`checks maps a glob to a command: "**/*.go": [gofmt, -l, "{file}"], or a shell line: "**/*.py": "python3 -m py_compile {file}"`)
	}
	if m.Kind != yaml.MappingNode {
		return nil, bad(m, "a mapping of globs to commands, not %s", kindName(m))
	}
	var out []verify.Configured
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Value == "" {
			return nil, bad(k, "an empty glob")
		}
		c := verify.Configured{Glob: k.Value}
		switch v.Kind {
		case yaml.ScalarNode:
			c.Sh = v.Value
		case yaml.SequenceNode:
			for _, a := range v.Content {
				if a.Kind != yaml.ScalarNode {
					return nil, bad(a, "%s: each word of the command is a string", k.Value)
				}
				c.Argv = append(c.Argv, a.Value)
			}
		default:
			return nil, bad(v, "%s: a command (a list of words, or a shell line), not %s", k.Value, kindName(v))
		}
		if c.Sh == "" && len(c.Argv) == 0 {
			return nil, bad(v, "%s: an empty command", k.Value)
		}
		out = append(out, c)
	}
	return out, nil
}
