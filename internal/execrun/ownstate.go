package execrun

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/hunk-dev/hunk/internal/ownstate"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// placeOwnState finds hunk's own state (ownstate.Paths) for a run over the
// workspace with the host paths rw and ro: own, where a place the sandbox
// shows (the workspace, a --rw or --ro path) holds it — each at its path
// inside that place, to be hidden there by a mount; outside, the real paths
// of the rest, hidden from the host's files the sandbox shows (bwrap's
// read-only /, what landlock lets be read). An own directory that does not
// exist yet inside a writable place is made first (0700), so that the
// command cannot make it; a workspace inside hunk's own state is refused.
func placeOwnState(workspace string, rw, ro []string, readOnly bool) (own, outside []string, err error) {
	type place struct {
		dir      string
		writable bool
	}
	shown := []place{{workspace, !readOnly}}
	for _, p := range rw {
		shown = append(shown, place{p, true})
	}
	for _, p := range ro {
		shown = append(shown, place{p, false})
	}
	for _, o := range ownstate.Paths(os.Getenv) {
		held := false
		for _, p := range shown {
			rels := ownstate.Held(p.dir, []string{o}) // at its path, and wherever a mount under p.dir shows it
			for _, rel := range rels {
				held = true
				if rel == "." {
					return nil, nil, result.Errorf(result.LimitUnenforceable, "exec: %s lies inside hunk's own state (%s): a command there could change what later hunk runs do", p.dir, o).
						WithHint("run it over a directory of your project, not one of hunk's")
				}
			}
			for _, rel := range rels {
				at := filepath.Join(p.dir, rel)
				if _, err := os.Lstat(at); err != nil {
					if !p.writable {
						continue // nothing there to see
					}
					if filepath.Base(o) != "hunk" {
						return nil, nil, result.Errorf(result.LimitUnenforceable, "exec: the config file %s does not exist yet, in a place the command may write (%s): the command could make it, and a later hunk run would read it", o, p.dir).
							WithHint("create it (it may be empty), or point HUNK_CONFIG elsewhere")
					}
					if err := os.MkdirAll(at, 0o700); err != nil {
						return nil, nil, result.Wrap(result.IOError, err, "hunk's own state "+at)
					}
				}
				own = append(own, at)
			}
		}
		if !held {
			if real := ownstate.Real(o); real != "" {
				if _, err := os.Lstat(real); err == nil {
					outside = append(outside, real)
				}
			}
		}
	}
	// Other runs' proxy sockets (sandbox.EgressParents): hidden like hunk's
	// own state wherever a place the sandbox shows holds them.
	for _, e := range sandbox.EgressParents() {
		for _, p := range shown {
			if sandbox.Under(e, []string{p.dir}) && !slices.Contains(own, e) {
				own = append(own, e)
			}
		}
	}
	return own, outside, nil
}
