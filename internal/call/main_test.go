package call

import (
	"os"
	"testing"
)

// TestMain keeps the histories the calls record in a state directory of
// the run's own (XDG_STATE_HOME), not under the HOME of whoever runs it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hunk-call-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
