package cmd

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// customTools reads tools.custom from the config file's text: a list of
// tools, each with name, description, parameters (a JSON Schema, written
// as YAML), argv (a list of words, {NAME} a parameter's value), and
// optionally confirm, dangerous and timeout. Each is named by its line.
func customTools(file string, text []byte) ([]tools.CustomDef, error) {
	list := configNode(text, "tools", "custom")
	if file == "" || list == nil {
		return nil, nil
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return result.Errorf(result.InvalidArgument, "config file %s:%d: tools.custom: %s", file, n.Line, fmt.Sprintf(format, args...)).
			WithHint("each tool has name:, description:, argv: (a list of words; {NAME} is a parameter's value) and parameters: (a JSON Schema), and may have confirm:, dangerous: and timeout: (docs/agents.md, 'Custom tools')")
	}
	if list.Kind != yaml.SequenceNode {
		return nil, bad(list, "a list of tools, not %s", kindName(list))
	}
	var out []tools.CustomDef
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, bad(item, "a tool is a mapping (name: ..., argv: [...]), not %s", kindName(item))
		}
		d := tools.CustomDef{Source: fmt.Sprintf("%s:%d", file, item.Line)}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			var err error
			switch k.Value {
			case "name":
				err = v.Decode(&d.Name)
			case "description":
				err = v.Decode(&d.Description)
			case "argv":
				err = v.Decode(&d.Argv)
			case "confirm":
				err = v.Decode(&d.Confirm)
			case "dangerous":
				err = v.Decode(&d.Dangerous)
			case "timeout":
				var t string
				if err = v.Decode(&t); err == nil {
					d.Timeout, err = time.ParseDuration(t)
				}
			case "parameters":
				var m any
				if err = v.Decode(&m); err == nil {
					d.Parameters, err = json.Marshal(m)
				}
			default:
				return nil, bad(k, "unknown key %q in a tool", k.Value)
			}
			if err != nil {
				return nil, bad(v, "%s: %v", k.Value, err)
			}
		}
		out = append(out, d)
	}
	return out, nil
}
