package call

// Claude Code's own search tools, Grep and Glob, in their input shapes:
// answered by hunk's search (a tool_result like theirs: Grep lists the
// files with a match unless output_mode says otherwise; Glob lists the
// files a pattern names, newest first).

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// grepInput is Claude Code's Grep tool's input.
type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Type       string `json:"type"`
	OutputMode string `json:"output_mode"`
	Before     int    `json:"-B"`
	After      int    `json:"-A"`
	Context    int    `json:"-C"`
	LineNumber *bool  `json:"-n"`
	IgnoreCase bool   `json:"-i"`
	HeadLimit  int    `json:"head_limit"`
	Offset     int    `json:"offset"`
	Multiline  bool   `json:"multiline"`
}

// globInput is Claude Code's Glob tool's input.
type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// claudeSearch answers Grep and Glob; ok false when e is neither.
func claudeSearch(ctx context.Context, s *tools.Session, e envelope) (any, bool, bool) {
	var req ops.SearchRequest
	switch e.Name {
	case "Grep":
		var in grepInput
		if err := json.Unmarshal(e.Input, &in); err != nil || in.Pattern == "" {
			return anthropicFail(e, result.Errorf(result.InvalidArgument, "Grep: input must be {\"pattern\": ...}")), true, true
		}
		req = ops.SearchRequest{Pattern: in.Pattern, Type: nonEmpty(in.Type), Glob: nonEmpty(in.Glob), OutputMode: in.OutputMode,
			Before: in.Before, After: in.After, Context: in.Context, IgnoreCase: in.IgnoreCase, Limit: in.HeadLimit, Offset: in.Offset,
			Multiline: in.Multiline, Paths: nonEmpty(in.Path)}
		if req.OutputMode == "" {
			req.OutputMode = "files_with_matches" // Grep's default
		}
	case "Glob":
		var in globInput
		if err := json.Unmarshal(e.Input, &in); err != nil || in.Pattern == "" {
			return anthropicFail(e, result.Errorf(result.InvalidArgument, "Glob: input must be {\"pattern\": ...}")), true, true
		}
		req = ops.SearchRequest{Pattern: in.Pattern, OutputMode: "names", Newest: true, Paths: nonEmpty(in.Path)}
	default:
		return nil, false, false
	}
	req.Page = func(n int) string { return fmt.Sprintf(`"offset": %d`, n) }
	out, err := ops.Search(ctx, s.Env, req)
	if err != nil {
		return anthropicFail(e, err), true, true
	}
	return toolResult{Type: "tool_result", ToolUseID: e.ID, Content: out.Text}, false, true
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
