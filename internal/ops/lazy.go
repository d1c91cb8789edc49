package ops

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/lazy"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
)

// lazyError is the refusal of a placeholder comment written where the new
// text leaves out lines of the old (LAZY_EDIT); where names the line.
func lazyError(path, where, text string) *result.Error {
	return result.Errorf(result.LazyEdit, "%s: %s is a placeholder (%q) standing for lines the change leaves out; nothing was written",
		path, where, strings.TrimSpace(text)).
		WithHint("write out the lines the placeholder stands for (a change holds only the lines it changes, with a few around them), or pass --allow-placeholders if the comment is meant to be in the file").
		At(path)
}

// patchPlaceholders refuses a patch whose chunk writes a placeholder in
// place of lines it removes.
func patchPlaceholders(env *Env, p *patchparse.Patch) error {
	if env.AllowPlaceholders {
		return nil
	}
	for _, f := range p.Files {
		for _, c := range f.Chunks {
			i := lazy.Find(f.Path, c.Old(), c.New())
			if i < 0 {
				continue
			}
			n := -1
			for _, l := range c.Lines {
				if l.Op == '-' {
					continue
				}
				if n++; n == i {
					return lazyError(f.Path, "an added line", l.Text).AtLine(l.Line)
				}
			}
		}
	}
	return nil
}

// textPlaceholders refuses new text (an edit's, or a file's whole content
// over an existing one) that holds a placeholder in place of lines of old.
func textPlaceholders(env *Env, path, what, old, new string) error {
	if env.AllowPlaceholders {
		return nil
	}
	nl := strings.Split(strings.ReplaceAll(new, "\r\n", "\n"), "\n")
	if i := lazy.Find(path, strings.Split(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), nl); i >= 0 {
		return lazyError(path, fmt.Sprintf("line %d of %s", i+1, what), nl[i])
	}
	return nil
}
