package ops

import (
	"github.com/hunk-dev/hunk/internal/apply"
	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/fsquery"
	"github.com/hunk-dev/hunk/internal/patchparse"
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
	Unwrapped []string `json:"unwrapped,omitempty" jsonschema:"what the patch text was found inside (JSON, a shell heredoc), outermost first"`
	OpID      string   `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
}

// PatchStatDetails describe a patch without applying it (--stat, --numstat).
type PatchStatDetails struct {
	Stat   []patchparse.FileStat `json:"stat"`
	Format patchparse.Format     `json:"format"`
}

// WriteDetails are write's facts.
type WriteDetails struct {
	Path     string `json:"path" jsonschema:"the path written"`
	Bytes    int    `json:"bytes" jsonschema:"bytes written"`
	Created  bool   `json:"created" jsonschema:"the file is new"`
	NoOp     bool   `json:"noop" jsonschema:"the file already had this content; nothing was written"`
	SHA256   string `json:"sha256" jsonschema:"the new content's SHA-256"`
	DryRun   bool   `json:"dryRun" jsonschema:"nothing was written"`
	Previous string `json:"previousSha256,omitempty" jsonschema:"the replaced content's SHA-256"`
	Diff     string `json:"diff,omitempty" jsonschema:"the change as a unified diff (when asked for)"`
	OpID     string `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
}

// EditDetails are edit's and insert's facts.
type EditDetails struct {
	edit.Result
	DryRun bool   `json:"dryRun,omitempty" jsonschema:"nothing was written"`
	OpID   string `json:"opId,omitempty" jsonschema:"the operation's id in the history (hunk log, hunk undo)"`
}

// ExecDetails are exec's facts (execrun.Details).
type ExecDetails = execrun.Details

// DriversDetails list the exec drivers and which one auto picks.
type DriversDetails struct {
	Drivers []DriverRow `json:"drivers"`
	Auto    string      `json:"auto"`
}

// DriverRow is one driver: whether it works here and what it enforces.
type DriverRow struct {
	Name       string `json:"name"`
	Available  bool   `json:"available"`
	Note       string `json:"note"`
	Filesystem bool   `json:"filesystem"`
	Network    bool   `json:"network"`
	Timeout    bool   `json:"timeout"`
	Memory     bool   `json:"memory"`
	Pids       bool   `json:"pids"`
	CPUs       bool   `json:"cpus"`
	// Against a hostile command (sandbox.Guard* names).
	Guards      []string `json:"guards"`
	NotEnforced []string `json:"notEnforced"`
}

// The filesystem operations' details (hunk mcp --tools filesystem). Each
// has "content", the reference server's whole structured result: the text
// the model reads.

// FSText is a filesystem operation whose result is text.
type FSText struct {
	Path    string `json:"path,omitempty" jsonschema:"the path, relative to the workspace"`
	Content string `json:"content" jsonschema:"the result text"`
}

// FSList is a directory listing.
type FSList struct {
	Path    string    `json:"path" jsonschema:"the directory, relative to the workspace"`
	Entries []FSEntry `json:"entries" jsonschema:"the directory's entries"`
	Content string    `json:"content" jsonschema:"the listing as text"`
}

// FSEntry is one directory entry as the listings show it.
type FSEntry = fsquery.Entry

// FSSearch is the paths a search found.
type FSSearch struct {
	Matches []string `json:"matches" jsonschema:"the paths found"`
	Content string   `json:"content" jsonschema:"the paths, a line each"`
}

// FSInfo describes a file or directory.
type FSInfo = fsquery.Info

// FSMove is a move or rename.
type FSMove struct {
	Source      string `json:"source" jsonschema:"the path moved, relative to the workspace"`
	Destination string `json:"destination" jsonschema:"its new path"`
	Content     string `json:"content" jsonschema:"the result text"`
}

// FSAllowed names the directories the tools may touch.
type FSAllowed struct {
	Directories []string `json:"directories" jsonschema:"the directories"`
	Content     string   `json:"content" jsonschema:"the directories as text"`
}

// FSMedia describes a file read_media_file sends as a content block.
type FSMedia struct {
	Path     string `json:"path" jsonschema:"the file, relative to the workspace"`
	MimeType string `json:"mimeType" jsonschema:"its MIME type"`
	Bytes    int    `json:"bytes" jsonschema:"its size in bytes"`
	// Content is the content block, as the reference server's
	// structuredContent holds it.
	Content []FSMediaItem `json:"content" jsonschema:"the file as the one content block"`
}

// FSMediaItem is read_media_file's content block: an image or audio block,
// or any other file as an embedded resource.
type FSMediaItem struct {
	Type     string      `json:"type" jsonschema:"image, audio or resource"`
	Data     string      `json:"data,omitempty" jsonschema:"an image's or audio's bytes, base64"`
	MimeType string      `json:"mimeType,omitempty" jsonschema:"an image's or audio's MIME type"`
	Resource *FSResource `json:"resource,omitempty" jsonschema:"any other file"`
}

// FSResource is an embedded file.
type FSResource struct {
	URI      string `json:"uri" jsonschema:"the file's file:// URI"`
	MimeType string `json:"mimeType,omitempty" jsonschema:"its MIME type"`
	Blob     string `json:"blob" jsonschema:"its bytes, base64"`
}

// FSOutput is what the reference filesystem server's tools declare as their
// structured result, and all that hunk's drop-in puts there.
type FSOutput struct {
	Content string `json:"content" jsonschema:"the result text"`
}

// FSMediaOutput is read_media_file's structured result.
type FSMediaOutput struct {
	Content []FSMediaItem `json:"content" jsonschema:"the file as the one content block"`
}

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
