package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// execFlag is one of exec's settings that the configuration holds: its
// flag, its config key, its default (the flag's and the configuration's,
// written once here) and its help — as `hunk exec` says it, and as `hunk
// mcp` and `hunk call` say it of their exec tool (agentHelp; "" when they
// do not have the flag). The settings only `hunk exec` has and the
// configuration does not (--network, --read-only, --rw, --ro, --hide,
// --pull) are its own flags.
type execFlag struct {
	name, key       string
	def             any // time.Duration, string, []string, int, float64 or bool
	help, agentHelp string
}

// agentNames are the flags named otherwise on `hunk mcp` and `hunk call`:
// there a result is what the model sees, so what it shows of the output
// is their --max-output (what exec keeps is the configuration's).
var agentNames = map[string]string{"show-output": "max-output"}

var execFlags = []execFlag{
	{"timeout", "exec.timeout", 120 * time.Second,
		"kill the whole process tree after this long, e.g. 30 (seconds), 10m (exit 124); 0 for none",
		"exec's default and longest timeout, e.g. 30 (seconds), 10m; 0 for none"},
	{"memory", "exec.memory", "", "memory limit, e.g. 512MiB (exit 137 when exceeded)", ""},
	{"pids", "exec.pids", 0, "maximum number of processes and threads (default 4096 under docker and cgroup v2)", ""},
	{"cpus", "exec.cpus", 0.0, "CPU quota in cores, e.g. 1.5", ""},
	{"max-output", "exec.max-output", "1MiB", "bytes kept of each of stdout and stderr (head and tail); 0 for all", ""},
	{"show-output", "exec.show-output", "8KiB",
		"bytes of each of stdout and stderr --json's text shows a model (head and tail; the rest is kept for hunk read --exec-output); 0 for all",
		"bytes of each of stdout and stderr an exec result shows the model (head and tail; the rest is kept for read's execOutput), and the most a call's maxOutput may ask; 0 for all"},
	{"driver", "exec.driver", "auto", "sandbox driver: auto, bwrap, landlock, docker or none",
		"exec's sandbox driver: auto, bwrap, landlock, docker or none"},
	{"image", "exec.image", "", "container image (docker driver)", ""},
	{"keep-warm", "exec.keep-warm", false, "keep the container for the next run (docker driver)", ""},
	{"idle", "exec.idle", 10 * time.Minute, "stop a warm container after this long unused (docker driver; --gc removes it)", ""},
	{"caches", "exec.caches", true, "give the command the workspace's own writable build caches (Go, npm, pip, cargo, Maven, Gradle) that persist across runs", ""},
	{"git-write", "exec.git-write", false,
		"let the command change the workspace's .git (commit, checkout); its hooks and config then run outside the sandbox the next time git runs",
		"let exec's commands change the workspace's .git (its hooks and config then run outside the sandbox)"},
	{"allow-host", "exec.network.allow", []string{},
		"let the command reach only `HOST` (repeatable: host, *.domain, host:port, an address or CIDR; ports 80 and 443 unless named), through hunk's proxy: bwrap and docker",
		"let exec's commands reach only `HOST` (repeatable: host, *.domain, host:port, an address or CIDR), through hunk's proxy: bwrap and docker"},
	{"deny-host", "exec.network.deny", []string{},
		"never let the command reach `HOST`, even one --allow-host allows (repeatable, the same patterns)",
		"never let exec's commands reach `HOST`, even one --allow-host allows (repeatable)"},
	{"dns", "exec.network.dns", "", "the DNS server hunk's egress proxy asks (`HOST:PORT`; default the system's)",
		"the DNS server the egress proxy of exec's commands asks (`HOST:PORT`; default the system's)"},
	{"record", "exec.record", false,
		"record what the command changes in the workspace in the history, so hunk undo takes it back (costs a read and a copy of the workspace's files)",
		"record what exec's commands change in the history, so undo takes it back"},
}

// addExecFlags defines exec's configuration flags on f: all of them for
// `hunk exec`, the agent's for `hunk mcp` and `hunk call` (agent), each
// bound to its config key.
func addExecFlags(f *pflag.FlagSet, agent bool) {
	for _, x := range execFlags {
		help, name := x.help, x.name
		if agent {
			if help = x.agentHelp; help == "" {
				continue
			}
			if n := agentNames[name]; n != "" {
				name = n
			}
		}
		switch d := x.def.(type) {
		case time.Duration:
			f.Var(newDurationFlag(d), name, help)
		case string:
			f.String(name, d, help)
		case int:
			f.Int(name, d, help)
		case float64:
			f.Float64(name, d, help)
		case bool:
			f.Bool(name, d, help)
		case []string:
			f.StringArray(name, d, help)
		default:
			panic(fmt.Sprintf("exec flag %s: default of type %T", x.name, d))
		}
		configKey(f, name, x.key)
	}
	addRuleFlags(f)
}

// execDefaults adds exec's defaults to the configuration's.
func execDefaults(m map[string]any) map[string]any {
	for _, x := range execFlags {
		m[x.key] = x.def
	}
	return m
}
