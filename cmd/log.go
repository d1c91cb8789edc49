package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// LogOptions are the parsed flags of `hunk log`.
type LogOptions struct {
	N         int
	Session   string
	Diff      string
	Decisions bool
}

// newLogCmd builds the command; runF is its action (nil: logRun; tests pass
// one that records the parsed options).
func newLogCmd(app *App, runF func(*App, *LogOptions) error) *cobra.Command {
	if runF == nil {
		runF = logRun
	}
	opts := &LogOptions{}
	c := &cobra.Command{
		Use:   "log [-n N] [--session S] [--diff ID | --decisions]",
		Short: "List the operations the history holds, newest first",
		Long: `Log lists the changes hunk made in the workspace — every write, edit, insert,
apply-patch and tool call that wrote — newest first, each with its id, time,
command and A/M/D summary. The history lives outside the workspace, in
$XDG_STATE_HOME/hunk/history (~/.local/state/hunk/history). --diff ID shows
what one operation changed; hunk undo takes operations back. --decisions lists
the decisions of the person's rules instead (a command rule's allow, deny or
ask and the answer, a tool not served), newest first.`,
		Example: `  hunk log -n 5
  hunk log --diff 0003b289
  hunk log --session agent-7 --json
  hunk log --decisions -n 20`,
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
	f.BoolVar(&opts.Decisions, "decisions", false, "list the decisions of the command rules and the tool selection (the audit trail), newest first")
	return c
}

func logRun(app *App, opts *LogOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	if opts.Decisions {
		if opts.Diff != "" {
			return result.Usagef("--decisions and --diff do not go together")
		}
		return app.Render(decisionsOutput(env, opts))
	}
	out, err := ops.Log(env, ops.LogRequest{N: opts.N, Session: opts.Session, Diff: opts.Diff})
	if err != nil {
		return err
	}
	return app.Render(out)
}

// decisionsOutput is the audit trail, newest first (at most N, of session S
// when given): one line each, the time, the decision, the tool (and a
// command's program), what decided it and how a person was asked.
func decisionsOutput(env *ops.Env, opts *LogOptions) *ops.Output {
	var list []history.Decision
	if st, err := env.Workspace.History(); err == nil {
		list, _ = st.Decisions()
	}
	slices.Reverse(list)
	kept := []history.Decision{}
	var b strings.Builder
	for _, d := range list {
		if opts.Session != "" && d.Session != opts.Session {
			continue
		}
		if opts.N > 0 && len(kept) == opts.N {
			break
		}
		kept = append(kept, d)
		what := d.Tool
		if d.Program != "" {
			what += " " + d.Program
		}
		fmt.Fprintf(&b, "%s  %-11s  %s  by %s", d.Time.Local().Format("2006-01-02 15:04:05"), d.Decision, what, d.By)
		if d.How != "" {
			fmt.Fprintf(&b, " (how: %s)", d.How)
		}
		if d.Reason != "" {
			fmt.Fprintf(&b, " (%s)", d.Reason)
		}
		if d.Session != "" {
			fmt.Fprintf(&b, "  [%s]", d.Session)
		}
		b.WriteString("\n")
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(kept) == 0 {
		text = "no decisions recorded (the command rules and the tool selection record theirs here)"
	}
	return &ops.Output{Text: text, Message: text, Data: true, Details: map[string]any{"decisions": kept}}
}
