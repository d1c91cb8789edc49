package cmd

import (
	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/ops"
)

// UndoOptions are the parsed flags of `hunk undo`.
type UndoOptions struct {
	ID      string
	N       int
	Session string
	Force   bool
	DryRun  bool
	Diff    bool
}

// newUndoCmd builds the command; runF is its action (nil: undoRun; tests pass
// one that records the parsed options).
func newUndoCmd(app *App, runF func(*App, *UndoOptions) error) *cobra.Command {
	if runF == nil {
		runF = undoRun
	}
	opts := &UndoOptions{}
	c := &cobra.Command{
		Use:   "undo [ID | -n N | --session S] [--dry-run] [--diff] [--force]",
		Short: "Take operations back: restore what their files were before",
		Long: `Undo restores the files of an operation (by default the newest one not undone
yet) as they were before it, in one transaction: files it changed get their
old bytes and mode back, files it created are removed, files it deleted or
moved come back. It is refused (STALE) when a file no longer holds what the
operation left there — someone changed it since — unless --force. An undo is
itself an operation: hunk log lists it and hunk undo ID takes it back. Undo
never touches git's refs or index.`,
		Example: `  hunk undo
  hunk undo 0003b289 --diff
  hunk undo -n 3 --dry-run
  hunk undo --session agent-7`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if !cmd.Flags().Changed("session") {
				opts.Session = ""
			}
			return runF(app, opts)
		},
	}
	f := c.Flags()
	f.IntVarP(&opts.N, "count", "n", 0, "take back the newest N operations not undone")
	f.StringVar(&opts.Session, "session", "", "take back every operation of session S not undone")
	f.BoolVar(&opts.Force, "force", false, "restore even files changed since the operation (their content stays in the history)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "say what would be restored, write nothing")
	f.BoolVar(&opts.Diff, "diff", false, "print a unified diff of the restore")
	return c
}

func undoRun(app *App, opts *UndoOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	out, err := ops.Undo(env, ops.UndoRequest{ID: opts.ID, N: opts.N, Session: opts.Session,
		Force: opts.Force, DryRun: opts.DryRun, Diff: opts.Diff})
	if err != nil {
		return err
	}
	return app.Render(out)
}
