package verify

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hunk-dev/hunk/internal/cmdrule"
	"github.com/hunk-dev/hunk/internal/execrun"
	"github.com/hunk-dev/hunk/internal/glob"
	"github.com/hunk-dev/hunk/internal/ops"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Configured is a check the person configured (checks: in the config):
// the changed files it is for (a glob of workspace paths, ** across
// directories) and its command — argv, or a shell line in Sh. "{file}" in
// it stands for those files, each one argument: one run checks them all.
// A command without "{file}" runs once when any changed file matches.
type Configured struct {
	Glob string
	Argv []string
	Sh   string
}

// FileArg is what a configured check's command holds where the changed
// files go.
const FileArg = "{file}"

// For is the command of c for files (nil when none matches).
func (c Configured) For(changed []string) (argv []string, sh string, files []string) {
	for _, f := range changed {
		if glob.Minimatch(c.Glob, f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, "", nil
	}
	// A file's name is never code nor an option: a shell line gets the
	// files as its arguments ("$@"), never spliced into its text, and a
	// name that starts with "-" is given as ./-name.
	args := make([]string, len(files))
	for i, f := range files {
		args[i] = f
		if strings.HasPrefix(f, "-") {
			args[i] = "./" + f
		}
	}
	if c.Sh != "" {
		return append([]string{"/bin/sh", "-c", strings.ReplaceAll(c.Sh, FileArg, `"$@"`), "sh"}, args...), "", files
	}
	for _, a := range c.Argv {
		if a == FileArg {
			argv = append(argv, args...)
		} else {
			argv = append(argv, a)
		}
	}
	return argv, "", files
}

// line is the check as a person reads it, for files.
func (c Configured) line(files []string) string {
	if c.Sh != "" {
		return strings.ReplaceAll(c.Sh, FileArg, cmdrule.Quote(files))
	}
	argv, _, _ := c.For(files)
	return cmdrule.Quote(argv)
}

// changedFiles are the files the recorded operations left (not removed,
// not directories), as workspace names, in order, once each.
func changedFiles(env *ops.Env, recs []*workspace.Recording) []string {
	store, err := env.Workspace.History()
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range recs {
		if r.ID == "" {
			continue
		}
		e, err := store.Find(r.ID)
		if err != nil {
			continue
		}
		for _, f := range e.Files {
			if f.Post != nil && !f.Post.Dir && f.Post.Link == "" && !seen[f.Path] {
				seen[f.Path] = true
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// runConfigured runs the configured checks for the changed files, each
// once, in the sandbox under lim; each result with its findings.
func runConfigured(ctx context.Context, env *ops.Env, cs []Configured, changed []string, lim ops.ExecLimits, run execFunc) []*execrun.Check {
	var out []*execrun.Check
	for _, c := range cs {
		argv, sh, files := c.For(changed)
		if files == nil {
			continue
		}
		xo, xd, err := run(ctx, env, ops.ExecRequest{Argv: argv, Sh: sh, ExecLimits: lim})
		r := &execrun.Check{Command: c.line(files), Files: files, Run: xd, Kept: true}
		switch {
		case err != nil:
			r.ExitCode = -1
			r.Diagnostics = []execrun.Diagnostic{{Message: "the check could not run: " + err.Error()}}
		default:
			r.ExitCode = xo.ExitCode
			if xo.Failure != nil && r.ExitCode == 0 {
				r.ExitCode = -1
			}
			r.Diagnostics = diagnostics(xd.Stdout + "\n" + xd.Stderr)
		}
		out = append(out, r)
	}
	return out
}

// execFunc runs a check's command.
type execFunc func(context.Context, *ops.Env, ops.ExecRequest) (*ops.Output, *ops.ExecDetails, error)

var (
	fileLine = regexp.MustCompile(`^(?:\./)?([^\s:][^:]*):(\d+)(?::(\d+))?:\s*(.*)$`)
	pyLine   = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)`)
	// path(line,col): message — tsc's, MSBuild's.
	parenLine = regexp.MustCompile(`^(?:\./)?([^\s(][^(]*)\((\d+),(\d+)\):\s*(.*)$`)
)

// diagnostics are the findings in a check's output: "path:line[:col]:
// message" lines (compilers, linters, go vet), "path(line,col): message"
// (tsc), Python's traceback lines
// (File "path", line N, the message the last line of the traceback).
// At most 50.
func diagnostics(out string) []execrun.Diagnostic {
	var ds []execrun.Diagnostic
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if len(ds) == 50 {
			break
		}
		l = strings.TrimRight(l, "\r")
		if m := fileLine.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], " ") && !strings.HasPrefix(m[1], "/") {
			n, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			ds = append(ds, execrun.Diagnostic{File: m[1], Line: n, Column: c, Message: m[4]})
			continue
		}
		if m := parenLine.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], " ") && !strings.HasPrefix(m[1], "/") {
			n, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			ds = append(ds, execrun.Diagnostic{File: m[1], Line: n, Column: c, Message: m[4]})
			continue
		}
		if m := pyLine.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "<") && !strings.HasPrefix(m[1], "/") {
			// (A traceback's frames in Python itself, <string>, are not
			// the finding: the file checked is.)
			n, _ := strconv.Atoi(m[2])
			msg := ""
			for _, next := range lines[i+1:] {
				if t := strings.TrimSpace(next); t != "" && !strings.HasPrefix(next, " ") {
					msg = t
					break
				}
			}
			ds = append(ds, execrun.Diagnostic{File: m[1], Line: n, Message: msg})
		}
	}
	return ds
}

// checksText says what the configured checks found: a line a check, its
// findings (or its output's first lines where it gives none) under it.
func checksText(rs []*execrun.Check) string {
	var b strings.Builder
	for _, r := range rs {
		said := r.Run != nil && strings.TrimSpace(r.Run.Stdout+r.Run.Stderr) != ""
		if r.ExitCode == 0 && !said {
			fmt.Fprintf(&b, "check %s: ok\n", r.Command)
			continue
		}
		fmt.Fprintf(&b, "check %s: exit %d\n", r.Command, r.ExitCode)
		for _, d := range r.Diagnostics {
			switch {
			case d.File == "":
				fmt.Fprintf(&b, "  %s\n", d.Message)
			case d.Column > 0:
				fmt.Fprintf(&b, "  %s:%d:%d: %s\n", d.File, d.Line, d.Column, d.Message)
			default:
				fmt.Fprintf(&b, "  %s:%d: %s\n", d.File, d.Line, d.Message)
			}
		}
		if len(r.Diagnostics) == 0 && r.Run != nil {
			for i, l := range strings.Split(strings.TrimSpace(r.Run.Stdout+"\n"+r.Run.Stderr), "\n") {
				if i == 20 {
					b.WriteString("  …\n")
					break
				}
				if strings.TrimSpace(l) != "" {
					fmt.Fprintf(&b, "  %s\n", l)
				}
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// failed reports whether any configured check failed.
func failed(rs []*execrun.Check) *execrun.Check {
	for _, r := range rs {
		if r.ExitCode != 0 {
			return r
		}
	}
	return nil
}
