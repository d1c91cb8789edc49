package cmdrule

import (
	"strings"
	"testing"
)

// FuzzLine: any shell line is decided without a panic, the same way twice,
// and a line that parses whole, followed by "git push" on a line of its
// own, is never allowed under a rule that denies git push.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"git push", "sh -c 'git push'", "echo $(x) | y && z; w &", "f() { g; }", "env -i A=1 timeout 5 nice git -C . push",
		"cat <<EOF\n$(date)\nEOF", "for i in 1 2; do echo $i; done", "[[ -f x ]] && echo y", "a=`b` c", "xargs -I{} sh -c '{}'", "trap - EXIT"} {
		f.Add(s)
	}
	rs := &Rules{List: []Rule{{Decision: Deny, Prefix: []string{"git", "push"}, Source: "fuzz"}}}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 4096 {
			return
		}
		a, b := rs.Line(line), rs.Line(line)
		if a.Decision != b.Decision || a.Command != b.Command {
			t.Fatalf("%q decided %+v, then %+v", line, a, b)
		}
		if _, err := Commands(line); err != nil || strings.Contains(line, "<<") || strings.HasSuffix(line, `\`) {
			return
		}
		if v := rs.Line(line + "\ngit push\n"); v.Decision == Allow {
			t.Fatalf("%q then git push: allowed", line)
		}
	})
}
