package apply

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// StatText describes what p changes, without applying it: git apply
// --numstat ("ADDED<TAB>REMOVED<TAB>PATH") or --stat (" PATH | N ++--" and a
// total).
func StatText(p *patchparse.Patch, numstat bool) string {
	stats := p.Stat()
	name := func(s patchparse.FileStat) string {
		if s.MoveTo != "" {
			return workspace.Quote(s.Path) + " => " + workspace.Quote(s.MoveTo)
		}
		return workspace.Quote(s.Path)
	}
	var b strings.Builder
	if numstat {
		for _, s := range stats {
			fmt.Fprintf(&b, "%d\t%d\t%s\n", s.Added, s.Removed, name(s))
		}
	} else {
		width, most, adds, dels := 0, 0, 0, 0
		for _, s := range stats {
			width = max(width, len(name(s)))
			most = max(most, s.Added+s.Removed)
			adds, dels = adds+s.Added, dels+s.Removed
		}
		for _, s := range stats {
			n := s.Added + s.Removed
			plus, minus := s.Added, s.Removed
			if most > 50 { // scaled to 50 columns, as git does, never to nothing
				plus, minus = (s.Added*50+most-1)/most, (s.Removed*50+most-1)/most
			}
			fmt.Fprintf(&b, " %-*s | %d %s%s\n", width, name(s), n, strings.Repeat("+", plus), strings.Repeat("-", minus))
		}
		fmt.Fprintf(&b, " %d file%s changed, %d insertion%s(+), %d deletion%s(-)\n",
			len(stats), plural(len(stats)), adds, plural(adds), dels, plural(dels))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
