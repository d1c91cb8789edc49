package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
)

// applyPatchOptions are the parsed flags of `hunk apply-patch`.
type applyPatchOptions struct {
	File    string // "" or "-" for stdin
	Diff    bool
	DryRun  bool
	Compat  string
	Strict  bool // --strict: no recovery of model mistakes
	Strip   int
	Reverse bool // -R: undo the patch
	Stat    bool // --stat: a diffstat instead of applying
	NumStat bool // --numstat: counts per file instead of applying
	Input   string
	Format  string // --format: codex, unified, search-replace, auto
	// ThreeWay: --3way, merge with the blob each diff was made from
	ThreeWay bool
	// Ours, Theirs, Union: with --3way, resolve conflicts so
	Ours, Theirs, Union bool
	Verify              verifyFlags // --verify: the change's check
}

// newApplyPatchCmd builds the command; runF is its action (nil:
// applyPatchRun; tests pass one that records the parsed options).
func newApplyPatchCmd(app *App, runF func(*App, *applyPatchOptions) error) *cobra.Command {
	if runF == nil {
		runF = applyPatchRun
	}
	opts := &applyPatchOptions{}
	cmd := &cobra.Command{
		Use:   "apply-patch [FILE]",
		Short: "Apply a Codex patch, a unified diff or SEARCH/REPLACE blocks, all files or none",
		Long: `Apply a patch to the workspace: a Codex "*** Begin Patch" patch (and the
variants other tools emit), a unified diff (git diff, diff -u) or aider's
SEARCH/REPLACE blocks, read from FILE or from stdin when FILE is absent or
"-". The format is detected (--format names it); a patch inside a markdown
fence, prose, JSON tool arguments or a shell heredoc is unwrapped.

Chunks are located as Codex does (forward from the previous chunk: exact, then
ignoring trailing whitespace, then surrounding whitespace, then Unicode
punctuation); a chunk that fits several places is refused as AMBIGUOUS unless
a line number or an "@@ context" line decides. Common model mistakes are
recovered when the place and the result are certain. Every file is planned
and checked before anything is written; a failure leaves every file as it was.`,
		Example: `  hunk apply-patch fix.patch
  git diff | hunk -C ../other apply-patch --dry-run
  hunk apply-patch --diff < change.txt`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if opts.Input != "" {
				if opts.File != "" {
					return result.Usagef("give the patch as FILE or with -i, not both")
				}
				opts.File = opts.Input
			}
			opts.Compat = app.Cfg.Patch.Compat
			opts.Strict = app.Cfg.Patch.Strict
			return runF(app, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Diff, "diff", false, "print a unified diff of each changed file")
	f.BoolVar(&opts.DryRun, "dry-run", false, "check that the patch applies, write nothing")
	f.BoolVar(&opts.DryRun, "check", false, "alias of --dry-run")
	f.BoolVarP(&opts.Reverse, "reverse", "R", false, "undo the patch: apply it backwards (as patch -R, git apply -R)")
	f.BoolVar(&opts.Stat, "stat", false, "print a diffstat of the patch instead of applying it (as git apply --stat)")
	f.BoolVar(&opts.NumStat, "numstat", false, "print added and removed lines per file instead of applying (as git apply --numstat)")
	f.StringVarP(&opts.Input, "input", "i", "", "read the patch from `FILE` (as patch -i)")
	f.BoolVarP(&opts.ThreeWay, "3way", "3", false, "merge each diff with the file from the blob its index line names, leaving conflict markers where they conflict (as git apply --3way; exit 1 on a conflict)")
	f.BoolVar(&opts.Ours, "ours", false, "with --3way, resolve conflicts with the file's lines")
	f.BoolVar(&opts.Theirs, "theirs", false, "with --3way, resolve conflicts with the diff's lines")
	f.BoolVar(&opts.Union, "union", false, "with --3way, resolve conflicts with both sides' lines, the file's first")
	cmd.MarkFlagsMutuallyExclusive("ours", "theirs", "union")
	f.StringVar(&opts.Format, "format", "auto", "the patch's format: codex, unified, search-replace or auto (detect it)")
	f.String("compat", "", `"codex": reproduce Codex's apply_patch exactly (first match wins, no recoveries, Add/Move overwrite)`)
	f.IntVarP(&opts.Strip, "strip", "p", patchparse.DefaultStrip, "remove N leading path components from unified diff paths (default: git's a/ b/)")
	f.Lookup("strip").DefValue = "0" // hides "(default -1)": -1 means git's a/ b/, said in the usage
	f.Int64("max-bytes", 0, "refuse a patch larger than this many bytes (default 256 MiB)")
	f.Bool("strict", false, "recover no model mistakes: a chunk must match by Codex's passes (a loose envelope, a misremembered, elided or dropped context line is refused)")
	configKey(f, "compat", "apply-patch.compat")
	configKey(f, "strict", "apply-patch.strict")
	addPlaceholderFlag(f)
	opts.Verify.add(f)
	configKey(f, "max-bytes", "apply-patch.max-bytes")
	_ = cmd.RegisterFlagCompletionFunc("compat", cobra.FixedCompletions([]string{"codex"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"auto", "codex", "unified", "search-replace"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func applyPatchRun(app *App, opts *applyPatchOptions) error {
	if opts.Compat != "" && opts.Compat != "codex" {
		return result.Usagef("--compat must be \"codex\" (or empty), not %q", opts.Compat)
	}
	text, err := readPatch(app, opts.File)
	if err != nil {
		return err
	}
	tuneGC(text)
	env, err := app.Env()
	if err != nil {
		return err
	}
	req := ops.ApplyPatchRequest{Patch: text, DryRun: opts.DryRun, Diff: opts.Diff, Reverse: opts.Reverse,
		Compat: opts.Compat, Strict: opts.Strict, Strip: &opts.Strip, Format: opts.Format, ThreeWay: opts.ThreeWay,
		BaseInHistory: app.Cfg.Exec.GitWrite} // commands may write .git: a planted blob is no base
	for name, set := range map[string]bool{"ours": opts.Ours, "theirs": opts.Theirs, "union": opts.Union} {
		if set {
			req.Favor = name
		}
	}
	switch {
	case opts.NumStat:
		req.Stat = "numstat"
	case opts.Stat:
		req.Stat = "stat"
	}
	out, err := opts.Verify.change(app, env, opts.DryRun, func(e *ops.Env) (*ops.Output, error) { return ops.ApplyPatch(e, req) })
	if err == nil && out.Notice != "" && !app.Cfg.JSON {
		fmt.Fprintf(app.Stderr, "hunk: note: %s\n", out.Notice)
		out.Text = strings.TrimPrefix(out.Text, "note: "+out.Notice+"\n")
	}
	if err != nil {
		if re := result.As(err); re.PatchLine > 0 || len(re.Also) > 0 {
			src := opts.File
			if src == "" || src == "-" {
				src = "<stdin>"
			}
			re.SetSource(src)
			return re
		}
		return err
	}
	return app.renderChange(out) // --3way's conflicts, a failed check: an error too
}

// readPatch reads the patch text from file (a host path, not a workspace
// file: the patch is input, like git apply's) or from stdin.
func readPatch(app *App, file string) (string, error) {
	var b []byte
	var err error
	max := app.Cfg.Patch.MaxBytes
	tooLarge := func(where string) error {
		return result.Errorf(result.TooLarge, "the patch %s is over the limit of %d bytes", where, max).
			WithHint("raise the limit with --max-bytes (or apply-patch.max-bytes in the config)")
	}
	if file == "" || file == "-" {
		b, err = readUpTo(app.Stdin, max)
		if err != nil {
			return "", result.Wrap(result.IOError, err, "reading the patch from stdin")
		}
		if max > 0 && int64(len(b)) > max {
			return "", tooLarge("on stdin")
		}
		if len(b) == 0 {
			return "", result.Usagef("no patch on stdin").WithHint("pipe the patch in, or give the patch FILE")
		}
	} else {
		if looksLikePatchText(file) {
			return "", patchAsFile()
		}
		f, err := os.Open(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", result.Errorf(result.NotFound, "patch file %s: no such file", file)
			}
			return "", result.Wrap(result.IOError, err, "patch file "+file)
		}
		defer f.Close()
		// A patch file inside the workspace is a file of it: read only
		// where the policy lets it be, decided on the file opened.
		if ws, err := app.Workspace(); err != nil {
			return "", err
		} else if err := ws.CheckOpened(f, file); err != nil {
			return "", err
		}
		if b, err = readUpTo(f, max); err != nil {
			return "", result.Wrap(result.IOError, err, "patch file "+file)
		}
		if max > 0 && int64(len(b)) > max {
			return "", tooLarge("in " + file)
		}
	}
	// b is never written again: view it as a string instead of copying a
	// patch that may be megabytes long.
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// looksLikePatchText reports whether a FILE argument is really the patch
// text itself (hunk apply-patch "$(cat p)"), which the apply_patch link
// takes as its argument but hunk apply-patch does not.
func looksLikePatchText(arg string) bool {
	if strings.Contains(arg, "\n") {
		return true
	}
	for _, p := range []string{"*** Begin Patch", "--- ", "diff --git ", "+++ ", "@@ "} {
		if strings.HasPrefix(strings.TrimSpace(arg), p) {
			return true
		}
	}
	return false
}

// patchAsFile is the error for patch text given where a FILE is expected.
func patchAsFile() error {
	return result.Usagef("the patch text was given as the FILE argument").
		WithHint("pipe the patch on stdin: hunk apply-patch < patch.diff, or printf '%s' \"$PATCH\" | hunk apply-patch").
		WithHint("or use the Codex-compatible link, which takes the text as its argument: apply_patch \"$PATCH\"")
}

// readUpTo reads r to the end, or max+1 bytes when max > 0 (the caller
// refuses more than max), never holding more.
func readUpTo(r io.Reader, max int64) ([]byte, error) {
	if max > 0 {
		r = io.LimitReader(r, max+1)
	}
	// A regular file (a FILE argument, or stdin redirected from one) says
	// its size: one buffer of that size, read once — io.ReadAll's doubling
	// would clear and copy a 25 MB patch's bytes several times over.
	if f, ok := unwrapFile(r); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			n := fi.Size() + 1 // one more, to see a file that grew meanwhile
			if max > 0 && n > max+1 {
				n = max + 1
			}
			buf := make([]byte, 0, n)
			for int64(len(buf)) < n {
				k, err := r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+k]
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return buf, err
				}
				if len(buf) == cap(buf) {
					rest, err := io.ReadAll(r) // it grew: read on
					return append(buf, rest...), err
				}
			}
			return buf, nil
		}
	}
	return io.ReadAll(r)
}

// unwrapFile returns the *os.File under r (itself, or the one a LimitReader reads).
func unwrapFile(r io.Reader) (*os.File, bool) {
	if l, ok := r.(*io.LimitedReader); ok {
		r = l.R
	}
	f, ok := r.(*os.File)
	return f, ok
}

// tuneGC trades memory the process has to spare for time: a patch is
// applied by one short-lived process whose heap is the patch, its AST and
// the few files in flight, so the collector waits until the heap reaches
// 32 MiB, or what parsing holds at its end plus 24 MiB for the files in
// flight, instead of running every few MiB. Parsing holds the patch and
// about 12 bytes a line (where each line starts, 4 bytes; a unified diff's
// hunks keep no lines, only where they lie — a new file's neither — and
// the chunk lines of a file are made as it is applied). On the 37 MB diff
// of k8s.io/api v0.20.0 to v0.37.2 (4,309 files, 2,668 new): 74.5 MiB, 14
// collections, a peak RSS 1.07x git apply's. A GOGC or GOMEMLIMIT in the
// environment wins.
func tuneGC(text string) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := int64(32 << 20)
	if l := int64(len(text)) + 12*int64(strings.Count(text, "\n")) + 24<<20; l > limit {
		limit = l
	}
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(-1)
}

// codexApplyPatchMain is the binary run as `apply_patch` or `applypatch`:
// Codex's standalone executable — the patch as the one argument or on
// stdin, Codex's stdout, stderr and exit codes, --compat codex semantics —
// but confined to the current directory, all-or-nothing, and through the
// operations layer as `hunk apply-patch` is: the path policy, the history.
func codexApplyPatchMain(app *App, args []string) int {
	var text string
	switch {
	case len(args) > 1:
		fmt.Fprintln(app.Stderr, "Error: apply_patch accepts exactly one argument.")
		return 2
	case len(args) == 1:
		if !utf8.ValidString(args[0]) {
			fmt.Fprintln(app.Stderr, "Error: apply_patch requires a UTF-8 PATCH argument.")
			return 1
		}
		text = args[0]
	default:
		b, err := io.ReadAll(app.Stdin)
		if err != nil {
			fmt.Fprintf(app.Stderr, "Error: Failed to read PATCH from stdin.\n%v\n", err)
			return 1
		}
		if len(b) == 0 {
			fmt.Fprintln(app.Stderr, "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch")
			return 2
		}
		text = string(b)
	}
	tuneGC(text)
	// The configuration as every hunk command has it (HUNK_* variables,
	// the config file: the path policy, the history), with no flags: the
	// link takes none.
	cmd, _, err := newRootCmd(app, []string{"apply-patch"}).Find([]string{"apply-patch"})
	if err == nil {
		err = app.configure(cmd)
	}
	if err != nil {
		fmt.Fprintln(app.Stderr, result.As(err).Msg)
		return 2
	}
	// Codex's apply_patch works on the current directory, confined, and
	// prints no JSON.
	app.Cfg.Root, app.Cfg.WorkspaceOnly, app.Cfg.JSON = ".", true, false
	env, err := app.Env()
	if err != nil {
		fmt.Fprintf(app.Stderr, "Error: Failed to determine current directory.\n%v\n", result.As(err).Msg)
		return 1
	}
	out, err := ops.ApplyPatch(env, ops.ApplyPatchRequest{Patch: text, Compat: "codex", AbsolutePaths: true, As: "apply_patch"})
	if err != nil {
		fmt.Fprintln(app.Stderr, result.As(err).Msg)
		return 1
	}
	_, _ = io.WriteString(app.Stdout, out.Message+"\n")
	return 0
}
