package cmd

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/mcpserver"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// toolsOptions are `hunk tools` parsed.
type toolsOptions struct {
	For, Set        string
	Network, Strict bool
}

// newToolsCmd builds the command; runF is its action (nil: toolsRun; tests
// pass one that records the parsed options).
func newToolsCmd(app *App, runF func(*App, *toolsOptions) error) *cobra.Command {
	if runF == nil {
		runF = toolsRun
	}
	o := &toolsOptions{}
	c := &cobra.Command{
		Use:   "tools --for openai|openai-chat|codex|anthropic|gemini|mcp",
		Short: "Print ready tool declarations for a provider's API or MCP",
		Long: `Print the declarations of hunk's tools, ready to paste into a request:
  openai       Responses API tools: hunk's tools as functions, plus apply_patch and shell
  openai-chat  Chat Completions tools: hunk's tools as functions
  codex        Codex's freeform apply_patch tool with its Lark grammar
  anthropic    Messages API tools: the text editor and bash tools, plus hunk's tools
  gemini       Gemini API tools: hunk's tools as functionDeclarations
               (--tools gemini: Gemini CLI's own read_file, write_file, replace)
  mcp          the tools/list result hunk mcp serves
They are generated from the same definitions the MCP server uses.`,
		Example: `  hunk tools --for openai > tools.json
  hunk tools --for openai --strict > tools.json
  hunk tools --for mcp --tools filesystem`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app, o)
		},
	}
	c.Flags().StringVar(&o.For, "for", "", "openai, openai-chat, codex, anthropic, gemini or mcp")
	c.Flags().StringVar(&o.Set, "tools", "", toolsHelp())
	c.Flags().BoolVar(&o.Strict, "strict", false, "with --for openai or openai-chat: parameters for OpenAI's strict mode (every property required, optional ones nullable; exec's env left out)")
	c.Flags().BoolVar(&o.Network, "network", false, "declare exec as reaching the network (as hunk mcp --network)")
	return c
}

// toolsRun prints the declarations.
func toolsRun(app *App, o *toolsOptions) error {
	limits, err := app.execLimits()
	if err != nil {
		return err
	}
	limits.Network.Host = o.Network // and the configuration's allowlist, as hunk mcp declares it
	sel, err := app.selectTools(o.Set, "hunk", limits.Network)
	if err != nil {
		return err
	}
	if err := sel.Twins(); err != nil {
		return err
	}
	if err := app.addCustomTools(sel); err != nil {
		return err
	}
	s := sel.WithLimits(limits.Timeout, limits.Shown)
	if o.Strict && o.For != "openai" && o.For != "openai-chat" {
		return result.Usagef("--strict is OpenAI's strict mode: it goes with --for openai or openai-chat")
	}
	var doc any
	switch o.For {
	case "openai":
		doc = tools.OpenAI(s, o.Strict)
	case "openai-chat":
		doc = tools.OpenAIChat(s, o.Strict)
	case "codex":
		doc = tools.Codex()
	case "anthropic":
		doc = tools.Anthropic(s)
	case "gemini":
		doc = tools.GeminiDeclarations(s)
	case "mcp":
		list := []any{}
		for _, t := range s {
			list = append(list, mcpserver.Declaration(t))
		}
		doc = map[string]any{"tools": list}
	case "":
		return result.Usagef("--for is required: openai, openai-chat, codex, anthropic, gemini or mcp")
	default:
		return result.Usagef("--for must be openai, openai-chat, codex, anthropic, gemini or mcp, not %q", o.For)
	}
	enc := json.NewEncoder(app.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
