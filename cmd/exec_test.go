package cmd

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hunk-dev/hunk/internal/interrupt"
)

// parseExec runs `hunk exec ARGS` with a recorder in place of the run and
// returns the parsed options.
func parseExec(t *testing.T, args ...string) (*execOptions, error) {
	t.Helper()
	t.Setenv("HUNK_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var got *execOptions
	app := &App{Stdin: &bytes.Buffer{}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	root := &cobra.Command{Use: "hunk", SilenceErrors: true, SilenceUsage: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return app.configure(cmd) }}
	root.PersistentFlags().StringP("root", "C", ".", "")
	root.PersistentFlags().Bool("json", false, "")
	root.PersistentFlags().String("color", "auto", "")
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(newExecCmd(app, func(_ *App, _ *cobra.Command, o *execOptions) error {
		got = o
		return nil
	}))
	root.SetArgs(append([]string{"exec"}, args...))
	err := root.Execute()
	return got, err
}

func TestExecFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want func(o *execOptions) bool
	}{
		{"argv after --", []string{"--", "ls", "-la"}, func(o *execOptions) bool { return reflect.DeepEqual(o.Argv, []string{"ls", "-la"}) }},
		{"flags after the command are the command's", []string{"ls", "--network"}, func(o *execOptions) bool {
			return reflect.DeepEqual(o.Argv, []string{"ls", "--network"}) && !o.Network.Host
		}},
		{"--sh", []string{"--sh", "echo hi"}, func(o *execOptions) bool {
			return len(o.Argv) == 0 && o.Sh == "echo hi"
		}},
		{"defaults", []string{"--", "true"}, func(o *execOptions) bool {
			return o.Timeout == 120*time.Second && o.MaxOutput == 1<<20 && o.Driver == "auto" && o.Memory == 0
		}},
		{"limits", []string{"--memory", "512MiB", "--pids", "64", "--cpus", "1.5", "--max-output", "64K", "--timeout", "3s", "--", "true"}, func(o *execOptions) bool {
			return o.Memory == 512<<20 && o.Pids == 64 && o.CPUs == 1.5 && o.MaxOutput == 64<<10 && o.Timeout == 3*time.Second
		}},
		{"env, network, read-only, workdir, driver", []string{"--env", "A=1", "--env", "B=x=y", "--network", "--read-only", "--workdir", "sub", "--driver", "landlock", "--", "true"}, func(o *execOptions) bool {
			return reflect.DeepEqual(o.Env, []string{"A=1", "B=x=y"}) && o.Network.Host && o.ReadOnly && o.Workdir == "sub" && o.Driver == "landlock"
		}},
		{"--drivers needs no command", []string{"--drivers"}, func(o *execOptions) bool { return o.ListDrivers }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseExec(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(o) {
				t.Fatalf("parsed %+v", *o)
			}
		})
	}
}

func TestExecDriverFromEnv(t *testing.T) {
	t.Setenv("HUNK_EXEC_DRIVER", "none")
	o, err := parseExec(t, "--", "true")
	if err != nil || o.Driver != "none" {
		t.Fatalf("driver %q, %v", o.Driver, err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "0": 0, "100": 100, "1K": 1024, "1k": 1024, "1KB": 1024, "1KiB": 1024,
		"64M": 64 << 20, "2G": 2 << 30, "1.5M": 3 << 19, "1T": 1 << 40,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"lots", "-1", "1Q", "M"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded", bad)
		}
	}
}

// TestRootValueFlags: every root flag that takes a value is known to
// interrupt.Subcommand, which finds the command's name before cobra runs (to
// build only that command, and to catch exec's interrupts from the start):
// `hunk --deny-read .env exec` is exec, not a command named ".env".
func TestRootValueFlags(t *testing.T) {
	root := newRootCmd(&App{}, nil)
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			return
		}
		if !interrupt.RootValueFlags["--"+f.Name] {
			t.Errorf("--%s takes a value but is not in interrupt.RootValueFlags", f.Name)
		}
		if f.Shorthand != "" && !interrupt.RootValueFlags["-"+f.Shorthand] {
			t.Errorf("-%s takes a value but is not in interrupt.RootValueFlags", f.Shorthand)
		}
	})
	if got := interrupt.Subcommand([]string{"--deny-read", ".env", "--allow-write", "src/", "-C", "ws", "exec", "--", "true"}); got != "exec" {
		t.Errorf("Subcommand = %q, want exec", got)
	}
}
