package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A repository the command creates at the workspace root is not covered by
// the git guard (there was no .git to keep read-only), yet git would run its
// hooks and some of its settings outside the sandbox the next time anyone
// runs git there — also when the workspace lies inside another repository,
// whose git commands in the workspace then use the new one. So hunk looks at
// a .git that appeared during a run and reports (never removes: it is the
// command's work) what in it would run code. A .git made deeper in the
// workspace is not looked at: that would mean walking the whole tree after
// every run.

// riskyGitKey reports whether git runs the value of config key k (lower
// case, section.sub.name) as a program, or reads more config from it. (No
// regular expression: compiling one at start-up would cost every hunk run
// half a millisecond.)
func riskyGitKey(k string) bool {
	switch k {
	case "core.fsmonitor", "core.hookspath", "core.pager", "core.editor", "core.sshcommand", "core.askpass",
		"core.gitproxy", "sequence.editor", "gpg.program", "uploadpack.packobjectshook", "include.path":
		return true
	}
	section, rest, _ := strings.Cut(k, ".")
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	switch section {
	case "alias", "pager":
		return true
	case "credential":
		return name == "helper"
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "gpg":
		return name == "program"
	case "includeif":
		return name == "path"
	}
	return false
}

// NewRepoRisks returns what would run code in the repository at gitDir (a
// .git the command created): hooks that are not git's own samples, settings
// that name programs, and a .git file that points elsewhere. Nil when there
// is nothing.
func NewRepoRisks(gitDir string) []string {
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, _ := os.Readlink(gitDir)
		return []string{".git is a symbolic link to " + t}
	}
	if !fi.IsDir() {
		b, _ := readSmall(gitDir)
		return []string{".git is a file pointing to another repository (" + strings.TrimSpace(string(b)) + ")"}
	}
	var out []string
	if ents, err := os.ReadDir(filepath.Join(gitDir, "hooks")); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".sample") {
				out = append(out, "hook .git/hooks/"+e.Name())
			}
		}
	}
	b, why := readSmall(filepath.Join(gitDir, "config"))
	if why != "" {
		out = append(out, ".git/config is "+why+" (not examined)")
	}
	for _, k := range configKeys(b) {
		if riskyGitKey(k) {
			out = append(out, "setting "+k+" in .git/config")
		}
	}
	return out
}

// maxGitConfig is the most of a .git/config hunk reads; a larger one is
// reported as a risk itself (a setting could hide past any limit).
const maxGitConfig = 1 << 20

// readSmall reads a file the command wrote, as hunk may outside the
// sandbox: only a regular file of at most maxGitConfig bytes, opened without
// following a link or waiting on a FIFO. When the file exists but is not
// read, why says what it is instead; a missing file is neither.
func readSmall(p string) (b []byte, why string) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) {
		return nil, ""
	}
	if err != nil {
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, "a symbolic link"
		}
		return nil, "unreadable"
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, "unreadable"
	case !fi.Mode().IsRegular():
		return nil, "not a regular file"
	case fi.Size() > maxGitConfig:
		return nil, "larger than 1 MiB"
	}
	b, _ = io.ReadAll(io.LimitReader(f, maxGitConfig))
	return b, ""
}

// configKeys lists the keys (section.sub.name) set in a git config file.
func configKeys(b []byte) []string {
	var out []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			end := strings.IndexByte(l, ']')
			if end < 0 {
				continue
			}
			h := l[1:end]
			if name, sub, ok := strings.Cut(h, " "); ok {
				h = name + "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			section = strings.ToLower(h)
			if rest := strings.TrimSpace(l[end+1:]); rest != "" {
				l = rest // "[core] fsmonitor = x" on one line
			} else {
				continue
			}
		}
		k, _, _ := strings.Cut(l, "=")
		out = append(out, section+"."+strings.ToLower(strings.TrimSpace(k)))
	}
	return out
}
