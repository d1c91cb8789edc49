package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/hunk-dev/hunk/internal/result"
)

// Config is hunk's whole configuration, decoded once by the root command from
// flags > HUNK_* environment > config file > defaults. Commands read it; no
// one else reads viper.
type Config struct {
	Root          string `mapstructure:"root"`
	WorkspaceOnly bool   `mapstructure:"workspace-only"`
	JSON          bool   `mapstructure:"json"`
	Color         string `mapstructure:"color"`
	Quiet         bool   `mapstructure:"quiet"`
	// Fsync makes every file replacement durable against power loss
	// (fsync of the file and its directory); off, replacements are still
	// atomic, and cost no disk flush.
	Fsync bool `mapstructure:"fsync"`
	// ConfigFile is the file the configuration was read from ("" for none).
	ConfigFile string `mapstructure:"-"`

	Read  ReadConfig  `mapstructure:"read"`
	Write WriteConfig `mapstructure:"write"`
	Edit  EditConfig  `mapstructure:"edit"`
	Patch PatchConfig `mapstructure:"apply-patch"`
	Exec  ExecConfig  `mapstructure:"exec"`
}

// ReadConfig configures `hunk read`.
type ReadConfig struct {
	Limit    int `mapstructure:"limit"`
	MaxBytes int `mapstructure:"max-bytes"`
}

// WriteConfig configures `hunk write`.
type WriteConfig struct {
	MaxBytes int64 `mapstructure:"max-bytes"`
}

// EditConfig configures `hunk edit`.
type EditConfig struct {
	MaxBytes int64 `mapstructure:"max-bytes"`
}

// PatchConfig configures `hunk apply-patch`.
type PatchConfig struct {
	Compat string `mapstructure:"compat"`
}

// ExecConfig configures `hunk exec`.
type ExecConfig struct {
	Driver    string        `mapstructure:"driver"`
	Image     string        `mapstructure:"image"`
	Timeout   time.Duration `mapstructure:"timeout"`
	Memory    string        `mapstructure:"memory"`
	Pids      int           `mapstructure:"pids"`
	CPUs      float64       `mapstructure:"cpus"`
	MaxOutput string        `mapstructure:"max-output"`
	KeepWarm  bool          `mapstructure:"keep-warm"`
	Idle      time.Duration `mapstructure:"idle"`
}

// defaults are the values used when no flag, variable or file sets a key.
var defaults = map[string]any{
	"root":               ".",
	"workspace-only":     true,
	"json":               false,
	"color":              "auto",
	"quiet":              false,
	"read.limit":         2000,
	"read.max-bytes":     50 * 1024,
	"write.max-bytes":    int64(64 << 20),
	"edit.max-bytes":     int64(1 << 30),
	"apply-patch.compat": "",
	"exec.driver":        "auto",
	"exec.image":         "",
	"exec.timeout":       120 * time.Second,
	"exec.memory":        "",
	"exec.pids":          0,
	"exec.cpus":          0.0,
	"exec.max-output":    "1MiB",
	"exec.keep-warm":     false,
	"exec.idle":          10 * time.Minute,
}

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
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			var pe *fs.PathError
			if !explicit && (errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist)) {
				file = "" // the default location is optional
			} else {
				return result.Errorf(result.InvalidArgument, "config file %s: %v", file, err)
			}
		}
	}
	if err := v.Unmarshal(&a.Cfg); err != nil {
		return result.Errorf(result.InvalidArgument, "configuration: %v", err)
	}
	a.Cfg.ConfigFile = file
	switch a.Cfg.Color {
	case "auto", "always", "never":
	default:
		return result.Usagef("--color must be auto, always or never, not %q", a.Cfg.Color)
	}
	a.setColor()
	a.configured = true
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
