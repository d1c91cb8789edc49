package apply

import (
	"path"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// existingName picks the file a plain unified diff patches from its two
// names, by GNU patch's rule: the one that exists; when both do, the one
// with the fewest path components, then the shortest base name, then the
// shortest name. When neither exists, the new name (the error names it).
func existingName(fsys workspace.FS, newName, oldName string) string {
	ne, oe := nameExists(fsys, newName), nameExists(fsys, oldName)
	switch {
	case ne && !oe:
		return newName
	case oe && !ne:
		return oldName
	case !ne && !oe:
		return newName
	}
	parts := func(p string) int { return strings.Count(p, "/") }
	switch {
	case parts(oldName) != parts(newName):
		if parts(oldName) < parts(newName) {
			return oldName
		}
		return newName
	case len(path.Base(oldName)) != len(path.Base(newName)):
		if len(path.Base(oldName)) < len(path.Base(newName)) {
			return oldName
		}
		return newName
	case len(oldName) < len(newName):
		return oldName
	}
	return newName
}

// beyondLinks refuses a patch that makes a path a symbolic link and also
// changes a path under it, as git apply refuses it ("beyond a symbolic
// link"): the second change would be written through the new link.
func beyondLinks(ops []*op, opt Options) error {
	links := map[string]bool{}
	for _, o := range ops {
		if o.src.Link && o.src.Kind != patchparse.Delete {
			links[o.name] = true
			if o.moveTo != "" {
				links[o.moveTo] = true
			}
		}
	}
	if len(links) == 0 {
		return nil
	}
	for _, o := range ops {
		for _, n := range []string{o.name, o.moveTo, o.copyOf} {
			for d := path.Dir(n); n != "" && d != "." && d != "/"; d = path.Dir(d) {
				if links[d] {
					return result.Errorf(result.InvalidPatch, "%s: is beyond a symbolic link (%s) the patch makes", opt.display(n), opt.display(d)).
						WithHint("git apply refuses it too: change the file where the link points, in a patch of its own").At(n)
				}
			}
		}
	}
	return nil
}

// gitPrefixed returns name without a leading "a/" or "b/" when name does not
// exist and the rest does.
func gitPrefixed(fsys workspace.FS, name string) (string, bool) {
	if !strings.HasPrefix(name, "a/") && !strings.HasPrefix(name, "b/") {
		return "", false
	}
	if bare := name[2:]; !nameExists(fsys, name) && nameExists(fsys, bare) {
		return bare, true
	}
	return "", false
}

// nameExists reports whether the patch's name p names something in the
// workspace (a link itself counts).
func nameExists(fsys workspace.FS, p string) bool {
	n, err := fsys.Resolve(p)
	if err != nil {
		return false
	}
	_, err = fsys.Lstat(n)
	return err == nil
}
