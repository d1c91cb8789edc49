package sandbox

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
)

// Surveyed is one driver as Survey found it.
type Surveyed struct {
	Name string `json:"name"`
	Caps
}

// Survey probes every driver (and, where one can, tests that it really
// starts a sandbox here): whether it works, what it enforces and what it
// guards against a hostile command; and which one auto picks ("" none).
func Survey(ctx context.Context) (drivers []Surveyed, auto string) {
	for _, n := range Names() {
		d := Lookup(n)
		c := d.Probe(ctx)
		if t, ok := d.(Tester); ok && c.Available {
			if err := t.Test(ctx); err != nil {
				c.Available, c.Reason = false, err.Error()
			}
		}
		if auto == "" && c.Available {
			for _, a := range AutoOrder {
				if a == n {
					auto = n
				}
			}
		}
		drivers = append(drivers, Surveyed{n, c})
	}
	return drivers, auto
}

// GuardLegend says what each Guard name stands for, in the order
// --drivers shows them.
var GuardLegend = [][2]string{
	{GuardProcesses, "cannot trace, signal, or read the memory, environment or descriptors of hunk or any process outside its own tree"},
	{GuardProcessList, "cannot see other processes or read their command lines (its own pid namespace)"},
	{GuardSockets, "cannot connect to the host's unix sockets (the Docker socket, ssh and gpg agents)"},
	{GuardMetadata, "cannot chmod, chown, touch or set attributes on files outside where it may write"},
	{GuardSetuid, "cannot leave a set-user-ID or set-group-ID file behind (for whoever runs code there later)"},
	{GuardGit, "cannot change the workspace's .git, whose hooks and config git runs outside the sandbox (--git-write allows it)"},
	{GuardOwnState, "cannot read or change hunk's own config, caches, crash journals or history, which later hunk runs trust"},
	{GuardPolicy, "holds the path policy: cannot read a read-denied path of the workspace or change a write-denied one (landlock: write.allow only)"},
	{GuardPrivileges, "no device nodes, mounts, clock, hostname or other host-wide capability"},
	{GuardKeyring, "cannot read the kernel keyrings"},
	{GuardTerminal, "cannot type into the caller's terminal (TIOCSTI)"},
	{GuardDescriptors, "inherits no descriptor of hunk's caller but stdin, stdout and stderr"},
	{GuardCleanup, "nothing it started survives hunk, even hunk killed with SIGKILL"},
}

// SurveyText is the survey as --drivers prints it: a row a driver (works
// here, what it enforces, a note), what each guards and what not, what
// each guard means, the process bound, and auto's pick.
func SurveyText(rows []Surveyed, auto string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVER\tWORKS HERE\tENFORCES\tNOTE")
	for _, r := range rows {
		var enf []string
		for _, e := range []struct {
			on   bool
			name string
		}{{r.Filesystem, "filesystem"}, {r.Network, "network"}, {r.Egress, "egress"}, {r.Timeout, "timeout"}, {r.Memory, "memory"}, {r.Pids, "pids"}, {r.CPUs, "cpus"}} {
			if e.on {
				enf = append(enf, e.name)
			}
		}
		works := "no"
		if r.Available {
			works = "yes"
		}
		if len(enf) == 0 {
			enf = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, works, strings.Join(enf, ","), r.Reason)
	}
	tw.Flush()
	b.WriteString("\nAgainst a hostile command:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if r.Available {
			fmt.Fprintf(tw, "  %s\tguards: %s\tnot enforced: %s\n", r.Name, orDash(r.Guards), orDash(r.Gaps))
		}
	}
	tw.Flush()
	b.WriteString("\nWhat each guard means:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, g := range GuardLegend {
		fmt.Fprintf(tw, "  %s\t%s\n", g[0], g[1])
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nProcesses: %s\nRuns: at most %d at once in one hunk process (hunk mcp's concurrent exec calls); the rest wait their turn.\n\n",
		ProcessBound(), MaxRuns)
	if auto != "" {
		fmt.Fprintf(&b, "auto: %s\n", auto)
	} else {
		fmt.Fprintf(&b, "auto: none works here (install bubblewrap, or use a kernel with Landlock)\n")
	}
	return b.String()
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
