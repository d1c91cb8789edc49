//go:build !linux

package execrun

import (
	"time"

	"github.com/hunk-dev/hunk/internal/workspace"
)

// SubRepoRisks: the look through the directories reads Linux's getdents;
// elsewhere nothing is looked at.
func SubRepoRisks(ws *workspace.Workspace, since time.Time, driver string) ([]SubRepo, bool) {
	return nil, false
}
