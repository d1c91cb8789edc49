package cmd

import "github.com/spf13/cobra"

// rootWith is hunk's root command with sub in place of the subcommand of
// its name: a command built with an action that records what it parsed.
func rootWith(app *App, sub *cobra.Command) *cobra.Command {
	root := newRootCmd(app, nil)
	for _, c := range root.Commands() {
		if c.Name() == sub.Name() {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(sub)
	return root
}
