// Package cmd holds hunk's cobra commands: each parses flags into an options
// struct, calls one engine, and renders the result for a human or as the JSON
// tool result. Configuration (viper) lives here and only here.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/interrupt"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/sandbox/docker"
	"github.com/hunk-dev/hunk/internal/sandbox/egress"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Version is set at build time (-ldflags "-X github.com/hunk-dev/hunk/cmd.Version=…").
var Version = "dev"

// prog is the name hunk calls itself in messages.
const prog = "hunk"

// linkMains are the behaviours the binary takes when invoked by another
// name: Codex's apply_patch (through a link of that name), and hunk's
// watchdog, which removes what a run started should hunk die
// (sandbox.Watch): this binary again, in that role.
var linkMains = map[string]func(app *App, args []string) int{
	"apply_patch": codexApplyPatchMain,
	"applypatch":  codexApplyPatchMain,
	watchdogName:  func(app *App, _ []string) int { return sandbox.WatchdogMain(app.Stdin) },
	// The egress door inside a sandbox (exec --allow-host).
	egress.DoorName: func(app *App, args []string) int { return egress.DoorMain(args, app.Stderr) },
}

// App is what every command gets: the decoded configuration, the standard
// streams and the workspace, opened on first use.
type App struct {
	Cfg    Config
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// ColorOut reports whether stdout gets ANSI colors.
	ColorOut bool

	ws         *workspace.Workspace
	configured bool
	// The command and the config file's text the command rules are read
	// from, when a surface that runs commands first asks (execRules).
	cfgCmd  *cobra.Command
	cfgText []byte
}

// Workspace opens the configured root once.
func (a *App) Workspace() (*workspace.Workspace, error) {
	if a.ws == nil {
		rules := func(real string) (*policy.Policy, error) {
			if len(a.Cfg.Policy) == 0 {
				return nil, nil
			}
			p, err := policy.New(a.Cfg.Policy, foldsCase(real))
			if err != nil {
				return nil, result.Usagef("%v", err).WithHint("patterns are gitignore-style globs relative to the workspace root: .env, secrets/, /build, **/*.pem")
			}
			return p, nil
		}
		limits := a.Cfg.HistoryLimits
		ws, err := workspace.Open(a.Cfg.Root, workspace.Options{
			Host:    !a.Cfg.WorkspaceOnly,
			Rules:   rules,
			Durable: a.Cfg.Fsync,
			History: workspace.HistoryOptions{Off: !a.Cfg.History, Limits: &limits},
		})
		if err != nil {
			if a.cfgCmd != nil && a.cfgCmd.Name() == "search" && result.As(err).Code == result.NotFound && isNumber(a.Cfg.Root) {
				// grep's and ripgrep's -C N is hunk's workspace, as git's.
				return nil, result.As(err).WithHint(fmt.Sprintf("-C is the workspace, as git's; for %s lines of context around each match, say --context %s", a.Cfg.Root, a.Cfg.Root))
			}
			return nil, err
		}
		for _, r := range ws.Refused {
			a.Warn("crash journal %s", r)
		}
		ws.SetGate(a.writeGate(ws))
		a.ws = ws
	}
	return a.ws, nil
}

// Main runs hunk with args (without the program name) and returns the exit code.
func Main(args []string) int {
	app := &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	sandbox.WatchdogCommand = watchdogCommand
	sandbox.DoorBinary = os.Executable
	docker.Register()
	if lm, ok := linkMains[filepath.Base(os.Args[0])]; ok {
		return lm(app, args)
	}
	root := newRootCmd(app, args)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !app.configured {
		// Flag parsing failed before configuration: honour --json anyway, so
		// a harness always gets its one JSON document.
		app.Cfg.JSON = wantsJSON(args)
	}
	return app.finishErr(err)
}

// wantsJSON scans raw arguments (up to "--") and the environment for --json.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	v := os.Getenv("HUNK_JSON")
	return v == "1" || v == "true"
}

// finishErr reports err (if any) in the configured mode and returns the exit code.
func (a *App) finishErr(err error) int {
	if err == nil {
		return 0
	}
	var silent *result.SilentExit
	if errors.As(err, &silent) {
		return silent.Code // already reported (exec passes its command's exit code through)
	}
	var re *result.Error
	if !errors.As(err, &re) {
		// Only cobra's own parsing errors reach here untyped: usage errors.
		re = result.Usagef("%s", err.Error()).WithHint("see 'hunk --help'")
		err = re
	}
	if a.Cfg.JSON {
		_ = result.Failure(err, nil).Encode(a.Stdout)
	} else if re.Msg != "" {
		fmt.Fprint(a.Stderr, result.Human(prog, err))
	}
	return result.ExitCode(err)
}

// Emit prints a successful result: the human text (unless -q) or, with
// --json, the tool result with content text and details. Extra content blocks
// (images) follow the text in JSON mode.
func (a *App) Emit(human, modelText string, details any, extra ...result.Content) error {
	if a.Cfg.JSON {
		r := result.Success(modelText, details)
		r.Content = append(r.Content, extra...)
		return r.Encode(a.Stdout)
	}
	if a.Cfg.Quiet || human == "" {
		return nil
	}
	if !strings.HasSuffix(human, "\n") {
		human += "\n"
	}
	_, err := io.WriteString(a.Stdout, human)
	return err
}

// EmitData is Emit for a command whose output is the data asked for (read's
// page, a directory listing): -q hides status lines, never that.
func (a *App) EmitData(human, modelText string, details any, extra ...result.Content) error {
	quiet := a.Cfg.Quiet
	a.Cfg.Quiet = false
	defer func() { a.Cfg.Quiet = quiet }()
	return a.Emit(human, modelText, details, extra...)
}

// Warn prints a warning on stderr (also in JSON mode, where stdout is reserved).
func (a *App) Warn(format string, args ...any) {
	fmt.Fprintf(a.Stderr, prog+": warning: "+format+"\n", args...)
}

func newRootCmd(app *App, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "hunk",
		Short: "Apply patches, read, write, edit and run commands safely inside a workspace",
		Long: `hunk gives coding agents, shell scripts and CI five operations on a workspace:
apply-patch, read, write, edit and exec. Every command is confined to the
workspace root (-C), never leaves a file half-written, keeps line endings and
encodings, and prints either short human output or, with --json, one JSON
tool result.`,
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return app.configure(cmd)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				e := result.Usagef("unknown command %q for \"hunk\"", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					e.WithHint("did you mean " + strings.Join(s, " or ") + "?")
				}
				return e.WithHint("see 'hunk --help'")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.SuggestionsMinimumDistance = 2 // "raed" -> read, as git's "did you mean"
	root.SetVersionTemplate("hunk {{.Version}}\n")
	root.SetIn(app.Stdin)
	root.SetOut(app.Stdout)
	root.SetErr(app.Stderr)
	// --help under --json (or HUNK_JSON) is one tool result like any other
	// output: the help text as its content.
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		asJSON, _ := c.Flags().GetBool("json")
		if !c.Flags().Changed("json") {
			if v, err := strconv.ParseBool(os.Getenv("HUNK_JSON")); err == nil {
				asJSON = v
			}
		}
		if !asJSON {
			defaultHelp(c, args)
			return
		}
		var b strings.Builder
		c.SetOut(&b)
		defaultHelp(c, args)
		c.SetOut(app.Stdout)
		_ = result.Success(b.String(), map[string]any{"help": c.CommandPath()}).Encode(app.Stdout)
	})
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A unified diff given as the argument starts with "---": pflag
		// takes it for a flag.
		if c.Name() == "apply-patch" && (strings.Contains(err.Error(), "\n") || strings.HasPrefix(err.Error(), "bad flag syntax: ---")) {
			return patchAsFile()
		}
		return result.Usagef("%s", err.Error()).WithHint(fmt.Sprintf("see '%s --help'", c.CommandPath()))
	})
	pf := root.PersistentFlags()
	pf.StringP("root", "C", ".", "workspace root directory")
	pf.Bool("workspace-only", true, "confine every path to the workspace root (false: host mode)")
	pf.Bool("json", false, "print one JSON tool result on stdout")
	pf.String("color", "auto", "color diffs: auto, always or never")
	pf.String("config", "", "config file (default $HUNK_CONFIG or $XDG_CONFIG_HOME/hunk/config.yaml)")
	pf.BoolP("quiet", "q", false, "print nothing on success")
	pf.Bool("fsync", false, "fsync every replaced file and its directory (durable against power loss)")
	addPolicyFlags(pf)
	pf.Bool("history", true, "record each change in the workspace's history, for hunk log and hunk undo (--history=false or --no-history: not)")
	pf.Bool("no-history", false, "do not record this run's changes in the history")
	pf.String("session", "", "tag this run's history entries with a session name (hunk log --session, hunk undo --session)")
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagDirname("root")
	for _, f := range []string{"root", "workspace-only", "json", "color", "quiet", "fsync", "history", "session"} {
		configKey(pf, f, f)
	}
	// Build only the command being run when it is plain which one it is
	// (hunk is started once per tool call; building every command and its
	// flags is wasted work), and all of them for help, completion and errors.
	if name, ok := commandNamed(args); ok {
		root.AddCommand(command(name)(app))
		// Nor cobra's completion command (four subcommands and their
		// flags): a named command is not completion.
		root.CompletionOptions.DisableDefaultCmd = true
	} else if versionOnly(args) {
		root.CompletionOptions.DisableDefaultCmd = true // hunk --version: no command at all
	} else {
		for _, c := range commands {
			root.AddCommand(c.new(app))
		}
	}
	return root
}

// versionOnly reports whether args are root flags and --version (or -v)
// alone: a run that prints the version needs no subcommand built.
func versionOnly(args []string) bool {
	if name := interrupt.Subcommand(args); name != "" {
		return false
	}
	return slices.ContainsFunc(args, func(a string) bool { return a == "--version" || a == "-v" }) &&
		!slices.ContainsFunc(args, func(a string) bool { return a == "--help" || a == "-h" })
}

// commands are hunk's subcommands, each built by its constructor with its
// own action (a test builds one with an action that records the parsed
// options instead).
var commands = []struct {
	name string
	new  func(*App) *cobra.Command
}{
	{"apply-patch", func(a *App) *cobra.Command { return newApplyPatchCmd(a, nil) }},
	{"read", func(a *App) *cobra.Command { return newReadCmd(a, nil) }},
	{"search", func(a *App) *cobra.Command { return newSearchCmd(a, nil) }},
	{"write", func(a *App) *cobra.Command { return newWriteCmd(a, nil) }},
	{"edit", func(a *App) *cobra.Command { return newEditCmd(a, nil) }},
	{"exec", func(a *App) *cobra.Command { return newExecCmd(a, nil) }},
	{"log", func(a *App) *cobra.Command { return newLogCmd(a, nil) }},
	{"undo", func(a *App) *cobra.Command { return newUndoCmd(a, nil) }},
	{"policy", func(a *App) *cobra.Command { return newPolicyCmd(a, nil) }},
	{"mcp", func(a *App) *cobra.Command { return newMCPCmd(a, nil) }},
	{"call", func(a *App) *cobra.Command { return newCallCmd(a, nil) }},
	{"serve", func(a *App) *cobra.Command { return newServeCmd(a, nil) }},
	{"tools", func(a *App) *cobra.Command { return newToolsCmd(a, nil) }},
	{"approve", func(a *App) *cobra.Command { return newApproveCmd(a, nil) }},
}

// command is the constructor of the subcommand named name (nil: none).
func command(name string) func(*App) *cobra.Command {
	for _, c := range commands {
		if c.name == name {
			return c.new
		}
	}
	return nil
}

// commandNamed finds the subcommand args name: the first argument that is
// not a root flag (or its value). ok is false when it is not a registered
// command (help, completion, a typo, none at all).
func commandNamed(args []string) (string, bool) {
	name := interrupt.Subcommand(args)
	return name, command(name) != nil
}

// addPlaceholderFlag adds --allow-placeholders to a command that changes
// files (config key allow-placeholders).
func addPlaceholderFlag(f *pflag.FlagSet) {
	f.Bool("allow-placeholders", false, `write a placeholder comment ("// ... existing code ...") where the new text leaves out lines of the old (refused as LAZY_EDIT otherwise)`)
	configKey(f, "allow-placeholders", "allow-placeholders")
}

// configKey marks flag name of fs as the command-line form of config key
// (e.g. "exec.driver", settable as HUNK_EXEC_DRIVER or in the config file).
func configKey(fs *pflag.FlagSet, name, key string) {
	_ = fs.SetAnnotation(name, annConfigKey, []string{key})
}

const annConfigKey = "hunk_config_key"

// exactArgs is cobra.ExactArgs with a usage error hunk can map to exit 2.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return result.Usagef("%s takes %s, got %d", cmd.CommandPath(), result.Count(n, "argument"), len(args)).
				WithHint(fmt.Sprintf("usage: %s", cmd.UseLine()))
		}
		return nil
	}
}

// maxArgs is cobra.MaximumNArgs with a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return result.Usagef("%s takes at most %s, got %d", cmd.CommandPath(), result.Count(n, "argument"), len(args)).
				WithHint(fmt.Sprintf("usage: %s", cmd.UseLine()))
		}
		return nil
	}
}

// setColor decides whether stdout is colored: --color, then NO_COLOR, then a TTY.
func (a *App) setColor() {
	switch a.Cfg.Color {
	case "always":
		a.ColorOut = true
	case "never":
		a.ColorOut = false
	default:
		_, noColor := os.LookupEnv("NO_COLOR")
		f, ok := a.Stdout.(*os.File)
		a.ColorOut = !noColor && ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
	}
	color.NoColor = !a.ColorOut
}

// Env is the operations' environment for this run: the workspace, the
// configured limits and the standard streams.
func (a *App) Env() (*ops.Env, error) {
	ws, err := a.Workspace()
	if err != nil {
		return nil, err
	}
	return &ops.Env{
		Workspace:  ws,
		ToolResult: a.Cfg.JSON,
		Limits: ops.Limits{
			ReadLimit: a.Cfg.Read.Limit, ReadMaxBytes: a.Cfg.Read.MaxBytes,
			WriteMaxBytes: a.Cfg.Write.MaxBytes, EditMaxBytes: a.Cfg.Edit.MaxBytes, PatchMaxBytes: a.Cfg.Patch.MaxBytes,
		},
		AllowPlaceholders: a.Cfg.AllowPlaceholders,
		Session:           a.Cfg.Session,
		Stdin:             a.Stdin,
		Warn:              func(msg string) { a.Warn("%s", msg) },
	}, nil
}

// Render prints an operation's output: the tool result under --json, else
// the message and its diff (colored on a terminal); -q hides status lines.
func (a *App) Render(out *ops.Output) error {
	if a.Cfg.JSON {
		return out.ToolResult().Encode(a.Stdout)
	}
	human := out.Message
	if out.Diff != "" {
		if out.DiffFirst {
			human = a.colorDiff(out.Diff) + human
		} else {
			human += "\n" + a.colorDiff(out.Diff)
		}
	}
	if out.Data {
		return a.EmitData(human, "", nil)
	}
	return a.Emit(human, "", nil)
}

// isNumber reports whether s is a whole number, as a count of lines is.
func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
