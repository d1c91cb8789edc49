//go:build !linux

package sandbox

import (
	"context"
	"runtime"
)

// On systems other than Linux only the docker driver can run: landlock,
// bwrap and none (which still needs hunk's own process supervision) say so.
func init() {
	for _, name := range []string{"landlock", "bwrap", "none"} {
		Register(name, func() Driver { return unsupported{name} })
	}
}

type unsupported struct{ name string }

func (u unsupported) Name() string { return u.name }

func (u unsupported) Probe(context.Context) Caps {
	return Caps{Reason: "not supported on " + runtime.GOOS + " (Linux only); use --driver docker"}
}

func (u unsupported) Run(context.Context, Spec) (Result, error) {
	return Result{}, &UnavailableError{Driver: u.name, Reason: "not supported on " + runtime.GOOS + " (Linux only)",
		Hint: "use --driver docker with a Docker or Podman engine"}
}

// pidsCheap: no cgroups here.
func pidsCheap() bool { return false }

// ProcessBound: only docker runs here.
func ProcessBound() string { return "docker bounds every container to 4096" }
