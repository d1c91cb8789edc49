package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type fakeDriver struct {
	name      string
	available bool
	runErr    error
}

func (f fakeDriver) Name() string { return f.name }
func (f fakeDriver) Probe(context.Context) Caps {
	return Caps{Available: f.available, Reason: f.name + " reason"}
}
func (f fakeDriver) Run(context.Context, Spec) (Result, error) {
	return Result{Driver: f.name}, f.runErr
}

// withRegistry swaps the registry for fakes during a test.
func withRegistry(t *testing.T, ds ...fakeDriver) {
	saved := registry
	t.Cleanup(func() { registry = saved })
	registry = map[string]func() Driver{}
	for _, d := range ds {
		Register(d.name, func() Driver { return d })
	}
}

func TestAuto(t *testing.T) {
	for _, tc := range []struct {
		name    string
		drivers []fakeDriver
		want    string // driver that ran, or "error: substring"
	}{
		{"bwrap first", []fakeDriver{{name: "bwrap", available: true}, {name: "landlock", available: true}}, "bwrap"},
		{"landlock when bwrap is missing", []fakeDriver{{name: "bwrap"}, {name: "landlock", available: true}}, "landlock"},
		{"landlock when bwrap cannot start", []fakeDriver{{name: "bwrap", available: true, runErr: &UnavailableError{Driver: "bwrap", Reason: "no userns"}}, {name: "landlock", available: true}}, "landlock"},
		{"never none or docker", []fakeDriver{{name: "bwrap"}, {name: "landlock"}, {name: "none", available: true}, {name: "docker", available: true}}, "error: install bubblewrap"},
		{"a limit error is not a fallback", []fakeDriver{{name: "bwrap", available: true, runErr: &LimitError{Limit: "--memory"}}, {name: "landlock", available: true}}, "error: --memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withRegistry(t, tc.drivers...)
			r, err := Run(context.Background(), "auto", Spec{})
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil {
					t.Fatalf("ran %s, want an error", r.Driver)
				}
				var ue *UnavailableError
				msg := err.Error()
				if errors.As(err, &ue) {
					msg += " " + ue.Hint
				}
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q, want it to mention %q", msg, want)
				}
				return
			}
			if err != nil || r.Driver != tc.want {
				t.Fatalf("ran %q (%v), want %s", r.Driver, err, tc.want)
			}
		})
	}
}

func TestSelectByName(t *testing.T) {
	withRegistry(t, fakeDriver{name: "none", available: true})
	if d, err := Select(context.Background(), "none"); err != nil || d.Name() != "none" {
		t.Fatalf("Select(none) = %v, %v", d, err)
	}
	var ue *UnknownDriverError
	if _, err := Select(context.Background(), "chroot"); !errors.As(err, &ue) {
		t.Fatalf("Select(chroot) err = %v", err)
	}
}
