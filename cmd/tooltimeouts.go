package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/tools"
)

// toolTimeouts reads tools.timeout from the config file's text: a mapping
// of tool names (hunk's own, or tools.custom's) to the longest a call of
// each may run. Only a tool that can be stopped with nothing half-made
// takes one (tools.Tool.TimeoutTaker: exec, a custom tool, search); a name
// hunk does not have, another tool, or a value that is not a positive
// duration is INVALID_ARGUMENT naming the file and the line.
func toolTimeouts(file string, text []byte, served tools.Set) (map[string]time.Duration, error) {
	m := configNode(text, "tools", "timeout")
	if file == "" || m == nil {
		return nil, nil
	}
	all := append(tools.All(sandbox.Network{}), served...)
	var takers []string
	for _, t := range all {
		if t.TimeoutTaker() && !slices.Contains(takers, t.Name) {
			takers = append(takers, t.Name)
		}
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return result.Errorf(result.InvalidArgument, "config file %s:%d: tools.timeout: %s", file, n.Line, fmt.Sprintf(format, args...)).
			WithHint("tools.timeout maps a tool to a duration (exec: 10m, search: 30s); the tools that take one: " + strings.Join(takers, ", "))
	}
	if m.Kind != yaml.MappingNode {
		return nil, bad(m, "a mapping of tool names to durations, not %s", kindName(m))
	}
	out := map[string]time.Duration{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		t := all.Lookup(k.Value)
		switch {
		case t == nil:
			return nil, bad(k, "hunk has no tool %q", k.Value)
		case !t.TimeoutTaker():
			return nil, bad(k, "%s cannot be stopped part way without leaving a change half made; its time is bounded by its size limits", k.Value)
		}
		d, err := parseDuration(v.Value)
		if err != nil || d <= 0 {
			return nil, bad(v, "%s: %q is not a positive duration (30s, 10m, 1h)", k.Value, v.Value)
		}
		out[k.Value] = d
	}
	return out, nil
}
