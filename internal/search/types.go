package search

import (
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/result"
)

// fileTypes are --type's names and their file name globs: a small table,
// each entry as ripgrep 13's (rg --type-list) has it.
var fileTypes = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"c":        {"*.[chH]", "*.[chH].in", "*.cats"},
		"cpp":      {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
		"css":      {"*.css", "*.scss"},
		"go":       {"*.go"},
		"html":     {"*.ejs", "*.htm", "*.html"},
		"java":     {"*.java", "*.jsp", "*.jspx", "*.properties"},
		"js":       {"*.js", "*.jsx", "*.vue"},
		"json":     {"*.json", "composer.lock"},
		"kotlin":   {"*.kt", "*.kts"},
		"markdown": {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
		"md":       {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
		"php":      {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
		"py":       {"*.py"},
		"ruby":     {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
		"rust":     {"*.rs"},
		"sh":       {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
		"swift":    {"*.swift"},
		"toml":     {"*.toml", "Cargo.lock"},
		"ts":       {"*.ts", "*.tsx"},
		"txt":      {"*.txt"},
		"yaml":     {"*.yaml", "*.yml"},
	}
})

// typeNames lists the table's names, for a refusal.
func typeNames() string {
	var names []string
	for n := range fileTypes() {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// typeFilter is --type and --type-not: a file passes when it has one of
// the wanted types (any, if none is wanted) and none of the unwanted.
type typeFilter struct {
	want, not []string // globs
}

func newTypeFilter(want, not []string) (typeFilter, error) {
	var f typeFilter
	for _, l := range []struct {
		names []string
		to    *[]string
	}{{want, &f.want}, {not, &f.not}} {
		for _, n := range l.names {
			g, ok := fileTypes()[n]
			if !ok {
				return f, result.Usagef("unknown file type %q (known: %s)", n, typeNames())
			}
			*l.to = append(*l.to, g...)
		}
	}
	return f, nil
}

func (f typeFilter) pass(name string) bool {
	base := path.Base(name)
	for _, g := range f.not {
		if segment(g, base) {
			return false
		}
	}
	if len(f.want) == 0 {
		return true
	}
	for _, g := range f.want {
		if segment(g, base) {
			return true
		}
	}
	return false
}
