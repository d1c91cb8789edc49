package call

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/tools"
)

// OpenAI Responses' apply_patch_call (the apply_patch tool), answered by
// applying the operation as a Codex patch.

var openAIApplyPatchShape = shape{
	name:   OpenAIApplyPatch,
	detect: func(e envelope) bool { return e.Type == "apply_patch_call" },
	runs:   one("apply_patch"),
	run:    openAIApplyPatch,
	fail:   applyPatchFail,
}

func applyPatchFail(e envelope, err error) any {
	return applyPatchOutput{Type: "apply_patch_call_output", CallID: e.CallID, Status: "failed", Output: say(err), Caller: e.Caller}
}

type applyPatchOp struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Diff string `json:"diff"`
}

type applyPatchOutput struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Status string          `json:"status"`
	Output string          `json:"output"`
	Caller json.RawMessage `json:"caller,omitempty"`
}

func openAIApplyPatch(ctx context.Context, s *tools.Session, e envelope) (any, bool) {
	var op applyPatchOp
	if err := json.Unmarshal(e.Operation, &op); err != nil || op.Path == "" {
		return applyPatchFail(e, result.Errorf(result.InvalidArgument, "apply_patch_call: operation must be {type, path, diff}")), true
	}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	diff := strings.TrimRight(op.Diff, "\n")
	switch op.Type {
	case "create_file":
		patch.WriteString("*** Add File: " + op.Path + "\n")
		if diff != "" {
			for _, l := range strings.Split(diff, "\n") {
				if !strings.HasPrefix(l, "+") {
					l = "+" + l // a create_file diff is the content, each line with "+"
				}
				patch.WriteString(l + "\n")
			}
		}
	case "update_file":
		patch.WriteString("*** Update File: " + op.Path + "\n")
		if diff != "" {
			patch.WriteString(diff + "\n")
		}
	case "delete_file":
		patch.WriteString("*** Delete File: " + op.Path + "\n")
	default:
		return applyPatchFail(e, result.Errorf(result.InvalidArgument, "apply_patch_call: unknown operation type %q (create_file, update_file, delete_file)", op.Type)), true
	}
	patch.WriteString("*** End Patch\n")
	out, err := s.Change(ctx, func(env *ops.Env) (*ops.Output, error) {
		return ops.ApplyPatch(env, ops.ApplyPatchRequest{Patch: patch.String()})
	})
	if err != nil {
		return applyPatchFail(e, err), true
	}
	return applyPatchOutput{Type: "apply_patch_call_output", CallID: e.CallID, Status: "completed", Output: out.Text, Caller: e.Caller}, false
}
