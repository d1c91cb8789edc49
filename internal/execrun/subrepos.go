package execrun

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// A command may make a repository below the workspace's root (sub/.git, its
// hooks, a core.fsmonitor in its config): nothing the command runs is
// outside the sandbox, but a person's git run in sub later runs them as that
// person. The root's .git is guarded (read-only; NewRepoRisks for one made
// new); for the rest, after the run, the directories are looked through for
// a .git that was made or changed during it (its own, its hooks' or its
// config's inode change time, which no command can set back) and whose
// hooks or settings git would run: reported, not removed — the command's
// work, the person's to judge.

// maxRepoScan bounds the directories looked through after a run (a tree of
// more is looked through that far, and the report says so).
const maxRepoScan = 20000

// maxRepoDepth bounds how deep the look goes (a descriptor is open per
// level).
const maxRepoDepth = 256

// SubRepo is a repository below the root the command made or changed.
type SubRepo struct {
	Path  string   `json:"path" jsonschema:"the directory holding the .git"`
	Risks []string `json:"risks" jsonschema:"what git would run outside the sandbox: hooks, settings"`
}

// RepoWarnings are what a run left in repositories that git would run
// outside the sandbox: a new one at the root (NewRepoRisks), those below it
// the command made or changed (SubRepoRisks), and the warning a person and
// a model read of each.
func (r *Run) RepoWarnings(ws *workspace.Workspace, driver string) (root []string, below []SubRepo, warns []string) {
	if root = r.NewRepoRisks(driver); len(root) > 0 {
		// Reported, not removed: it is the command's work, but git would
		// run it outside the sandbox.
		warns = append(warns, fmt.Sprintf("the command created a git repository at the workspace root with what git would run outside the sandbox: %s; look at it before running git there", strings.Join(root, ", ")))
	}
	if r.readOnly {
		return root, nil, warns
	}
	below, _ = SubRepoRisks(ws, r.started, driver)
	for _, s := range below {
		warns = append(warns, fmt.Sprintf("the command made or changed a git repository at %s with what git would run outside the sandbox: %s; look at it before running git there",
			s.Path, strings.Join(s.Risks, ", ")))
	}
	return root, below, warns
}

// FileClock is now as the kernel stamps a file's change time (its coarse
// clock, which runs up to a tick behind time.Now): what a run's start is
// compared with. A file made and removed in the temporary directory tells
// it; without one, now less 20 ms.
func FileClock() time.Time {
	f, err := os.CreateTemp("", "hunk-clock-*")
	if err != nil {
		return time.Now().Add(-20 * time.Millisecond)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Now().Add(-20 * time.Millisecond)
	}
	t, _ := changeTime(fi)
	return t
}
