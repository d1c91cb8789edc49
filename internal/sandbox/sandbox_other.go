//go:build !linux

package sandbox

import (
	"context"
	"io"
	"os/exec"
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

// The watchdog (watchdog.go) is Linux's: docker runs here are removed by
// --gc should hunk die.
var WatchdogCommand func() *exec.Cmd

// Watch does nothing here.
func Watch(kind, id string) func() { return func() {} }

// OnWatchdog does nothing here.
func OnWatchdog(kind string, cleanup func(id string)) {}

// WatchdogMain has nothing to watch here.
func WatchdogMain(io.Reader) int { return 0 }

// WatchSoon does nothing here.
func WatchSoon(kind, id string) func() { return func() {} }
