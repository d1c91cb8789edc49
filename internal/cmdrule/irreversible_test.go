package cmdrule

import "testing"

// TestIrreversibleAsks: hunk's own asks name what publishes, however it is
// spelled where the parser can see it, and yield to every rule of the
// person's: an allow lets it run, a deny or the default refuses it. They
// are a net, not a boundary: what is known only at run time passes.
func TestIrreversibleAsks(t *testing.T) {
	own := (&Rules{}).WithIrreversible()
	for _, c := range []struct {
		line string
		want Decision
	}{
		{"git push", Ask},
		{"git push origin main --force", Ask},
		{"/usr/bin/git -C . push", Ask},
		{"env GIT_TRACE=1 git push", Ask},
		{"sh -c 'make && git push'", Ask},
		{"command git --no-pager push", Ask},
		{"echo $(git push)", Ask},
		{"npm publish --access public", Ask},
		{"npm --silent publish", Ask},
		{"cargo publish", Ask},
		{"twine upload dist/*", Ask},
		{"docker push example/image:1", Ask},
		{"gh release create v1", Ask},
		{"yarn npm publish", Ask},
		{"git status", Allow},
		{"git pull", Allow},
		{"npm test", Allow},
		{"echo git push", Allow},
		{"cargo build", Allow},
		{"eval \"$X\"", Allow},                // known only at run time: no boundary
		{"this line ( does not parse", Allow}, // the shell's to refuse
	} {
		if v := own.Line(c.line); v.Decision != c.want {
			t.Errorf("%q: %s (%+v), want %s", c.line, v.Decision, v.Rule, c.want)
		} else if c.want == Ask && !v.Rule.IsIrreversible() {
			t.Errorf("%q: asked by %v, not hunk's own rule", c.line, v.Rule)
		}
	}

	allowed := (&Rules{List: []Rule{mustRule(t, Allow, "git push")}}).WithIrreversible()
	if v := allowed.Line("git push origin"); v.Decision != Allow {
		t.Errorf("an allow rule for git push: %s, want allow", v.Decision)
	}
	if v := allowed.Line("npm publish"); v.Decision != Ask {
		t.Errorf("npm publish beside an allow rule for git push: %s, want ask", v.Decision)
	}
	denied := (&Rules{List: []Rule{mustRule(t, Deny, "git")}}).WithIrreversible()
	if v := denied.Line("git push"); v.Decision != Deny || v.Rule.IsIrreversible() {
		t.Errorf("a deny rule for git: %s by %v, want the person's deny", v.Decision, v.Rule)
	}
	strict := (&Rules{Default: Deny}).WithIrreversible()
	if v := strict.Line("git push"); v.Decision != Deny {
		t.Errorf("exec.default deny: %s, want deny", v.Decision)
	}
	ruled := (&Rules{List: []Rule{mustRule(t, Allow, "make")}}).WithIrreversible()
	if v := ruled.Line("eval \"$X\""); v.Decision != Ask {
		t.Errorf("under the person's rules, eval: %s, want ask", v.Decision)
	}
}
