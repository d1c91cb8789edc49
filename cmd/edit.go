package cmd

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// EditOptions are the parsed flags of `hunk edit`.
type EditOptions struct {
	Path       string
	Old, New   *string // --old/--new or the contents of --old-file/--new-file
	EditsFile  string  // --edits FILE|-
	BlocksFile string  // --blocks FILE|-
	ReplaceAll bool
	Exact      bool
	IfMatch    string
	Diff       bool
	DryRun     bool
	InsertLine int         // --insert-line N: insert --new after line N (-1: not inserting)
	Verify     verifyFlags // --verify: the change's check
}

// newEditCmd builds the command; runF is its action (nil: editRun; tests
// pass one that records the parsed options).
func newEditCmd(app *App, runF func(*App, *EditOptions) error) *cobra.Command {
	if runF == nil {
		runF = editRun
	}
	o := &EditOptions{}
	var oldText, newText, oldFile, newFile string
	cmd := &cobra.Command{
		Use:   "edit PATH (--old TEXT --new TEXT | --old-file F --new-file F | --edits FILE|- | --blocks FILE|-)",
		Short: "Replace exact text in a file, with careful fuzzy fallbacks and hints",
		Long: `Replace text in one file. Each old text must occur exactly once (every
occurrence with --replace-all). With --edits, a JSON list of
{"oldText","newText","replaceAll"} edits is matched against the original file
and applied together or not at all.

When the old text is not found exactly, a unique match is accepted after
normalizing line endings, then trailing whitespace, then Unicode punctuation,
then a uniform indentation shift (the new text is re-indented the same way);
--exact turns that off. An edit that is already applied, or whose old and new
text are identical, succeeds without changing anything.

--insert-line N inserts the --new text as whole lines after line N (0: at
the start of the file), in the file's line endings.

--blocks reads SEARCH/REPLACE blocks for the file: Cline's "------- SEARCH",
lines to find, "=======", their replacement, "+++++++ REPLACE" (or the
<<<<<<< SEARCH / >>>>>>> REPLACE markers), and Roo Code's apply_diff blocks
with :start_line: hints. They go through apply-patch's engine: each block a
chunk found in one place, in any order, all or none.`,
		Example: `  hunk edit src/main.go --old 'fmt.Println("hi")' --new 'fmt.Println("hello")'
  hunk edit src/main.go --old-file old.txt --new-file new.txt --diff
  echo '[{"oldText":"a := 1","newText":"a := 2"}]' | hunk edit src/main.go --edits -
  hunk edit src/main.go --insert-line 3 --new 'import "os"'
  hunk edit src/main.go --blocks - < blocks.txt`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Path = args[0]
			fl := cmd.Flags()
			stdins := 0
			for _, name := range []string{o.EditsFile, o.BlocksFile, oldFile, newFile} {
				if name == "-" {
					stdins++
				}
			}
			if stdins > 1 {
				return result.Usagef("only one of --edits, --blocks, --old-file and --new-file can read stdin")
			}
			var err error
			if o.Old, err = textFlag(app, fl.Changed("old"), oldText, "old", fl.Changed("old-file"), oldFile); err != nil {
				return err
			}
			if o.New, err = textFlag(app, fl.Changed("new"), newText, "new", fl.Changed("new-file"), newFile); err != nil {
				return err
			}
			if err := o.checkModes(fl.Changed("insert-line"), cmd.UseLine()); err != nil {
				return err
			}
			return runF(app, o)
		},
	}
	f := cmd.Flags()
	addPlaceholderFlag(f)
	f.StringVar(&oldText, "old", "", "the exact text to replace")
	f.StringVar(&newText, "new", "", "the text to put in its place")
	f.StringVar(&oldFile, "old-file", "", "read the old text from FILE (inside the workspace; - for stdin)")
	f.StringVar(&newFile, "new-file", "", "read the new text from FILE (inside the workspace; - for stdin)")
	f.StringVar(&o.EditsFile, "edits", "", `read a JSON list of {"oldText","newText","replaceAll"} edits from FILE (inside the workspace; - for stdin)`)
	f.StringVar(&o.BlocksFile, "blocks", "", "read SEARCH/REPLACE blocks for the file from FILE (inside the workspace; - for stdin)")
	f.IntVar(&o.InsertLine, "insert-line", 0, "insert the --new text after line `N` instead of replacing (0: at the start)")
	f.BoolVar(&o.ReplaceAll, "replace-all", false, "replace every occurrence of the old text")
	f.BoolVar(&o.Exact, "exact", false, "match the old text exactly only (no fuzzy matching)")
	f.StringVar(&o.IfMatch, "if-match", "", "refuse (STALE) unless the file's SHA-256 is this")
	f.BoolVar(&o.Diff, "diff", false, "print a unified diff of the change")
	f.BoolVar(&o.DryRun, "dry-run", false, "do everything but write")
	o.Verify.add(f)
	f.Int64("max-bytes", 0, "refuse files larger than this (default 1 GiB)")
	configKey(f, "max-bytes", "edit.max-bytes")
	_ = cmd.MarkFlagFilename("old-file")
	_ = cmd.MarkFlagFilename("new-file")
	_ = cmd.MarkFlagFilename("edits", "json")
	return cmd
}

// checkModes refuses options that mix edit's modes (old and new text, a
// list of edits, blocks, an insert) or leave one half given.
func (o *EditOptions) checkModes(insertLine bool, usage string) error {
	if insertLine {
		switch {
		case o.Old != nil || o.EditsFile != "" || o.ReplaceAll || o.Exact:
			return result.Usagef("--insert-line takes only the new text (--new or --new-file)")
		case o.New == nil:
			return result.Usagef("missing the text to insert: give --new TEXT or --new-file FILE")
		case o.InsertLine < 0:
			return result.Usagef("--insert-line must be 0 (the start of the file) or more, not %d", o.InsertLine)
		}
	} else {
		o.InsertLine = -1
	}
	switch {
	case o.BlocksFile != "" && (o.Old != nil || o.New != nil || o.EditsFile != "" || o.ReplaceAll || o.InsertLine >= 0):
		return result.Usagef("--blocks cannot be combined with --old/--new, --edits, --replace-all or --insert-line").WithHint("put every change in the blocks")
	case o.BlocksFile != "":
	case o.InsertLine >= 0:
	case o.EditsFile != "" && (o.Old != nil || o.New != nil):
		return result.Usagef("--edits cannot be combined with --old/--new").WithHint("put every edit in the --edits list")
	case o.EditsFile != "" && o.ReplaceAll:
		return result.Usagef("--replace-all applies to --old/--new; in --edits set \"replaceAll\": true per edit")
	case o.EditsFile == "" && o.Old == nil:
		return result.Usagef("missing the old text: give --old TEXT, --old-file FILE or --edits FILE").WithHint("usage: " + usage)
	case o.EditsFile == "" && o.New == nil:
		return result.Usagef("missing the new text: give --new TEXT or --new-file FILE (--new '' deletes the old text)").WithHint("usage: " + usage)
	}
	return nil
}

// textFlag returns the text of --NAME or --NAME-file (nil when neither is given).
func textFlag(app *App, set bool, text, name string, fileSet bool, file string) (*string, error) {
	switch {
	case set && fileSet:
		return nil, result.Usagef("--%s and --%s-file cannot be combined", name, name)
	case set:
		return &text, nil
	case fileSet:
		b, err := readInput(app, file)
		if err != nil {
			return nil, result.Wrap(result.As(err).Code, err, "--"+name+"-file")
		}
		s := string(b)
		return &s, nil
	}
	return nil, nil
}

// readInput reads stdin for "-", else a file of the workspace, resolved like
// every other path: its text ends up in a file of the workspace (and in a
// diff), so a file outside must not be reachable through it.
func readInput(app *App, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(app.Stdin)
	}
	ws, err := app.Workspace()
	if err != nil {
		return nil, err
	}
	n, err := ws.Resolve(name)
	if err != nil {
		return nil, err
	}
	return ws.ReadFile(n)
}

func editRun(app *App, o *EditOptions) error {
	if o.InsertLine >= 0 {
		env, err := app.Env()
		if err != nil {
			return err
		}
		req := ops.InsertRequest{Path: o.Path, After: o.InsertLine, Text: *o.New, IfMatch: o.IfMatch, Diff: o.Diff, DryRun: o.DryRun}
		out, err := o.Verify.change(app, env, o.DryRun, func(e *ops.Env) (*ops.Output, error) { return ops.Insert(e, req) })
		if err != nil {
			return err
		}
		return app.renderChange(out)
	}
	if o.BlocksFile != "" {
		b, err := readInput(app, o.BlocksFile)
		if err != nil {
			return result.Wrap(result.As(err).Code, err, "--blocks")
		}
		env, err := app.Env()
		if err != nil {
			return err
		}
		req := ops.EditRequest{Path: o.Path, Blocks: string(b), Exact: o.Exact, IfMatch: o.IfMatch, Diff: o.Diff, DryRun: o.DryRun}
		out, err := o.Verify.change(app, env, o.DryRun, func(e *ops.Env) (*ops.Output, error) { return ops.Edit(e, req) })
		if err != nil {
			return err
		}
		return app.renderChange(out)
	}
	var edits []edit.Edit
	if o.EditsFile != "" {
		b, err := readInput(app, o.EditsFile)
		if err != nil {
			return result.Wrap(result.As(err).Code, err, "--edits")
		}
		if edits, err = edit.ParseEdits(bytes.NewReader(b)); err != nil {
			return err
		}
	} else {
		edits = []edit.Edit{{OldText: *o.Old, NewText: *o.New, ReplaceAll: o.ReplaceAll}}
	}
	env, err := app.Env()
	if err != nil {
		return err
	}
	req := ops.EditRequest{Path: o.Path, Exact: o.Exact, IfMatch: o.IfMatch, Diff: o.Diff, DryRun: o.DryRun}
	for _, e := range edits {
		req.Edits = append(req.Edits, ops.EditSpec{OldText: e.OldText, NewText: e.NewText, ReplaceAll: e.ReplaceAll})
	}
	out, err := o.Verify.change(app, env, o.DryRun, func(e *ops.Env) (*ops.Output, error) { return ops.Edit(e, req) })
	if err != nil {
		return err
	}
	return app.renderChange(out)
}
