package tools

import (
	"context"
	"encoding/json"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/search"
)

// searchTool is the search tool: text in the workspace's files, or files
// by name (docs/search.md).
func searchTool() *Tool {
	return &Tool{
		Name:  "search",
		Title: "Search the files",
		Description: "Find the lines of the workspace's files that match a regular expression (Go's RE2 syntax: no look-around, " +
			"no backreferences) or a literal string (fixedStrings), as path:line:text in path and line order, with lines of " +
			"context on request; or only the files with a match (files_with_matches), or counts; or the files whose path " +
			"matches a glob (outputMode names). Files .gitignore leaves out, hidden and binary files are skipped (noIgnore, " +
			"hidden); glob and type narrow the files. At most limit matches (default 200) are shown; the result says how to " +
			"see the next ones (offset).",
		Input:    schemaFor[ops.SearchRequest](),
		Output:   output(detailsOf[search.Result](), detailsOf[search.NameResult]()),
		ReadOnly: true, Idempotent: true, stoppable: true,
		run: func(ctx context.Context, s *Session, args json.RawMessage) (*ops.Output, error) {
			var req ops.SearchRequest
			if err := decode("search", args, &req, "pattern"); err != nil {
				return nil, err
			}
			return ops.Search(ctx, s.Env, req)
		},
	}
}
