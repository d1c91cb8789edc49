package cmd

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/mcpserver"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/readtrack"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/tools"
)

// agentOptions are the flags shared by the front-ends that serve tool
// calls (mcp, call): which tools, and the exec policy calls run under.
type agentOptions struct {
	Tools    string
	Network  bool // --network: the host's whole network
	ReadOnly bool
	NoTrack  bool // no read tracking
	// call: one tool call per run (read tracking needs --session, kept in
	// the history store); otherwise a server whose connection is the session.
	call bool
}

func addAgentFlags(f *pflag.FlagSet, o *agentOptions) {
	f.StringVar(&o.Tools, "tools", "", toolsHelp())
	f.BoolVar(&o.Network, "network", false, "let exec's commands reach the network")
	f.BoolVar(&o.ReadOnly, "read-only", false, "exec's commands get the workspace read-only")
	f.BoolVar(&o.NoTrack, "no-track", false, "no read tracking: let a write replace a file the session has not read or that changed since it read it")
	addExecFlags(f, true)
}

// toolsHelp is --tools' help, from the table of tool sets.
func toolsHelp() string {
	var sets []string
	for _, d := range tools.Sets() {
		sets = append(sets, d.Name+" ("+d.Said()+")")
	}
	return "the tools served: a set, " + strings.Join(sets, " or ") + ", or a list of sets and tools, -NAME taking one away (read,search,edit; hunk,-exec); default: tools.enable in the config, else hunk (hunk call: every tool)"
}

// session is the tools' session for this run: the workspace, the limits
// and the exec policy of the configuration and flags.
func (a *App) session(o *agentOptions) (*tools.Session, tools.Set, error) {
	env, err := a.Env()
	if err != nil {
		return nil, nil, err
	}
	env.ToolResult, env.Agent = true, true
	env.Stdin = nil
	limits, err := a.execLimits()
	if err != nil {
		return nil, nil, err
	}
	limits.Network.Host, limits.ReadOnly = o.Network, o.ReadOnly
	if err := limits.Check(); err != nil {
		return nil, nil, err
	}
	if err := a.trackReads(env, o); err != nil {
		return nil, nil, err
	}
	sess := &tools.Session{Env: env, Exec: limits}
	def := "hunk"
	if o.call {
		def = "hunk,insert,filesystem,claude-code,openhands,gemini" // hunk call answers every tool hunk has
	}
	sel, err := a.selectTools(o.Tools, def, limits.Network)
	if err != nil {
		return nil, nil, err
	}
	if err := sel.Twins(); err != nil && !o.call {
		return nil, nil, err
	}
	if err := a.addCustomTools(sel); err != nil {
		return nil, nil, err
	}
	if sess.Timeouts, err = toolTimeouts(a.Cfg.ConfigFile, a.cfgText, sel.Set); err != nil {
		return nil, nil, err
	}
	if sess.Checks, err = configChecks(a.Cfg.ConfigFile, a.cfgText); err != nil {
		return nil, nil, err
	}
	p := env.Workspace.Policy()
	sel.Narrow(ruleSaid(p.Whole(policy.WriteDeny), p.Whole(policy.ReadDeny)), ruleSaid(p.Whole(policy.ReadDeny)))
	sel.Set = sel.WithLimits(limits.Timeout, limits.Shown)
	sess.Tools = sel
	return sess, sel.Set, nil
}

// addCustomTools adds the config's tools.custom to what a surface serves.
func (a *App) addCustomTools(sel *tools.Selection) error {
	defs, err := customTools(a.Cfg.ConfigFile, a.cfgText)
	if err != nil {
		return err
	}
	set, err := tools.Custom(defs)
	if err != nil {
		return err
	}
	sel.Set = append(sel.Set, set...)
	return nil
}

// selectTools is what a surface serves: --tools (spec), else the config's
// tools.enable, else def; less tools.disable.
func (a *App) selectTools(spec, def string, network sandbox.Network) (*tools.Selection, error) {
	from := "HUNK_TOOLS_DISABLE"
	if a.Cfg.ConfigFile != "" {
		from = a.Cfg.ConfigFile + " (or HUNK_TOOLS_DISABLE)"
	}
	if spec == "" {
		spec = cmp.Or(strings.Join(a.Cfg.Tools.Enable, ","), def)
	}
	return tools.Select(spec, a.Cfg.Tools.Disable, from, network)
}

// ruleSaid is the first of the rules as a message names it ("" none).
func ruleSaid(rules ...*policy.Rule) string {
	for _, r := range rules {
		if r != nil {
			return r.String()
		}
	}
	return ""
}

// trackReads sets up the session's read tracking (readtrack.Tracker): a
// server's in memory, its entries tagged with a session id of its own; a
// call's under --session, in the history store across runs.
func (a *App) trackReads(env *ops.Env, o *agentOptions) error {
	if !o.call {
		serverSession(env, env.Session, o.NoTrack)
		return nil
	}
	if o.NoTrack || env.Session == "" {
		return nil
	}
	store, err := env.Workspace.History()
	if err != nil {
		a.Warn("no read tracking for session %s: %v", env.Session, err)
		return nil
	}
	t, err := readtrack.Load(store, env.Session)
	if err != nil {
		a.Warn("read tracking: %v; starting afresh", err)
	}
	env.Reads = t
	return nil
}

// serverSession makes env a server session's: tagged session (a new
// "mcp-" id when ""), its reads tracked in memory unless noTrack.
func serverSession(env *ops.Env, session string, noTrack bool) {
	if session == "" {
		var r [4]byte
		_, _ = rand.Read(r[:])
		session = "mcp-" + hex.EncodeToString(r[:])
	}
	env.Session, env.Reads = session, nil
	if !noTrack {
		env.Reads = readtrack.New()
	}
}

// newMCPCmd builds the command; runF is its action (nil: mcpRun; tests
// pass one that records the parsed options).
func newMCPCmd(app *App, runF func(*App, *agentOptions) error) *cobra.Command {
	if runF == nil {
		runF = mcpRun
	}
	o := &agentOptions{}
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve hunk's tools to an agent over MCP (stdio)",
		Long: `Serve hunk's tools over the Model Context Protocol on stdin and stdout, for
an agent harness that loads MCP servers (Claude Code, Claude Desktop, Codex,
and others). Every tool is confined to the workspace (-C); roots the client
sends may narrow it, never widen it. Tool failures come back as isError
results carrying hunk's error code; exec runs in the sandbox under the
policy given here (no network unless --network), never one a call asks for.

--tools filesystem serves the reference MCP filesystem server's tools
(read_text_file, write_file, edit_file, ...) with hunk's guarantees.`,
		Example: `  hunk mcp -C ~/src/project
  hunk mcp -C . --tools filesystem
  claude mcp add hunk -- hunk mcp -C "$PWD"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app, o)
		},
	}
	addAgentFlags(c.Flags(), o)
	return c
}

// mcpRun serves the tools on stdin and stdout until the client goes.
func mcpRun(app *App, o *agentOptions) error {
	sess, set, err := app.session(o)
	if err != nil {
		return err
	}
	sess.Env.Warn = func(msg string) { fmt.Fprintf(app.Stderr, "hunk mcp: warning: %s\n", msg) }
	if f, ok := app.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		// A person ran it, not a client: say how a client runs it.
		fmt.Fprint(app.Stderr, mcpClientLines(sess.Env.Workspace.Dir()))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return mcpserver.Serve(ctx, mcpserver.Options{Version: Version, Tools: set, Session: sess, Log: app.Stderr},
		app.Stdin, app.Stdout)
}

// mcpClientLines is what hunk mcp says on a terminal, where no client is
// attached: how the common clients run it over this workspace (each line
// as docs/agents.md gives it). It goes on serving: a person may type.
func mcpClientLines(dir string) string {
	q := cmdrule.Quote([]string{dir})
	js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"hunk": map[string]any{"command": "hunk", "args": []string{"mcp", "-C", dir}}}})
	return "hunk mcp: serving MCP on stdin and stdout; a client runs it. To add hunk to one:\n" +
		"  Claude Code:  claude mcp add hunk -- hunk mcp -C " + q + "\n" +
		"  Codex CLI:    codex mcp add hunk -- hunk mcp -C " + q + "\n" +
		"                (for codex exec, default_tools_approval_mode = \"approve\" in [mcp_servers.hunk] of ~/.codex/config.toml)\n" +
		"  Gemini CLI:   gemini mcp add --scope user --trust hunk hunk mcp -C " + q + "\n" +
		"  Copilot CLI:  copilot mcp add hunk -- hunk mcp -C " + q + "\n" +
		"  JSON (Claude Desktop, Cursor, others): " + string(js) + "\n" +
		"  more in docs/agents.md; Ctrl-D or Ctrl-C ends this.\n"
}
