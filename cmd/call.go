package cmd

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/call"
	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/result"
)

// callOptions are `hunk call` parsed: the agent's settings, the call's
// shape (--format; "" detected) and the call itself.
type callOptions struct {
	agentOptions
	Format string
	Raw    []byte
}

// newCallCmd builds the command; runF is its action (nil: callRun; tests
// pass one that records the parsed options).
func newCallCmd(app *App, runF func(*App, *callOptions) error) *cobra.Command {
	if runF == nil {
		runF = callRun
	}
	o := &callOptions{}
	c := &cobra.Command{
		Use:   "call [JSON]",
		Short: "Answer one tool call in a provider's own shape (OpenAI, Codex, Anthropic, hunk)",
		Long: `Read one tool call as JSON (the argument, or stdin) and print its result in the
same provider's shape, so a harness passes calls through with no glue:

  OpenAI Responses apply_patch_call  -> apply_patch_call_output
  OpenAI Responses shell_call        -> shell_call_output (run in the sandbox)
  Codex custom_tool_call apply_patch -> custom_tool_call_output
  Anthropic tool_use (str_replace_based_edit_tool, bash) -> tool_result
  {"tool": NAME, "arguments": {...}} -> hunk's --json tool result

The shape is detected; --format names it. A malformed or unknown call gets an
error result in the same shape. Exit status: 0, or 1 when the call failed.`,
		Example: `  echo '{"tool":"read","arguments":{"path":"go.mod"}}' | hunk call
  hunk call '{"type":"tool_use","id":"toolu_1","name":"str_replace_based_edit_tool","input":{"command":"view","path":"README.md"}}'`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var raw []byte
			if len(args) == 1 {
				raw = []byte(args[0])
			} else {
				if f, ok := app.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
					return result.Usagef("no tool call given: stdin is a terminal").WithHint("pipe the call in as JSON, or give it as the argument")
				}
				b, err := readUpTo(app.Stdin, app.Cfg.Patch.MaxBytes)
				if err != nil {
					return result.Wrap(result.IOError, err, "reading the call from stdin")
				}
				raw = b
			}
			if strings.TrimSpace(string(raw)) == "" {
				return result.Usagef("no tool call given").WithHint("pass the call as JSON on stdin or as the argument")
			}
			o.Raw = raw
			return runF(app, o)
		},
	}
	addAgentFlags(c.Flags(), &o.agentOptions)
	c.Flags().StringVar(&o.Format, "format", "", "the call's shape: "+strings.Join(call.Formats, ", ")+" (default: detected)")
	return c
}

// callRun answers the call.
func callRun(app *App, o *callOptions) error {
	o.call = true
	sess, _, err := app.session(&o.agentOptions)
	if err != nil {
		return err
	}
	ctx, handling := interrupt.Context()
	sess.Ready = handling
	out, failed := call.Run(ctx, sess, o.Raw, o.Format)
	if r := sess.Env.Reads; r != nil {
		if err := r.Save(); err != nil {
			app.Warn("read tracking: %v", err)
		}
	}
	enc := json.NewEncoder(app.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if failed {
		return silentExit(1)
	}
	return nil
}
