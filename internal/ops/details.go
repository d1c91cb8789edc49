package ops

import (
	"github.com/hunk-dev/hunk/internal/apply"
	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/fsquery"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/sandbox"
)

// The details of each operation's Output, as Go types: the JSON result's
// "details", MCP's structuredContent and the tools' output schemas (package
// tools derives them from these types) all come from here.

// PatchSummary lists the paths a patch added, modified and deleted.
type PatchSummary struct {
	Added    []string `json:"added" jsonschema:"paths the patch created"`
	Modified []string `json:"modified" jsonschema:"paths the patch changed (a moved file by its new path)"`
	Deleted  []string `json:"deleted" jsonschema:"paths the patch removed"`
}

// ApplyPatchDetails are apply_patch's facts.
type ApplyPatchDetails struct {
	Summary PatchSummary       `json:"summary" jsonschema:"added, modified and deleted paths"`
	Files   []apply.FileResult `json:"files,omitempty" jsonschema:"each changed file: action, path, how each chunk was located, its diff"`
	Format  patchparse.Format  `json:"format" jsonschema:"the patch's format: codex, unified or search-replace"`
	DryRun  bool               `json:"dryRun" jsonschema:"nothing was written"`
	// AlreadyApplied: every change of the patch is in the files already.
	AlreadyApplied bool `json:"alreadyApplied,omitempty" jsonschema:"every change of the patch was in the files already; nothing was written"`
	// Recovered says which model mistakes were recovered from.
	Recovered []string `json:"recovered,omitempty" jsonschema:"the mistakes of the patch that were recovered from"`
	// Unwrapped says what the patch was found inside.
	Unwrapped []string         `json:"unwrapped,omitempty" jsonschema:"what the patch text was found inside (JSON, a shell heredoc), outermost first"`
	OpID      string           `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
	Verify    *execrun.Check   `json:"verify,omitempty" jsonschema:"the change's check (verify) and what it kept"`
	Checks    []*execrun.Check `json:"checks,omitempty" jsonschema:"the configured checks (checks: in the config) run for the changed files, and what they found"`
}

// PatchStatDetails describe a patch without applying it (--stat, --numstat).
type PatchStatDetails struct {
	Stat   []patchparse.FileStat `json:"stat"`
	Format patchparse.Format     `json:"format"`
}

// WriteDetails are write's facts.
type WriteDetails struct {
	Path     string           `json:"path" jsonschema:"the path written"`
	Bytes    int              `json:"bytes" jsonschema:"bytes written"`
	Created  bool             `json:"created" jsonschema:"the file is new"`
	NoOp     bool             `json:"noop" jsonschema:"the file already had this content; nothing was written"`
	SHA256   string           `json:"sha256" jsonschema:"the new content's SHA-256"`
	DryRun   bool             `json:"dryRun" jsonschema:"nothing was written"`
	Previous string           `json:"previousSha256,omitempty" jsonschema:"the replaced content's SHA-256"`
	Diff     string           `json:"diff,omitempty" jsonschema:"the change as a unified diff (when asked for)"`
	OpID     string           `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
	Verify   *execrun.Check   `json:"verify,omitempty" jsonschema:"the change's check (verify) and what it kept"`
	Checks   []*execrun.Check `json:"checks,omitempty" jsonschema:"the configured checks (checks: in the config) run for the changed files, and what they found"`
}

// EditDetails are edit's and insert's facts.
type EditDetails struct {
	edit.Result
	DryRun bool             `json:"dryRun,omitempty" jsonschema:"nothing was written"`
	OpID   string           `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
	Verify *execrun.Check   `json:"verify,omitempty" jsonschema:"the change's check (verify) and what it kept"`
	Checks []*execrun.Check `json:"checks,omitempty" jsonschema:"the configured checks (checks: in the config) run for the changed files, and what they found"`
}

// ExecDetails are exec's facts (execrun.Details).
type ExecDetails = execrun.Details

// DriversDetails list the exec drivers and which one auto picks.
type DriversDetails struct {
	Drivers []DriverRow `json:"drivers"`
	Auto    string      `json:"auto"`
}

// DriverRow is one driver: whether it works here, what it enforces and
// guards against (sandbox.Surveyed).
type DriverRow = sandbox.Surveyed

// The filesystem operations' details (hunk mcp --tools filesystem;
// package fsquery declares them). Each has "content", the reference
// server's whole structured result: the text the model reads.
type (
	FSText        = fsquery.TextResult
	FSList        = fsquery.ListResult
	FSEntry       = fsquery.Entry
	FSSearch      = fsquery.SearchResult
	FSInfo        = fsquery.Info
	FSMove        = fsquery.MoveResult
	FSAllowed     = fsquery.AllowedResult
	FSMedia       = fsquery.Media
	FSMediaItem   = fsquery.MediaItem
	FSOutput      = fsquery.Output
	FSMediaOutput = fsquery.MediaOutput
)

// FailureDetails are the facts a failed operation's details may carry
// beside "error" and "code": where it failed and what was found instead.
// The engines set them by name (result.Error.WithDetail); they are declared
// here, as a type, for the tools' output schemas, and the tools' tests check
// that no failure carries a fact not declared.
type FailureDetails struct {
	Path      string `json:"path,omitempty" jsonschema:"the file the failure is about"`
	Chunk     int    `json:"chunk,omitempty" jsonschema:"the patch chunk that failed (1-based)"`
	PatchLine int    `json:"patchLine,omitempty" jsonschema:"the patch line the failure is at"`
	Line      int    `json:"line,omitempty" jsonschema:"the file or patch line the failure is at"`
	// Lines are an ambiguous match's places.
	Lines      []int            `json:"lines,omitempty" jsonschema:"the lines an ambiguous old text or chunk matches"`
	Count      int              `json:"count,omitempty" jsonschema:"how many places an ambiguous old text matches"`
	Rule       edit.Rule        `json:"rule,omitempty" jsonschema:"how an ambiguous old text matched (exact or a near-match rule)"`
	Edit       int              `json:"edit,omitempty" jsonschema:"the failing edit of a list (1-based)"`
	Edits      []int            `json:"edits,omitempty" jsonschema:"two edits of a list that overlap"`
	Candidates []edit.Candidate `json:"candidates,omitempty" jsonschema:"the regions of the file closest to an old text that matched nowhere"`
	Closest    *ClosestRegion   `json:"closest,omitempty" jsonschema:"the region of the file closest to a chunk that fits nowhere"`
	// Failures are every failing chunk of a patch (the first is also the
	// failure's own).
	Failures     []ChunkFailure `json:"failures,omitempty" jsonschema:"every failing chunk of the patch"`
	TotalLines   int            `json:"totalLines,omitempty" jsonschema:"lines in the file (an offset or line past its end)"`
	TotalEntries int            `json:"totalEntries,omitempty" jsonschema:"entries in the directory (an offset past its end)"`
	Suggestions  []string       `json:"suggestions,omitempty" jsonschema:"existing paths close to one that was not found"`
	SHA256       string         `json:"sha256,omitempty" jsonschema:"the file's SHA-256 now (it changed since it was read)"`
	Image        string         `json:"image,omitempty" jsonschema:"the container image (docker driver)"`
}

// ClosestRegion is where a chunk that fits nowhere comes closest.
type ClosestRegion struct {
	Line       int `json:"line" jsonschema:"first line of the region"`
	Similarity int `json:"similarity" jsonschema:"how similar, in percent"`
}

// ChunkFailure is one failing chunk of a patch.
type ChunkFailure struct {
	Code      string         `json:"code" jsonschema:"the error code"`
	Message   string         `json:"message" jsonschema:"what went wrong"`
	Path      string         `json:"path,omitempty" jsonschema:"the file"`
	Chunk     int            `json:"chunk,omitempty" jsonschema:"the chunk (1-based)"`
	PatchLine int            `json:"patchLine,omitempty" jsonschema:"its patch line"`
	Line      int            `json:"line,omitempty" jsonschema:"the patch line a parse error is at"`
	Lines     []int          `json:"lines,omitempty" jsonschema:"the places an ambiguous chunk matches"`
	Closest   *ClosestRegion `json:"closest,omitempty" jsonschema:"the region closest to the chunk"`
}
