package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// The path policy's rules come from three places, and add up: a rule given
// anywhere holds (a flag cannot drop one the config file sets). Each keeps
// its source for the refusals that name it.
var policyKinds = []struct {
	kind policy.Kind
	env  string // the variable: patterns separated by commas
	key  string // the config file's key
}{
	{policy.ReadDeny, "HUNK_DENY_READ", "policy.read.deny"},
	{policy.WriteDeny, "HUNK_DENY_WRITE", "policy.write.deny"},
	{policy.WriteAllow, "HUNK_ALLOW_WRITE", "policy.write.allow"},
	{policy.WriteAsk, "HUNK_ASK_WRITE", "policy.write.ask"},
}

// addPolicyFlags adds --deny-read, --deny-write and --allow-write to every
// command.
func addPolicyFlags(pf *pflag.FlagSet) {
	pf.StringArray("deny-read", nil, "never read (nor write) paths matching `GLOB` (gitignore-style, from the workspace root; repeatable)")
	pf.StringArray("deny-write", nil, "never write paths matching `GLOB` (repeatable)")
	pf.StringArray("allow-write", nil, "write only paths matching `GLOB` (repeatable; with none, every path not denied)")
	pf.StringArray("ask-write", nil, "change paths matching `GLOB` only with a person's yes (repeatable; exec holds them read-only)")
}

// policyRules gathers the rules of the flags, the HUNK_* variables and the
// config file (file: "" for none; text: its content, as configure read it).
func policyRules(cmd *cobra.Command, file string, text []byte) ([]policy.Rule, error) {
	var rules []policy.Rule
	// The file's own rules, apart from the HUNK_* variables viper merges
	// in: parsed from its text again only when it sets a policy.
	var fileRules *viper.Viper
	var lines []string
	if file != "" {
		if b := text; bytes.Contains(b, []byte("policy")) {
			fileRules = viper.New()
			fileRules.SetConfigType("yaml")
			if fileRules.ReadConfig(bytes.NewReader(b)) != nil {
				fileRules = nil
			}
			lines = strings.Split(string(b), "\n")
		}
	}
	for _, k := range policyKinds {
		flag := k.kind.Flag()
		if f := cmd.Flags().Lookup(strings.TrimPrefix(flag, "--")); f != nil {
			vals, _ := cmd.Flags().GetStringArray(f.Name)
			for _, v := range vals {
				for _, p := range policy.SplitList(v) { // one rule for every surface: ".env,*.pem" is two
					rules = append(rules, policy.Rule{Kind: k.kind, Pattern: p, Source: flag})
				}
			}
		}
		if v, ok := os.LookupEnv(k.env); ok {
			for _, p := range policy.SplitList(v) {
				rules = append(rules, policy.Rule{Kind: k.kind, Pattern: p, Source: k.env})
			}
		}
		if fileRules != nil && fileRules.IsSet(k.key) {
			vals, err := toStrings(fileRules.Get(k.key))
			if err != nil {
				return nil, result.Errorf(result.InvalidArgument, "config file %s: %s: %v", file, k.key, err).
					WithHint("give a list of patterns, e.g. " + k.key + ": [\".env\", \"secrets/\"]")
			}
			for _, v := range vals {
				for _, p := range policy.SplitList(v) {
					rules = append(rules, policy.Rule{Kind: k.kind, Pattern: p, Source: file + ":" + lineOf(lines, v)})
				}
			}
		}
	}
	return rules, nil
}

// toStrings reads a config value that must be a list of strings (or one).
func toStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errNotStrings
			}
			out = append(out, s)
		}
		return out, nil
	case []string:
		return v, nil
	}
	return nil, errNotStrings
}

var errNotStrings = result.Usagef("not a list of patterns")

// lineOf is the line (1-based) of the config file that holds the pattern,
// "?" when none does.
func lineOf(lines []string, pattern string) string {
	for i, l := range lines {
		if strings.Contains(l, `"`+pattern+`"`) || strings.Contains(l, `'`+pattern+`'`) {
			return strconv.Itoa(i + 1)
		}
	}
	for i, l := range lines {
		if strings.Contains(l, pattern) {
			return strconv.Itoa(i + 1)
		}
	}
	return "?"
}

// foldsCase reports whether the file system of dir compares names without
// regard to case: dir named with its case changed is dir itself.
func foldsCase(dir string) bool {
	other := swapCase(filepath.Base(dir))
	if other == filepath.Base(dir) {
		return false
	}
	a, err1 := os.Stat(dir)
	b, err2 := os.Stat(filepath.Join(filepath.Dir(dir), other))
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// policyCheckOptions are `hunk policy check` parsed.
type policyCheckOptions struct {
	Paths       []string
	Read, Write bool
	Exec        bool // Paths are a command's argv, decided by the command rules
}

// newPolicyCmd builds the command; runF is check's action (nil:
// policyCheckRun; tests pass one that records the parsed options).
func newPolicyCmd(app *App, runF func(*App, *policyCheckOptions) error) *cobra.Command {
	if runF == nil {
		runF = policyCheckRun
	}
	c := &cobra.Command{
		Use:   "policy",
		Short: "Show how the path policy decides paths",
		Long: `The path policy says which paths of the workspace hunk may read and write:
--deny-read GLOB (neither read nor written), --deny-write GLOB, --allow-write
GLOB (only those written), the same as HUNK_DENY_READ, HUNK_DENY_WRITE and
HUNK_ALLOW_WRITE (comma-separated), and policy.read.deny, policy.write.deny
and policy.write.allow in the config file. Rules from all three add up;
deny wins. Patterns are gitignore-style, relative to the workspace root.`,
		Args: exactArgs(0),
	}
	o := &policyCheckOptions{}
	check := &cobra.Command{
		Use:   "check [--read|--write] PATH... | --exec -- CMD [ARGS...]",
		Short: "Say whether each path may be read and written (or a command run), and the deciding rule",
		Example: `  hunk --deny-read .env policy check .env src/main.go
  hunk policy check --write .github/workflows/ci.yml
  hunk policy check --exec -- git push origin
  hunk policy check --exec --deny-cmd 'git push' -- sh -c 'make && git push'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			return runF(app, o)
		},
	}
	check.Flags().BoolVar(&o.Read, "read", false, "check reading only")
	check.Flags().BoolVar(&o.Write, "write", false, "check writing only")
	check.Flags().BoolVar(&o.Exec, "exec", false, "decide the command after -- by exec's command rules (nothing runs)")
	addRuleFlags(check.Flags())
	c.AddCommand(check)
	return c
}

// policyCheckRun decides each path and says so; exit 1 when one is denied.
func policyCheckRun(app *App, o *policyCheckOptions) error {
	if o.Exec {
		if len(o.Paths) == 0 {
			return result.Usagef("name the command to check").WithHint("hunk policy check --exec -- CMD [ARGS...]")
		}
		rs, err := app.execRules()
		if err != nil {
			return err
		}
		d, text, code := execrun.Explain(rs, o.Paths)
		if err := app.Render(&ops.Output{Text: text, Message: text, Details: d, Data: true, ExitCode: code}); err != nil {
			return err
		}
		if code != 0 {
			return silentExit(code)
		}
		return nil
	}
	env, err := app.Env()
	if err != nil {
		return err
	}
	out, err := ops.CheckPolicy(env, o.Paths, o.Read, o.Write)
	if err != nil {
		return err
	}
	if unmatched, complete := env.Workspace.Policy().Unmatched(env.Workspace.Dir()); complete {
		for _, r := range unmatched {
			app.Warn("policy rule %s matches nothing in the workspace (a typo? for a path that may appear later, that is as meant)", r)
		}
	}
	if err := app.Render(out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return silentExit(out.ExitCode)
	}
	return nil
}
