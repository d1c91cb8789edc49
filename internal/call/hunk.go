package call

import (
	"context"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// hunk's own shape: {"tool": NAME, "arguments": {...}}, answered with the
// --json result.

var hunkShape = shape{
	name:   Hunk,
	detect: func(e envelope) bool { return e.Tool != "" },
	run:    hunk,
	fail:   func(_ envelope, err error) any { return result.Failure(err, nil) },
}

// hunk answers {"tool": NAME, "arguments": {...}} with the --json result.
func hunk(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	all := declared(s)
	t := all.Lookup(e.Tool)
	if t == nil {
		if err := s.Guard(e.Tool); err != nil {
			return result.Failure(err, nil), true
		}
		return result.Failure(result.Errorf(result.InvalidArgument, "unknown tool %q", e.Tool).
			WithHint("tools: "+strings.Join(served(s), ", ")), nil), true
	}
	r := t.Call(ctx, s, e.Arguments)
	return r, r.IsError
}
