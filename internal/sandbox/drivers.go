package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// registry holds the drivers by name. Driver files add themselves with
// Register from an init function (a map insert, nothing more).
var registry = map[string]func() Driver{}

// Register makes a driver available under its name (landlock, bwrap,
// docker, none).
func Register(name string, newDriver func() Driver) { registry[name] = newDriver }

// Names lists the registered drivers in the order --drivers shows them.
func Names() []string {
	order := map[string]int{"bwrap": 0, "landlock": 1, "docker": 2, "none": 3}
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := order[names[i]]
		oj, jok := order[names[j]]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return names[i] < names[j]
	})
	return names
}

// AutoOrder is the order in which `auto` tries drivers. docker is used only
// when named or configured; none never automatically.
var AutoOrder = []string{"bwrap", "landlock"}

// Lookup returns the driver called name, or nil.
func Lookup(name string) Driver {
	if f, ok := registry[name]; ok {
		return f()
	}
	return nil
}

// Select resolves a --driver value. "auto" picks the first driver of
// AutoOrder that works here; when none does, the error says what to install.
func Select(ctx context.Context, name string) (Driver, error) {
	if name == "" || name == "auto" {
		var why []string
		for _, n := range AutoOrder {
			d := Lookup(n)
			if d == nil {
				continue
			}
			c := d.Probe(ctx)
			if c.Available {
				return d, nil
			}
			why = append(why, n+": "+c.Reason)
		}
		return nil, &UnavailableError{
			Driver: "auto",
			Reason: "no sandbox driver works here (" + strings.Join(why, "; ") + ")",
			Hint:   "install bubblewrap (apt-get install bubblewrap), or use a kernel with Landlock (5.13+, enabled in the lsm= boot list); --driver none runs without isolation",
		}
	}
	d := Lookup(name)
	if d == nil {
		return nil, &UnknownDriverError{Name: name, Known: Names()}
	}
	return d, nil
}

// UnknownDriverError is a --driver value naming no driver.
type UnknownDriverError struct {
	Name  string
	Known []string
}

func (e *UnknownDriverError) Error() string {
	return "unknown sandbox driver " + `"` + e.Name + `"` + " (known: auto, " + strings.Join(e.Known, ", ") + ")"
}

// quickProber is a driver whose probe can skip the cgroup capabilities.
type quickProber interface{ probe(limits bool) Caps }

// available reports whether d works here, as cheaply as d allows.
func available(ctx context.Context, d Driver) bool {
	if q, ok := d.(quickProber); ok {
		return q.probe(false).Available
	}
	return d.Probe(ctx).Available
}

// limited reports whether s asks for a limit that needs cgroups.
// (Every run is, now that an unset --pids means DefaultPids.)
func (s Spec) limited() bool { return s.Memory > 0 || s.Pids >= 0 || s.CPUs > 0 }

// DefaultPids bounds the processes and threads of a run that asks for no
// --pids, where the driver enforces it at no cost (docker, cgroup v2): far
// above what builds use (a parallel make, go test ./..., a JVM), low enough
// that a fork bomb stops there instead of at the user's own process limit,
// which hunk shares.
const DefaultPids = 4096

// MaxRuns is how many commands one hunk process runs at once; more wait
// their turn (a command's timeout starts when it starts).
const MaxRuns = 8

// applyLimits fills in the default process limit where it is cheap to
// enforce (pidsCheap), and refuses a spec asking for a limit caps says the
// driver cannot enforce.
func applyLimits(name string, spec *Spec, c Caps) error {
	if spec.Pids == 0 && c.Pids && pidsCheap() {
		spec.Pids = DefaultPids
	}
	if spec.Pids < 0 {
		spec.Pids = 0
	}
	switch {
	case spec.Memory > 0 && !c.Memory:
		return &LimitError{Limit: "--memory", Reason: "the " + name + " driver cannot limit memory here (cgroups need root or a delegated cgroup v2 subtree)"}
	case spec.Pids > 0 && !c.Pids:
		return &LimitError{Limit: "--pids", Reason: "the " + name + " driver cannot limit processes here (cgroups need root or a delegated cgroup v2 subtree)"}
	case spec.CPUs > 0 && !c.CPUs:
		return &LimitError{Limit: "--cpus", Reason: "the " + name + " driver cannot limit CPU here (cgroups need root or a delegated cgroup v2 subtree)"}
	}
	return nil
}

// isRoot reports whether hunk runs as uid 0.
func isRoot() bool { return os.Geteuid() == 0 }

// Tester is implemented by drivers whose cheap Probe can be wrong (bwrap:
// installed but refused by the kernel); `hunk exec --drivers` calls it to
// say for certain whether the driver works here.
type Tester interface {
	Test(ctx context.Context) error
}

// Run selects the driver called name (see Select) and runs spec with it.
// With "auto", a driver whose sandbox fails to start (UnavailableError:
// nothing of the command ran) gives way to the next one.
func Run(ctx context.Context, name string, spec Spec) (Result, error) {
	r, err := run(ctx, name, spec)
	if err == nil && ctx.Err() != nil && !r.TimedOut {
		r.Interrupted = true
	}
	return r, err
}

func run(ctx context.Context, name string, spec Spec) (Result, error) {
	if name != "" && name != "auto" {
		d, err := Select(ctx, name)
		if err != nil {
			return Result{}, err
		}
		return d.Run(ctx, spec)
	}
	var firstErr error
	var fallback []string
	for _, n := range AutoOrder {
		d := Lookup(n)
		if d == nil || !available(ctx, d) {
			continue
		}
		r, err := d.Run(ctx, spec)
		var ue *UnavailableError
		if err != nil && errors.As(err, &ue) {
			if firstErr == nil {
				firstErr = err
			}
			fallback = append(fallback, n+": "+ue.Reason)
			continue
		}
		r.Fallback = strings.Join(fallback, "; ")
		return r, err
	}
	if firstErr != nil {
		return Result{}, firstErr
	}
	_, err := Select(ctx, "auto")
	return Result{}, err
}

// LimitError is a limit the driver cannot enforce here (LIMIT_UNENFORCEABLE, exit 125).
type LimitError struct {
	Limit  string // the flag: --memory, --pids, --cpus, …
	Reason string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("cannot enforce %s here: %s", e.Limit, e.Reason)
}

// GuardError is a guard the Spec asks for (Spec.Protect: GuardGit) that the
// driver cannot give: the run is refused before anything starts
// (LIMIT_UNENFORCEABLE, exit 125), never run without it.
type GuardError struct {
	Driver string
	Guard  string
	Reason string
	Hint   string
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("the %s driver cannot guard %s: %s", e.Driver, e.Guard, e.Reason)
}

// UnavailableError is a driver that cannot run here (SANDBOX_UNAVAILABLE, exit 125).
type UnavailableError struct {
	Driver string
	Reason string
	Hint   string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("sandbox driver %s is not available: %s", e.Driver, e.Reason)
}
