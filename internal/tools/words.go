package tools

import (
	"errors"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// A failure's hints are written in the command line's words (the engines
// know no other surface); a tool call's model can pass none of hunk's
// flags. words rewrites them, at the one place every tool result is made,
// into the words of the tool set that served the call: its tools'
// arguments, and for what a call cannot change, the person running hunk.
// Each pair is applied in order, longest phrases first.

// hunkWords are hunk's tool set's (hunk mcp, hunk call's hunk shape).
var hunkWords = strings.NewReplacer(
	`--replace-all ("replaceAll": true in --edits)`, `"replaceAll": true`,
	"--replace-all", `"replaceAll": true`,
	"--exact refuses that", `"exact": true refuses that`,
	"pass --old and --new, or --edits FILE with a JSON list of {\"oldText\",\"newText\"}", `give "oldText" and "newText", or "edits": a list of {"oldText", "newText"}`,
	"'hunk write'", "the write tool",
	"hunk log --diff ID shows what the operation did", `the undo tool's "dryRun": true shows what taking it back would do`,
	"hunk log lists the operations and their ids", "each change's result names its operation (opId)",
	"hunk log lists what the history holds", "each change's result names its operation (opId)",
	"to bring it back, undo the undo: hunk undo ", "to bring it back, undo the undo: the undo tool with id ",
	"--force restores them anyway", `"force": true restores them anyway`,
	"--force moves it back anyway", `"force": true moves it back anyway`,
	"drop --create-only to replace it", `drop "createOnly" to replace it`,
	"raise the limit with --max-bytes (config edit.max-bytes)", "the person running hunk sets the limit (config edit.max-bytes)",
	"raise the limit with --max-bytes (or write.max-bytes in the config)", "the person running hunk sets the limit (config write.max-bytes)",
	"raise the limit with --max-bytes (or apply-patch.max-bytes in the config)", "the person running hunk sets the limit (config apply-patch.max-bytes)",
	"or pass --allow-placeholders if", "or the person running hunk allows them (--allow-placeholders) if",
	" (or --compat codex, where Add File overwrites)", "",
	" (or use --compat codex, where a move overwrites)", "",
	"--workspace-only=false lifts the confinement explicitly", "only the person running hunk can lift the confinement",
)

// filesystemWords are the filesystem drop-in's (its tools' names).
var filesystemWords = strings.NewReplacer(
	`add surrounding lines to the old text so that it matches one place only, or replace every match with --replace-all ("replaceAll": true in --edits)`, "add surrounding lines to oldText so that it matches one place only",
	"; --exact refuses that", "",
	"pass --old and --new, or --edits FILE with a JSON list of {\"oldText\",\"newText\"}", `give "edits": a list of {"oldText", "newText"}`,
	"create one with 'hunk write'", "create one with write_file",
	"to create or overwrite a whole file use 'hunk write'", "to create or overwrite a whole file use write_file",
	"'hunk write'", "write_file",
	"raise the limit with --max-bytes (config edit.max-bytes)", "the person running hunk sets the limit (config edit.max-bytes)",
	"raise the limit with --max-bytes (or write.max-bytes in the config)", "the person running hunk sets the limit (config write.max-bytes)",
	"--workspace-only=false lifts the confinement explicitly", "only the person running hunk can lift the confinement",
)

// surfaceHints rewrites err's hints (and those of the failures it lists) in
// the words of t's tool set.
func (t *Tool) surfaceHints(err error) {
	var re *result.Error
	if !errors.As(err, &re) {
		return
	}
	w := t.words()
	rewrite := func(hs []string) {
		for i, h := range hs {
			hs[i] = strings.TrimSpace(w.Replace(h))
		}
	}
	rewrite(re.Hints)
	for _, f := range re.Also {
		rewrite(f.Hints)
	}
}
