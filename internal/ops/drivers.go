package ops

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/hunk-dev/hunk/internal/sandbox"
)

// Drivers surveys every driver: whether it works here, what it enforces and
// what it guards against a hostile command, and which one auto picks.
func Drivers(ctx context.Context) *Output {
	var rows []DriverRow
	auto := ""
	for _, n := range sandbox.Names() {
		d := sandbox.Lookup(n)
		c := d.Probe(ctx)
		if t, ok := d.(sandbox.Tester); ok && c.Available {
			if err := t.Test(ctx); err != nil {
				c.Available, c.Reason = false, err.Error()
			}
		}
		if auto == "" && c.Available {
			for _, a := range sandbox.AutoOrder {
				if a == n {
					auto = n
				}
			}
		}
		rows = append(rows, DriverRow{n, c.Available, c.Reason, c.Filesystem, c.Network, c.Timeout, c.Memory, c.Pids, c.CPUs, c.Guards, c.Gaps})
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVER\tWORKS HERE\tENFORCES\tNOTE")
	for _, r := range rows {
		var enf []string
		for _, e := range []struct {
			on   bool
			name string
		}{{r.Filesystem, "filesystem"}, {r.Network, "network"}, {r.Timeout, "timeout"}, {r.Memory, "memory"}, {r.Pids, "pids"}, {r.CPUs, "cpus"}} {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, works, strings.Join(enf, ","), r.Note)
	}
	tw.Flush()
	b.WriteString("\nAgainst a hostile command:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if r.Available {
			fmt.Fprintf(tw, "  %s\tguards: %s\tnot enforced: %s\n", r.Name, orDash(r.Guards), orDash(r.NotEnforced))
		}
	}
	tw.Flush()
	b.WriteString("\nWhat each guard means:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, g := range guardLegend {
		fmt.Fprintf(tw, "  %s\t%s\n", g[0], g[1])
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nProcesses: %s\nRuns: at most %d at once in one hunk process (hunk mcp's concurrent exec calls); the rest wait their turn.\n\n",
		sandbox.ProcessBound(), sandbox.MaxRuns)
	if auto != "" {
		fmt.Fprintf(&b, "auto: %s\n", auto)
	} else {
		fmt.Fprintf(&b, "auto: none works here (install bubblewrap, or use a kernel with Landlock)\n")
	}
	return &Output{Text: b.String(), Message: b.String(), Details: &DriversDetails{Drivers: rows, Auto: auto}}
}

// guardLegend says what each of sandbox's Guard names stands for.
var guardLegend = [][2]string{
	{sandbox.GuardProcesses, "cannot trace, signal, or read the memory, environment or descriptors of hunk or any process outside its own tree"},
	{sandbox.GuardProcessList, "cannot see other processes or read their command lines (its own pid namespace)"},
	{sandbox.GuardSockets, "cannot connect to the host's unix sockets (the Docker socket, ssh and gpg agents)"},
	{sandbox.GuardMetadata, "cannot chmod, chown, touch or set attributes on files outside where it may write"},
	{sandbox.GuardSetuid, "cannot leave a set-user-ID or set-group-ID file behind (for whoever runs code there later)"},
	{sandbox.GuardGit, "cannot change the workspace's .git, whose hooks and config git runs outside the sandbox (--git-write allows it)"},
	{sandbox.GuardOwnState, "cannot read or change hunk's own config, caches, crash journals or history, which later hunk runs trust"},
	{sandbox.GuardPolicy, "holds the path policy: cannot read a read-denied path of the workspace or change a write-denied one (landlock: write.allow only)"},
	{sandbox.GuardPrivileges, "no device nodes, mounts, clock, hostname or other host-wide capability"},
	{sandbox.GuardKeyring, "cannot read the kernel keyrings"},
	{sandbox.GuardTerminal, "cannot type into the caller's terminal (TIOCSTI)"},
	{sandbox.GuardDescriptors, "inherits no descriptor of hunk's caller but stdin, stdout and stderr"},
	{sandbox.GuardCleanup, "nothing it started survives hunk, even hunk killed with SIGKILL"},
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
