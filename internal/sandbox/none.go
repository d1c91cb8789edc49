//go:build linux

package sandbox

import (
	"context"
	"fmt"
)

func init() { Register("none", func() Driver { return noneDriver{} }) }

// noneDriver runs the command without isolation (only when asked for by
// name); limits and the timeout still apply to its whole process tree.
type noneDriver struct{}

func (noneDriver) Name() string { return "none" }

func (d noneDriver) Probe(ctx context.Context) Caps { return d.probe(true) }

func (noneDriver) probe(limits bool) Caps {
	c := Caps{Available: true, Timeout: true, Reason: "no isolation: the command can read and write anything hunk can, and reach the network"}
	c.SetGuards(map[string]bool{GuardDescriptors: true})
	if limits {
		c.Memory, c.Pids, c.CPUs = cgroupCaps()
	}
	return c
}

func (d noneDriver) Run(ctx context.Context, spec Spec) (Result, error) {
	if spec.Network.Proxied() {
		return Result{}, egressRefused("none", "it isolates nothing: its command has the host's whole network")
	}
	if len(spec.Policy) > 0 || spec.AllowOnly {
		return Result{}, &GuardError{Driver: "none", Guard: GuardPolicy,
			Reason: fmt.Sprintf("the path policy hides or keeps read-only %s inside the workspace, and the none driver isolates nothing", policyPaths(spec.Policy, spec.Workspace)),
			Hint:   "run it under bwrap or docker (--driver bwrap), which hold the policy with mounts"}
	}
	if err := applyLimits("none", &spec, d.probe(spec.limited())); err != nil {
		return Result{}, err
	}
	return runDirect(ctx, "none", spec, spec.Env, confinement{})
}
