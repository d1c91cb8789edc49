package apply

import (
	"bytes"
	"strings"

	"github.com/hunk-dev/hunk/internal/glob"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// A git work tree writes a new text file with CRLF endings where
// core.autocrlf is true or the path's eol attribute is crlf (git's
// convert_to_working_tree), though the diff's lines are LF: git apply
// writes what a checkout would. hunk reads the two places that say so
// through the door: .git/config's [core] autocrlf, and the work tree's
// root .gitattributes (its last line matching the path: eol=crlf, eol=lf,
// -text and binary; nested .gitattributes and info/attributes are not
// read). Only a unified diff's new text files are written so: a file that
// exists keeps its own endings, as always.

// crlfNew is, for a unified diff applied to fsys, whether a new file at a
// path gets CRLF endings (nil: none does).
func crlfNew(fsys workspace.FS) func(path string) bool {
	autocrlf := false
	if b, err := fsys.ReadFile(".git/config"); err == nil && len(b) < 1<<20 {
		autocrlf = gitConfigTrue(b, "core", "autocrlf")
	}
	var rules [][2]string // pattern, attributes
	if b, err := fsys.ReadFile(".gitattributes"); err == nil && len(b) < 1<<20 {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
				rules = append(rules, [2]string{f[0], strings.Join(f[1:], " ")})
			}
		}
	}
	if !autocrlf && len(rules) == 0 {
		return nil
	}
	return func(path string) bool {
		crlf := autocrlf
		for _, r := range rules {
			pat := r[0]
			if !strings.Contains(pat, "/") {
				pat = "**/" + pat // a name matches at any depth, as gitignore's
			}
			if !glob.Minimatch(strings.TrimPrefix(pat, "/"), path) {
				continue
			}
			for _, a := range strings.Fields(r[1]) {
				switch a {
				case "eol=crlf":
					crlf = true
				case "eol=lf", "-text", "binary":
					crlf = false
				}
			}
		}
		return crlf
	}
}

// gitConfigTrue reports whether a git config text sets section.key true
// (its last setting; keys and section names are case-insensitive).
func gitConfigTrue(b []byte, section, key string) bool {
	in, val := false, false
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "["):
			in = strings.EqualFold(strings.Trim(strings.Fields(strings.Trim(l, "[]"))[0], "\""), section)
		case in:
			k, v, ok := strings.Cut(l, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), key) {
				switch strings.ToLower(strings.TrimSpace(v)) {
				case "true", "yes", "on", "1":
					val = true
				default:
					val = false
				}
			}
		}
	}
	return val
}

// toCRLF gives LF-ended text CRLF endings (a line already ending in CRLF
// kept); binary content and content with a lone CR are left as they are.
func toCRLF(b []byte) []byte {
	if bytes.IndexByte(b, 0) >= 0 || !bytes.Contains(b, []byte("\n")) {
		return b
	}
	out := make([]byte, 0, len(b)+bytes.Count(b, []byte("\n")))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}
