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
	rows, auto := sandbox.Survey(ctx)
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
	for _, g := range sandbox.GuardLegend {
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

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
