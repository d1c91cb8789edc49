package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/approval"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// ApproveOptions are the parsed flags of `hunk approve`.
type ApproveOptions struct {
	ID   string
	List bool
	Yes  bool
}

// newApproveCmd builds the command; runF is its action (nil: approveRun).
func newApproveCmd(app *App, runF func(*App, *ApproveOptions) error) *cobra.Command {
	if runF == nil {
		runF = approveRun
	}
	opts := &ApproveOptions{}
	c := &cobra.Command{
		Use:   "approve [ID | --list]",
		Short: "Say yes to a plan a rule asked about, for its call made again",
		Long: `Approve is a person's yes given out of band. A call a rule asks about
(an exec command an ask rule names) that has no way to ask a person — hunk
call, an MCP client without elicitation, a script without a terminal — is
refused as CONFIRMATION_REQUIRED with a plan id; the plan waits here. hunk
approve ID shows the plan and, on a terminal, asks y/N (without one, --yes
says yes); the same call made again within 10 minutes then runs, once. A plan
not approved within 10 minutes expires. With no ID (or --list) it lists what
waits. The yes is kept in hunk's own state, which no sandboxed command can
reach; the model making the call again never counts as one.`,
		Example: `  hunk approve --list
  hunk approve 3f2a9c1b7d04
  hunk -C ~/proj approve 3f2a9c1b7d04 --yes`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if opts.ID != "" && opts.List {
				return result.Usagef("an ID and --list do not go together")
			}
			return runF(app, opts)
		},
	}
	f := c.Flags()
	f.BoolVar(&opts.List, "list", false, "list the plans waiting for a yes (also with no ID)")
	f.BoolVarP(&opts.Yes, "yes", "y", false, "say yes without asking at the terminal")
	return c
}

func approveRun(app *App, opts *ApproveOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	st, err := env.Workspace.Approvals()
	if err != nil {
		return result.Wrap(result.IOError, err, "approve: no store of approvals")
	}
	if opts.ID == "" {
		return app.Render(waitingOutput(st))
	}
	id := strings.ToLower(strings.TrimSpace(opts.ID))
	p, err := findWaiting(st, id)
	if err != nil {
		return err
	}
	how := "--yes"
	if !opts.Yes {
		yes, err := askApproval(app, p)
		if err != nil {
			return err
		}
		if !yes {
			return result.Errorf(result.Declined, "approve: plan %s was not approved; it waits until %s", id, p.Expires.Local().Format("15:04:05"))
		}
		how = "terminal"
	}
	by := how
	if u, err := user.Current(); err == nil {
		by = u.Username + " (" + how + ")"
	}
	p, err = st.Approve(id, by)
	if errors.Is(err, approval.ErrNotFound) {
		return result.Errorf(result.NotFound, "approve: plan %s expired while you were asked", id).WithHint("have the call made again: it asks again, under a new plan")
	}
	if err != nil {
		return result.Wrap(result.IOError, err, "approve")
	}
	text := fmt.Sprintf("approved plan %s (%s %s): the same call made again before %s runs it, once", p.ID, p.Tool, p.Summary, p.Expires.Local().Format("15:04:05"))
	return app.Render(&ops.Output{Text: text, Message: text, Details: map[string]any{"plan": p}})
}

// findWaiting is the plan id waiting for a yes, or NOT_FOUND saying what
// waits.
func findWaiting(st *approval.Store, id string) (approval.Plan, error) {
	list, err := st.List()
	if err != nil && !os.IsNotExist(err) {
		return approval.Plan{}, result.Wrap(result.IOError, err, "approve")
	}
	for _, p := range list {
		if p.ID == id {
			return p, nil
		}
	}
	e := result.Errorf(result.NotFound, "approve: no plan %s waits for a yes in this workspace (it expired, was taken, or was asked in another workspace: -C)", id)
	if len(list) > 0 {
		e = e.WithHint("hunk approve --list shows the " + result.Count(len(list), "plan") + " waiting")
	}
	return approval.Plan{}, e
}

// askApproval shows the plan on the terminal and asks y/N; without a
// terminal it refuses (--yes says yes in a script).
func askApproval(app *App, p approval.Plan) (bool, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return false, result.Errorf(result.ConfirmationRequired, "approve: there is no terminal to ask on; plan %s is not approved", p.ID).
			WithHint("run hunk approve " + p.ID + " at a terminal, or add --yes to say yes in a script")
	}
	defer tty.Close()
	fmt.Fprintf(tty, "hunk: plan %s (%s), asked %s:\n%sApprove it? [y/N] ", p.ID, p.Tool, p.Asked.Local().Format("15:04:05"), p.Text)
	_ = tty.SetReadDeadline(time.Now().Add(ttyWait))
	line, _ := bufio.NewReader(tty).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// waitingOutput lists the plans waiting for a yes, and the yeses not yet
// taken.
func waitingOutput(st *approval.Store) *ops.Output {
	list, _ := st.List()
	if list == nil {
		list = []approval.Plan{}
	}
	var b strings.Builder
	for _, p := range list {
		state := "waits until " + p.Expires.Local().Format("15:04:05")
		if !p.Approved.IsZero() {
			state = "approved by " + p.By + ", until " + p.Expires.Local().Format("15:04:05")
		}
		fmt.Fprintf(&b, "%s  %s  %s  (%s)\n", p.ID, p.Tool, p.Summary, state)
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(list) == 0 {
		text = "no plan waits for a yes"
	}
	return &ops.Output{Text: text, Message: text, Data: true, Details: map[string]any{"plans": list}}
}
