package cmd

import (
	"github.com/spf13/cobra"

	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/read"
	"github.com/hunk-dev/hunk/internal/result"
)

// ReadOptions is what `hunk read` was asked to do.
type ReadOptions struct {
	Path string
	// ExecOutput is a stored exec output to read instead of a file.
	ExecOutput string
	read.Options
}

// newReadCmdWith builds the command with runF as its action, so tests can
// check the parsed options without reading anything.
func newReadCmd(app *App, runF func(*App, *ReadOptions) error) *cobra.Command {
	if runF == nil {
		runF = readRun
	}
	opts := &ReadOptions{}
	cmd := &cobra.Command{
		Use:   "read PATH | --exec-output ID/STREAM",
		Short: "Print a page of a text file, list a directory, or show an image",
		Long: `Print a page of a text file: lines from --offset (1-based), at most --limit
lines and --max-bytes bytes per page, with a closing notice that says how to
continue. A line longer than a page is cut; continue inside it with the
--offset and --column the notice gives (--column counts bytes). Line endings
(LF, CRLF, CR) are shown as lines and a BOM is not shown.

A directory lists its entries (directories end in "/"), paged by --offset and
--limit. An image (PNG, JPEG, GIF, WebP) is described; with --json it comes
back as an image block, scaled to at most 2000 px a side. Other binary files
are refused. A missing path suggests near names.

--exec-output ID/stdout (or ID/stderr) pages through the whole output of an
exec whose --json result left part of it out, as that result names it.`,
		Example: `  hunk read src/main.go
  hunk read -n --offset 120 --limit 40 src/main.go
  hunk read --offset 15 --column 51201 data/minified.js
  hunk --json read screenshot.png`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.ExecOutput != "" {
				if len(args) > 0 {
					return result.Usagef("give a PATH or --exec-output, not both")
				}
				return nil
			}
			return exactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Path = args[0]
			}
			for _, name := range []string{"limit", "max-bytes"} {
				if cmd.Flags().Changed(name) && mustFlag(cmd, name) == "0" {
					return result.Usagef("--%s must be 1 or more, not 0", name)
				}
			}
			if !cmd.Flags().Changed("limit") {
				opts.Limit = app.Cfg.Read.Limit
			}
			if !cmd.Flags().Changed("max-bytes") {
				opts.MaxBytes = app.Cfg.Read.MaxBytes
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return runF(app, opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Offset, "offset", 1, "first line to show (1-based); for a directory, the first entry")
	f.IntVar(&opts.Limit, "limit", read.DefaultLimit, "most lines (or entries) per page")
	f.IntVar(&opts.MaxBytes, "max-bytes", read.DefaultMaxBytes, "most bytes per page; a longer line is cut")
	f.Int64Var(&opts.Column, "column", 1, "byte position inside the --offset line to start at (continues a cut line)")
	f.BoolVarP(&opts.LineNumbers, "line-numbers", "n", false, "prefix each line with its number and a tab")
	f.StringVar(&opts.ExecOutput, "exec-output", "", "read the kept output of an exec run instead of a file: ID/stdout or ID/stderr, as its result names it")
	configKey(f, "limit", "read.limit")
	configKey(f, "max-bytes", "read.max-bytes")
	return cmd
}

func readRun(app *App, opts *ReadOptions) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	o := opts.Options
	out, err := ops.Read(env, ops.ReadRequest{Path: opts.Path, ExecOutput: opts.ExecOutput, Offset: o.Offset, Limit: o.Limit,
		MaxBytes: o.MaxBytes, Column: o.Column, LineNumbers: o.LineNumbers})
	if err != nil {
		return err
	}
	return app.Render(out)
}
