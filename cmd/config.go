package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cast"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
)

// Config is hunk's whole configuration, decoded once by the root command from
// flags > HUNK_* environment > config file > defaults. Commands read it; no
// one else reads viper.
type Config struct {
	Root          string
	WorkspaceOnly bool
	JSON          bool
	Color         string
	Quiet         bool
	// Fsync makes every file replacement durable against power loss
	// (fsync of the file and its directory); off, replacements are still
	// atomic, and cost no disk flush.
	Fsync bool
	// AllowPlaceholders lets an edit write a placeholder comment ("...
	// existing code ...") in place of lines it leaves out (LAZY_EDIT).
	AllowPlaceholders bool
	// ConfigFile is the file the configuration was read from ("" for none).
	ConfigFile string
	// Policy are the path policy's rules (flags, HUNK_* variables and the
	// config file, added up), compiled when the workspace opens.
	Policy []policy.Rule

	// History records every change in the workspace's history (hunk log,
	// hunk undo); HistoryLimits bound what it keeps.
	History       bool
	HistoryLimits history.Limits
	// Session tags the operations' history entries and keys read tracking.
	Session string

	Read  ReadConfig
	Write WriteConfig
	Edit  EditConfig
	Patch PatchConfig
	Exec  ExecConfig
	Tools ToolsConfig
}

// ToolsConfig is which tools the agent surfaces serve: tools.enable (a
// set or a list, as --tools) and tools.disable (taken away whatever
// --tools says).
type ToolsConfig struct {
	Enable, Disable []string
}

// ReadConfig configures `hunk read`.
type ReadConfig struct {
	Limit    int
	MaxBytes int
}

// WriteConfig configures `hunk write`.
type WriteConfig struct {
	MaxBytes int64
}

// EditConfig configures `hunk edit`.
type EditConfig struct {
	MaxBytes int64
}

// PatchConfig configures `hunk apply-patch`.
type PatchConfig struct {
	Compat   string
	Strict   bool
	MaxBytes int64
}

// ExecConfig configures `hunk exec`.
type ExecConfig struct {
	Driver    string
	Image     string
	Timeout   time.Duration
	Memory    string
	Pids      int
	CPUs      float64
	MaxOutput string
	// ShowOutput is what a model's result shows of each stream.
	ShowOutput string
	KeepWarm   bool
	Caches     bool
	GitWrite   bool
	Record     bool
	Idle       time.Duration
	// Allow and Deny are the egress rules (exec.network.allow, .deny),
	// DNS the server the proxy asks.
	Allow, Deny []string
	DNS         string
	// Default decides the commands no rule names (exec.default: allow,
	// ask or deny); Rules are the command rules (App.execRules: read
	// when a surface that runs commands asks, not by every command).
	Default string
	Rules   *cmdrule.Rules
}

// defaults are the values used when no flag, variable or file sets a key.
var defaults = execDefaults(map[string]any{
	"root":                    ".",
	"workspace-only":          true,
	"json":                    false,
	"color":                   "auto",
	"quiet":                   false,
	"read.limit":              2000,
	"read.max-bytes":          50 * 1024,
	"write.max-bytes":         int64(64 << 20),
	"edit.max-bytes":          int64(1 << 30),
	"apply-patch.compat":      "",
	"apply-patch.strict":      false,
	"allow-placeholders":      false,
	"apply-patch.max-bytes":   int64(256 << 20),
	"history":                 true,
	"history-max-operations":  history.DefaultLimits.Count,
	"history-max-bytes":       history.DefaultLimits.Bytes,
	"history-max-age":         history.DefaultLimits.Age,
	"history-max-total-bytes": history.DefaultLimits.Total,
	"session":                 "",
	"exec.default":            "allow",
	"tools.enable":            []string{},
	"tools.disable":           []string{},
})

// configure builds the configuration for the command about to run.
func (a *App) configure(cmd *cobra.Command) error {
	v := viper.New()
	for k, d := range defaults {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("HUNK")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	var bindErr error
	bind := func(f *pflag.Flag) {
		if keys, ok := f.Annotations[annConfigKey]; ok && len(keys) == 1 {
			if err := v.BindPFlag(keys[0], f); err != nil {
				bindErr = err
			}
		}
	}
	cmd.Flags().VisitAll(bind)
	cmd.InheritedFlags().VisitAll(bind)
	if bindErr != nil {
		return bindErr
	}

	// The root must be known before the config file, which may not lie in it.
	rootDir := v.GetString("root")
	file, explicit := configPath(cmd)
	if file != "" {
		if inside, wsDir := insideWorkspace(file, rootDir); inside {
			if explicit {
				return result.Usagef("config file %s lies inside the workspace %s; hunk never reads configuration the confined agent can write", file, wsDir).
					WithHint("keep the config file outside the workspace")
			}
			a.Warn("ignoring config file %s: it lies inside the workspace %s", file, wsDir)
			file = ""
		}
	}
	if file != "" {
		if err := trustedConfig(file); err != nil {
			if explicit {
				return result.Usagef("config file %s: %v; hunk reads only configuration that no one else can change", file, err).
					WithHint("chown it to yourself and chmod go-w it (and its directory)")
			}
			a.Warn("ignoring config file %s: %v (chown it to yourself, chmod go-w it and its directory)", file, err)
			file = ""
		}
	}
	var text []byte // the config file's text, read once (its policy is parsed from it too)
	if file != "" {
		v.SetConfigType("yaml")
		b, err := os.ReadFile(file)
		if err == nil {
			if err := checkConfigKeys(file, b); err != nil {
				return err
			}
			err = v.ReadConfig(bytes.NewReader(b))
			text = b
		}
		if err != nil {
			var pe *fs.PathError
			if !explicit && (errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist)) {
				file = "" // the default location is optional
			} else {
				return result.Errorf(result.InvalidArgument, "config file %s: %v", file, err)
			}
		}
	}
	if err := decodeConfig(v, &a.Cfg); err != nil {
		return err
	}
	a.warnUnknownEnv()
	a.Cfg.ConfigFile = file
	rules, err := policyRules(cmd, file, text)
	if err != nil {
		return err
	}
	a.Cfg.Policy = rules
	a.cfgCmd, a.cfgText = cmd, text // the command rules: read by execRules, for exec's surfaces only
	if no, _ := cmd.Flags().GetBool("no-history"); no {
		a.Cfg.History = false
	}
	switch a.Cfg.Color {
	case "auto", "always", "never":
	default:
		return result.Usagef("--color must be auto, always or never, not %q", a.Cfg.Color)
	}
	a.setColor()
	a.configured = true
	return nil
}

// decodeConfig reads every key into c with typed, checked conversions: a
// value that is not of its key's type is an error naming the key (never a
// silent zero). Explicit getters rather than viper's Unmarshal: reflection
// over the struct cost a third of a millisecond on every run, and hunk is
// started once per tool call.
func decodeConfig(v *viper.Viper, c *Config) error {
	var errs []string
	str := func(k string) string {
		s, err := cast.ToStringE(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return s
	}
	boolean := func(k string) bool {
		b, err := cast.ToBoolE(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return b
	}
	i64 := func(k string) int64 {
		n, err := cast.ToInt64E(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return n
	}
	f64 := func(k string) float64 {
		f, err := cast.ToFloat64E(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return f
	}
	list := func(k string) []string {
		// A list in the file, or one string (a HUNK_* variable) split
		// at commas and spaces.
		if s, ok := v.Get(k).(string); ok {
			return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
		}
		l, err := cast.ToStringSliceE(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return l
	}
	dur := func(k string) time.Duration {
		d, err := parseDuration(v.Get(k))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
		return d
	}
	*c = Config{
		Root:              str("root"),
		WorkspaceOnly:     boolean("workspace-only"),
		JSON:              boolean("json"),
		Color:             str("color"),
		Quiet:             boolean("quiet"),
		Fsync:             boolean("fsync"),
		AllowPlaceholders: boolean("allow-placeholders"),
		History:           boolean("history"),
		HistoryLimits: history.Limits{Count: int(i64("history-max-operations")), Bytes: i64("history-max-bytes"),
			Age: dur("history-max-age"), Total: i64("history-max-total-bytes")},
		Session: str("session"),
		Read:    ReadConfig{Limit: int(i64("read.limit")), MaxBytes: int(i64("read.max-bytes"))},
		Write:   WriteConfig{MaxBytes: i64("write.max-bytes")},
		Edit:    EditConfig{MaxBytes: i64("edit.max-bytes")},
		Patch:   PatchConfig{Compat: str("apply-patch.compat"), Strict: boolean("apply-patch.strict"), MaxBytes: i64("apply-patch.max-bytes")},
		Tools:   ToolsConfig{Enable: list("tools.enable"), Disable: list("tools.disable")},
		Exec: ExecConfig{
			Driver:     str("exec.driver"),
			Image:      str("exec.image"),
			Timeout:    dur("exec.timeout"),
			Memory:     str("exec.memory"),
			Pids:       int(i64("exec.pids")),
			CPUs:       f64("exec.cpus"),
			MaxOutput:  str("exec.max-output"),
			ShowOutput: str("exec.show-output"),
			KeepWarm:   boolean("exec.keep-warm"),
			Caches:     boolean("exec.caches"),
			GitWrite:   boolean("exec.git-write"),
			Record:     boolean("exec.record"),
			Idle:       dur("exec.idle"),
			Allow:      list("exec.network.allow"),
			Deny:       list("exec.network.deny"),
			DNS:        str("exec.network.dns"),
			Default:    str("exec.default"),
		},
	}
	if len(errs) > 0 {
		return result.Errorf(result.InvalidArgument, "configuration: %s", strings.Join(errs, "; ")).
			WithHint("check the flag, the HUNK_* variable or the config file that sets it")
	}
	return nil
}

// configPath is the config file to read and whether the user named it
// (--config or $HUNK_CONFIG) rather than it being the default location.
func configPath(cmd *cobra.Command) (string, bool) {
	if f := cmd.Flag("config"); f != nil && f.Value.String() != "" {
		return f.Value.String(), true
	}
	if p := os.Getenv("HUNK_CONFIG"); p != "" {
		return p, true
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		dir = filepath.Join(home, ".config")
	}
	p := filepath.Join(dir, "hunk", "config.yaml")
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, false
}

// insideWorkspace reports whether file (symlinks resolved) lies inside the
// workspace root rootDir (symlinks resolved).
func insideWorkspace(file, rootDir string) (bool, string) {
	ws, err := filepath.Abs(rootDir)
	if err != nil {
		return false, ""
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false, ws
	}
	// Resolve the deepest existing ancestor, so a not-yet-existing file under
	// a symlinked directory is still placed right.
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	} else if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		real = filepath.Join(r, filepath.Base(abs))
	}
	for _, p := range []string{abs, real} {
		if p == ws || strings.HasPrefix(p, ws+string(filepath.Separator)) {
			return true, ws
		}
	}
	return false, ws
}

// mustFlag is a helper for commands: the string value of a local flag.
func mustFlag(cmd *cobra.Command, name string) string {
	f := cmd.Flag(name)
	if f == nil {
		panic(fmt.Sprintf("no flag %q", name))
	}
	return f.Value.String()
}

// parseDuration reads a duration as timeout(1) and Go do: a bare number is
// seconds ("30", 1.5), anything else a Go duration ("2m", "1h30m").
func parseDuration(x any) (time.Duration, error) {
	switch v := x.(type) {
	case time.Duration:
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return time.Duration(f * float64(time.Second)), nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (30, 30s, 10m, 1h30m)", s)
		}
		return d, nil
	}
	f, err := cast.ToFloat64E(x)
	if err != nil {
		return 0, err
	}
	return time.Duration(f * float64(time.Second)), nil
}

// durationFlag is a flag holding a duration as parseDuration reads it.
type durationFlag struct{ text string }

func newDurationFlag(d time.Duration) *durationFlag { return &durationFlag{d.String()} }

func (f *durationFlag) String() string { return f.text }
func (f *durationFlag) Type() string   { return "duration" }
func (f *durationFlag) Set(s string) error {
	if _, err := parseDuration(s); err != nil {
		return err
	}
	f.text = s
	return nil
}

// trustedConfig checks that no one but the user (or root) can have written
// the config file: it is owned by the user or root and writable by no one
// else, and so is the directory it is in (unless sticky, as /tmp). A config
// file decides how sandboxed commands run, so one that another user could
// change is not read. A file that does not exist passes (the default
// location is optional).
func trustedConfig(file string) error {
	real, err := filepath.EvalSymlinks(file)
	if errors.Is(err, fs.ErrNotExist) || real == os.DevNull {
		return nil // none, or the empty file every system has ("--config /dev/null")
	} else if err != nil {
		return err
	}
	for _, p := range []string{real, filepath.Dir(real)} {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil // no owners on this system
		}
		what := "it"
		if p != real {
			what = "its directory " + p
		}
		if uid := int(st.Uid); uid != os.Geteuid() && uid != 0 {
			return fmt.Errorf("%s belongs to uid %d, not to you", what, uid)
		}
		if perm := fi.Mode().Perm(); perm&0o022 != 0 && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0 && perm&0o020 == 0) {
			return fmt.Errorf("%s is writable by others (mode %04o)", what, perm)
		}
	}
	return nil
}
