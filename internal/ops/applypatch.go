package ops

import (
	"strings"

	"github.com/hunk-dev/hunk/internal/apply"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/placeholder"
	"github.com/hunk-dev/hunk/internal/result"
)

// ApplyPatchRequest applies a Codex patch or a unified diff.
type ApplyPatchRequest struct {
	Patch   string `json:"patch" jsonschema:"the patch text: a Codex *** Begin Patch ... *** End Patch patch, a unified diff (git diff, diff -u) or SEARCH/REPLACE blocks (the file's path on the line before each <<<<<<< SEARCH ... ======= ... >>>>>>> REPLACE block)"`
	DryRun  bool   `json:"dryRun,omitempty" jsonschema:"check that the patch applies and write nothing"`
	Diff    bool   `json:"diff,omitempty" jsonschema:"add a unified diff of each changed file to the result text"`
	Reverse bool   `json:"reverse,omitempty" jsonschema:"undo the patch: apply it backwards"`
	// Compat "codex" reproduces Codex's apply_patch exactly.
	Compat string `json:"compat,omitempty" jsonschema:"codex: reproduce Codex's apply_patch exactly (first match wins, no recoveries)"`
	// Strict recovers no model mistakes (the CLI's --strict; not a tool
	// parameter: a harness sets it in the config).
	Strict bool `json:"-"`
	// Strip removes path components from unified diff paths
	// (patchparse.DefaultStrip: git's a/ b/).
	Strip *int `json:"strip,omitempty" jsonschema:"remove N leading path components from unified diff paths (default: git's a/ and b/)"`
	// Stat is "stat" or "numstat": describe the patch instead of applying it.
	Stat string `json:"-"`
	// Format names the patch's format (patchparse.Format); "" or "auto"
	// detects it.
	Format string `json:"-"`
	// AbsolutePaths names files in errors by their absolute path, as
	// Codex's apply_patch does (the apply_patch link).
	AbsolutePaths bool `json:"-"`
	// ifMatch, by workspace name: the hash a file must have (edit's blocks
	// under --if-match).
	ifMatch map[string]string
	// ThreeWay merges each text diff with the file from the blob its
	// index line names, as git apply --3way (the CLI's --3way).
	ThreeWay bool `json:"-"`
	// BaseInHistory, with ThreeWay: a blob is a base only when HEAD's
	// history holds it (commands may write the repository:
	// exec.git-write).
	BaseInHistory bool `json:"-"`
	// Favor, with ThreeWay: "ours", "theirs" or "union" resolves what
	// would conflict (git apply's --ours, --theirs, --union); "" leaves
	// markers.
	Favor string `json:"-"`
	// As names the operation in the history ("" apply-patch; the
	// apply_patch link: Codex's tool's name).
	As string `json:"-"`
}

func (r ApplyPatchRequest) command() string {
	if r.As != "" {
		return r.As
	}
	return "apply-patch"
}

// ApplyPatch plans, checks and commits every file of the patch, or none.
func ApplyPatch(env *Env, req ApplyPatchRequest) (*Output, error) {
	if req.Compat != "" && req.Compat != "codex" {
		return nil, result.Usagef("compat must be \"codex\" (or empty), not %q", req.Compat)
	}
	format := patchparse.Format(req.Format)
	switch format {
	case "auto":
		format = ""
	case "", patchparse.Codex, patchparse.Unified, patchparse.SearchReplace:
	default:
		return nil, result.Usagef("--format must be codex, unified, search-replace or auto, not %q", req.Format)
	}
	if max := env.Limits.PatchMaxBytes; max > 0 && int64(len(req.Patch)) > max {
		return nil, result.Errorf(result.TooLarge, "the patch is over the limit of %d bytes", max).
			WithHint("raise the limit with --max-bytes (or apply-patch.max-bytes in the config)")
	}
	if strings.TrimSpace(req.Patch) == "" {
		return nil, result.Usagef("the patch is empty").WithHint("give the patch text: *** Begin Patch ... *** End Patch, or a unified diff")
	}
	strip := patchparse.DefaultStrip
	if req.Strip != nil {
		strip = *req.Strip
	}
	p, err := patchparse.Parse(req.Patch, patchparse.Options{Strip: strip, Codex: req.Compat == "codex", Strict: req.Strict, Format: format, MaxBinary: env.Limits.PatchMaxBytes})
	if err != nil {
		return nil, err
	}
	return applyParsed(env, p, req)
}

// applyParsed applies a parsed patch as req asks (apply-patch, and edit's
// blocks).
func applyParsed(env *Env, p *patchparse.Patch, req ApplyPatchRequest) (*Output, error) {
	var err error
	if req.Reverse {
		if p, err = patchparse.Reverse(p); err != nil {
			return nil, err
		}
	}
	if req.Stat != "" {
		text := apply.StatText(p, req.Stat == "numstat")
		return &Output{Text: text, Message: text, Data: true, Details: &PatchStatDetails{Stat: p.Stat(), Format: p.Format}}, nil
	}
	ws := env.Workspace
	fsys, rec := env.FS(req.DryRun, req.command())
	defer fsys.Done()
	aopt := apply.Options{Compat: req.Compat, Strict: req.Strict, Diff: req.Diff || env.ToolResult, IfMatch: req.ifMatch, AllowPlaceholders: env.AllowPlaceholders}
	if req.ThreeWay {
		objects, done, err := apply.RepositoryObjects(fsys, env.Limits.PatchMaxBytes, req.BaseInHistory)
		if err != nil {
			return nil, err
		}
		defer done()
		aopt.ThreeWay = objects
	}
	if aopt.Favor, err = apply.FavorOf(req.Favor, req.ThreeWay); err != nil {
		return nil, err
	}
	if req.Compat != "codex" && !env.AllowPlaceholders { // Codex applies placeholders as text
		if err := placeholder.InPatch(p, apply.GitsText(fsys, aopt)); err != nil {
			return nil, err
		}
		notes, err := placeholder.AtEdges(p)
		if err != nil {
			return nil, err
		}
		p.Notes = append(p.Notes, notes...)
	}
	if req.AbsolutePaths {
		aopt.Display = func(name string) string { return ws.Abs(name) }
	}
	res, err := apply.Apply(fsys, p, aopt)
	unchanged := err == nil && len(res.Added)+len(res.Modified)+len(res.Deleted) == 0 && p.Format.Blocks()
	if unchanged || err != nil && req.Compat != "codex" && (result.As(err).Code == result.NoMatch || result.As(err).Code == result.AlreadyExists) &&
		apply.AlreadyApplied(fsys, p, aopt) {
		msg := "The patch is already applied: every change it makes is in the files. Nothing was written."
		return &Output{Text: msg, Message: msg, Details: &ApplyPatchDetails{
			AlreadyApplied: true, Format: p.Format, DryRun: req.DryRun,
			Summary: PatchSummary{Added: []string{}, Modified: []string{}, Deleted: []string{}},
		}}, nil
	}
	if err != nil {
		if re := result.As(err); re.Code == result.NotFound {
			if re.Path != "" {
				return nil, ws.DidYouMean(re.Path, err)
			}
		}
		return nil, err
	}
	return patchOutput(p, res, req, opID(rec)), nil
}

// patchOutput reports an applied patch: the summary git-style, the diffs
// when asked for, and what the patch was read from and recovered from.
func patchOutput(p *patchparse.Patch, res *apply.Result, req ApplyPatchRequest, id string) *Output {
	summary := res.Summary()
	if req.DryRun {
		summary = strings.Replace(summary, "Success. Updated the following files:",
			"Dry run: the patch applies. It would update the following files:", 1)
		summary = strings.Replace(summary, "Applied with conflicts. Updated the following files:",
			"Dry run: the patch applies with conflicts. It would update the following files:", 1)
	}
	summary = strings.TrimSuffix(summary, "\n")
	out := &Output{Text: summary, Message: summary}
	if d := res.Diff(); req.Diff && d != "" {
		out.Diff = d
		out.Text += "\n" + strings.TrimSuffix(d, "\n")
	}
	details := &ApplyPatchDetails{Summary: PatchSummary{Added: res.Added, Modified: res.Modified, Deleted: res.Deleted},
		Files: res.Files, Format: p.Format, DryRun: req.DryRun, OpID: id, Unwrapped: p.Unwrapped}
	out.Details = details
	var notes []string
	if len(p.Unwrapped) > 0 {
		notes = append(notes, "read the patch from "+strings.Join(p.Unwrapped, ", then "))
	}
	if notes := append(append(notes, p.Notes...), res.Notes...); len(notes) > 0 {
		// What was recovered from is said, to the user and the model.
		details.Recovered = append(p.Notes, res.Notes...)
		out.Notice = strings.Join(notes, "; ")
		out.Text = "note: " + out.Notice + "\n" + out.Text
	}
	if e := res.Conflict(); e != nil { // --3way wrote conflicts: an error, and what was written
		out.Failure, out.ExitCode = e, 1
		out.Text += "\n" + e.Msg + "\nhint: " + e.Hints[0]
	}
	return out
}
