package cmd

import (
	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/ops"
)

// LogOptions are the parsed flags of `hunk log`.
type LogOptions struct {
	N       int
	Session string
	Diff    string
}

// newLogCmd builds the command; runF is its action (nil: logRun; tests pass
// one that records the parsed options).
func newLogCmd(app *App, runF func(*App, *LogOptions) error) *cobra.Command {
	if runF == nil {
		runF = logRun
	}
	opts := &LogOptions{}
	c := &cobra.Command{
		Use:   "log [-n N] [--session S] [--diff ID]",
		Short: "List the operations the history holds, newest first",
		Long: `Log lists the changes hunk made in the workspace — every write, edit, insert,
apply-patch and tool call that wrote — newest first, each with its id, time,
command and A/M/D summary. The history lives outside the workspace, in
$XDG_STATE_HOME/hunk/history (~/.local/state/hunk/history). --diff ID shows
what one operation changed; hunk undo takes operations back.`,
		Example: `  hunk log -n 5
  hunk log --diff 0003b289
  hunk log --session agent-7 --json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("session") {
				opts.Session = ""
			}
			return runF(app, opts)
		},
	}
	f := c.Flags()
	f.IntVarP(&opts.N, "max-count", "n", 0, "list at most N operations")
	f.StringVar(&opts.Session, "session", "", "only the operations of session S")
	f.StringVar(&opts.Diff, "diff", "", "show what operation ID changed, as a diff")
	return c
}

func logRun(app *App, opts *LogOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	out, err := ops.Log(env, ops.LogRequest{N: opts.N, Session: opts.Session, Diff: opts.Diff})
	if err != nil {
		return err
	}
	return app.Render(out)
}
