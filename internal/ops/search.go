package ops

import (
	"context"

	"github.com/hunk-dev/hunk/internal/search"
)

// SearchRequest finds text in the workspace's files, or files by name.
type SearchRequest = search.Request

// Search runs a search (search.Run). Nothing found is exit 1, as grep's.
func Search(ctx context.Context, env *Env, req SearchRequest) (*Output, error) {
	text, details, found, err := search.Run(ctx, env.Workspace, req)
	if err != nil {
		return nil, err
	}
	out := &Output{Text: text, Message: text, Details: details, Data: true}
	if found == 0 {
		out.Text, out.ExitCode = "No matches", 1
	}
	return out, nil
}
