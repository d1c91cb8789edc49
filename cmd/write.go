package cmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/result"
)

// WriteOptions are the parsed flags of `hunk write`.
type WriteOptions struct {
	Path       string
	Content    *string // --content (nil when not given)
	From       string  // --from FILE ("-" for stdin)
	CreateOnly bool
	IfMatch    string
	Diff       bool
	DryRun     bool
	AllowEmpty bool        // empty stdin may empty the file
	Verify     verifyFlags // --verify: the change's check
}

// newWriteCmd builds the command; runF is its action (nil: writeRun; tests pass
// one that records the parsed options).
func newWriteCmd(app *App, runF func(*App, *WriteOptions) error) *cobra.Command {
	if runF == nil {
		runF = writeRun
	}
	opts := &WriteOptions{}
	var content string
	c := &cobra.Command{
		Use:   "write PATH [--content TEXT | --from FILE]",
		Short: "Create or replace a file atomically",
		Long: `Write creates or replaces PATH with the content of --content, --from FILE
(a file inside the workspace, or - for stdin) or stdin. Parent directories are
created; the file is replaced atomically and keeps its mode; a symlink inside
the workspace is followed. Identical content is a no-op.`,
		Example: `  hunk write src/main.go --content 'package main'
  printf 'hello\n' | hunk write notes/hello.txt --create-only
  hunk write src/main.go --if-match "$SHA256" < new-main.go`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if cmd.Flags().Changed("content") {
				opts.Content = &content
			}
			return runF(app, opts)
		},
	}
	f := c.Flags()
	addPlaceholderFlag(f)
	f.StringVar(&content, "content", "", "the new content")
	f.StringVar(&opts.From, "from", "", "read the content from FILE (inside the workspace; - for stdin)")
	f.BoolVar(&opts.AllowEmpty, "allow-empty", false, "accept empty content on stdin (otherwise refused: a closed stdin must not empty a file)")
	f.BoolVar(&opts.CreateOnly, "create-only", false, "refuse to replace an existing file (ALREADY_EXISTS)")
	f.StringVar(&opts.IfMatch, "if-match", "", "refuse unless the file's current sha256 is this (STALE)")
	f.Int64("max-bytes", 0, "refuse content larger than this many bytes (default 64 MiB)")
	f.BoolVar(&opts.Diff, "diff", false, "print a unified diff of the change")
	f.BoolVar(&opts.DryRun, "dry-run", false, "check everything, write nothing")
	opts.Verify.add(f)
	configKey(f, "max-bytes", "write.max-bytes")
	return c
}

func writeRun(app *App, opts *WriteOptions) error {
	if opts.Content != nil && opts.From != "" {
		return result.Usagef("--content and --from are exclusive; give one")
	}
	ws, err := app.Workspace()
	if err != nil {
		return err
	}
	var data []byte
	switch {
	case opts.Content != nil:
		data = []byte(*opts.Content)
	case opts.From != "" && opts.From != "-":
		name, err := ws.Resolve(opts.From)
		if err != nil {
			return err
		}
		if data, err = ws.ReadFile(name); err != nil {
			return err
		}
	default:
		// Content from stdin only when it is meant: never from a terminal
		// nobody types into, and empty only when asked (--from -,
		// --allow-empty), so that a closed or empty stdin (</dev/null, a
		// harness that forgot to pipe) never empties a file.
		implied := opts.From == ""
		if f, ok := app.Stdin.(*os.File); implied && ok && term.IsTerminal(int(f.Fd())) {
			return result.Usagef("no content for %s: stdin is a terminal", opts.Path).
				WithHint("pipe the content in, or give --content TEXT or --from FILE (--from - reads the terminal)")
		}
		if data, err = readLimited(app.Stdin, app.Cfg.Write.MaxBytes); err != nil {
			return err
		}
		if len(data) == 0 && implied && !opts.AllowEmpty {
			return result.Usagef("no content for %s: stdin is empty", opts.Path).
				WithHint("to write an empty file, give --allow-empty (or --content '')")
		}
	}
	env, err := app.Env()
	if err != nil {
		return err
	}
	req := ops.WriteRequest{Path: opts.Path, Content: string(data), CreateOnly: opts.CreateOnly, IfMatch: opts.IfMatch, Diff: opts.Diff, DryRun: opts.DryRun}
	out, err := opts.Verify.change(app, env, opts.DryRun, func(e *ops.Env) (*ops.Output, error) { return ops.Write(e, req) })
	if err != nil {
		return err
	}
	return app.renderChange(out)
}

// readLimited reads r to the end, refusing more than max bytes (0: no limit)
// without holding more than max+1 of them.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := readUpTo(r, max)
	if err != nil {
		return nil, result.Wrap(result.IOError, err, "reading stdin")
	}
	if max > 0 && int64(len(b)) > max {
		return nil, result.Errorf(result.TooLarge, "content on stdin is over the limit of %d bytes", max).
			WithHint("raise the limit with --max-bytes (or write.max-bytes in the config)")
	}
	return b, nil
}
