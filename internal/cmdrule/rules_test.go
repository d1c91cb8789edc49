package cmdrule

import (
	"strings"
	"testing"
)

func mustRule(t *testing.T, d Decision, prefix string) Rule {
	t.Helper()
	r, err := ParseRule(d, prefix, "test")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGitPushSpellings: forty ways a model could spell git push past a
// rule that denies it — wrappers, shells, paths, quoting, git's global
// options, substitutions, aliases, here-documents, lists and pipes — each
// decided deny, or ask where the line cannot be pinned down before it
// runs; never allow. And the lines that only look like it are allowed.
func TestGitPushSpellings(t *testing.T) {
	rs := &Rules{List: []Rule{mustRule(t, Deny, "git push"), mustRule(t, Allow, "git status")}}
	for _, c := range []struct {
		line string
		want Decision
	}{
		{"git push", Deny},
		{"git push origin main", Deny},
		{"git push --force", Deny},
		{"/usr/bin/git push", Deny},
		{"./git push", Deny},
		{`\git push`, Deny},
		{`"git" push`, Deny},
		{`'git' 'push'`, Deny},
		{`g""it pu''sh`, Deny},
		{"git -C . push", Deny},
		{"git -c user.name=x push", Deny},
		{"git --no-pager push", Deny},
		{"git --git-dir .git --work-tree . push", Deny},
		{"env git push", Deny},
		{"env -i PATH=/usr/bin git push", Deny},
		{"command git push", Deny},
		{"exec git push", Deny},
		{"nice -n 5 git push", Deny},
		{"nohup git push &", Deny},
		{"timeout -s KILL 30 git push", Deny},
		{"sudo -u root git push", Deny},
		{"xargs -n 1 git push < remotes", Deny},
		{"echo origin | xargs git push", Deny},
		{"find . -maxdepth 0 -exec git push \\;", Deny},
		{"true && git push", Deny},
		{"false || git push", Deny},
		{"cd sub; git push", Deny},
		{"git status | git push", Deny},
		{"echo $(git push)", Deny},
		{"echo `git push`", Deny},
		{"x=$(git push)", Deny},
		{"f() { git push; }; f", Deny},
		{"if true; then git push; fi", Deny},
		{"for r in a b; do git push $r; done", Deny},
		{"(git push)", Deny},
		{"sh -c 'git push'", Deny},
		{`bash -lc "git push origin"`, Deny},
		{`sh -c "sh -c 'git push'"`, Deny},
		{"sh <<'EOF'\ngit push\nEOF", Deny},
		{"bash <<< 'git push'", Deny},
		{"trap 'git push' EXIT", Deny},
		{"flock /tmp/l -c 'git push'", Deny},
		{"watch -n 1 git push", Deny},
		{"busybox sh -c 'git push'", Deny},
		{"G=git; $G push", Ask},
		{"$(echo git) push", Ask},
		{"git $SUB", Ask},
		{"eval git push", Ask},
		{"eval \"$CMD\"", Ask},
		{"sh -c \"$CMD\"", Ask},
		{"echo 'git push' | sh", Ask},
		{"bash < script.sh", Ask},
		{"alias g=git; g push", Ask},
		{"git -c alias.p=push p", Ask},
		{"gi? push", Ask},
		{"env -S 'git push'", Ask},
		{"git config --global alias.p push; git p", Ask},
		{"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p", Ask},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p", Ask},
		{"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p", Ask},
		// Lines that only look like it.
		{"git status", Allow},
		{"git pull", Allow},
		{"echo git push", Allow},
		{"git log --grep push", Allow},
		{"gitk push", Allow},
		{"cat git-push.txt", Allow},
		{"command -v git", Allow},
		{"sh ./deploy.sh", Allow},
	} {
		if v := rs.Line(c.line); v.Decision != c.want {
			t.Errorf("%q: %s (%+v), want %s", c.line, v.Decision, v, c.want)
		}
	}
}

// TestArgv: a command run without a shell is decided by its words; sh -c
// in it is parsed in turn.
func TestArgv(t *testing.T) {
	rs := &Rules{List: []Rule{mustRule(t, Deny, "git push"), mustRule(t, Ask, "npm publish")}, Default: Allow}
	for _, c := range []struct {
		argv []string
		want Decision
	}{
		{[]string{"git", "push"}, Deny},
		{[]string{"sh", "-c", "git push"}, Deny},
		{[]string{"git", "push; echo"}, Allow}, // one argument, no shell
		{[]string{"npm", "publish"}, Ask},
		{[]string{"npm", "--silent", "publish"}, Ask},
		{[]string{"npm", "test"}, Allow},
		{[]string{"zsh", "-c", "npm publish && git push"}, Deny},
	} {
		if v := rs.Argv(c.argv); v.Decision != c.want {
			t.Errorf("%q: %s (%+v), want %s", c.argv, v.Decision, v, c.want)
		}
	}
}

// TestPrecedence: deny over ask over allow, whatever their order; the
// default decides what no rule names; the verdict names the rule.
func TestPrecedence(t *testing.T) {
	rs := &Rules{List: []Rule{mustRule(t, Allow, "git"), mustRule(t, Ask, "git push"), mustRule(t, Deny, "git push --force")}, Default: Deny}
	for line, want := range map[string]Decision{
		"git status":             Allow,
		"git push":               Ask,
		"git push --force x":     Deny,
		"make":                   Deny,
		"git status; make":       Deny,
		"git status && git push": Ask,
	} {
		v := rs.Line(line)
		if v.Decision != want {
			t.Errorf("%q: %s, want %s", line, v.Decision, want)
		}
		if line == "git push" && (v.Rule == nil || !strings.Contains(v.Rule.String(), `ask "git push" (test)`)) {
			t.Errorf("%q: decided by %v", line, v.Rule)
		}

	}
}

// TestAllowedByItsRule: a line whose commands pass is said to pass by the
// rule that allows one of them, not by the default (the audit trail and
// hunk policy check --exec name it).
func TestAllowedByItsRule(t *testing.T) {
	rs := &Rules{List: []Rule{mustRule(t, Allow, "git"), mustRule(t, Deny, "rm -rf")}}
	v := rs.Line("cd x && git status")
	if v.Decision != Allow || v.Rule == nil || v.Rule.String() != `allow "git" (test)` {
		t.Errorf("allowed by %+v, not by its rule", v)
	}
}

// TestCheck: a rule's examples are checked when the rules are made.
func TestCheck(t *testing.T) {
	r := mustRule(t, Deny, "git push")
	r.Match, r.NotMatch = []string{"git push origin", "env git push"}, []string{"git pull"}
	if err := (&Rules{List: []Rule{r}}).Check(); err != nil {
		t.Error(err)
	}
	r.NotMatch = []string{"git push --tags"}
	if err := (&Rules{List: []Rule{r}}).Check(); err == nil || !strings.Contains(err.Error(), `"git push --tags" (not_match)`) {
		t.Errorf("a not_match the rule decides: %v", err)
	}
	if _, err := ParseRule(Deny, "git $X", "test"); err == nil {
		t.Error("a rule with a variable was taken")
	}
}

// BenchmarkLine: a typical tool call's shell line decided against 50
// rules (go test -bench Line ./internal/cmdrule), and against none.
func BenchmarkLine(b *testing.B) {
	line := "cd web && npm ci --silent && env CI=1 timeout 600 npm test -- --watch=false | tee out.log"
	for _, n := range []int{0, 50} {
		rs := &Rules{}
		for i := range n {
			r, _ := ParseRule(Deny, "tool"+string(rune('a'+i%26))+" sub"+string(rune('a'+i/26)), "bench")
			rs.List = append(rs.List, r)
		}
		b.Run(map[int]string{0: "none", 50: "50rules"}[n], func(b *testing.B) {
			for b.Loop() {
				if rs.Empty() {
					continue
				}
				if v := rs.Line(line); v.Decision != Allow {
					b.Fatal(v)
				}
			}
		})
	}
}

// TestDeepLine: a line nested past what the parser takes (200,000
// subshells overflowed its stack and crashed hunk) or too long is asked
// about, not parsed; a normal depth is decided.
func TestDeepLine(t *testing.T) {
	rs := &Rules{List: []Rule{mustRule(t, Deny, "git push")}}
	for _, line := range []string{
		strings.Repeat("(", 200000) + "git push" + strings.Repeat(")", 200000),
		strings.Repeat("$(", 200000) + "true" + strings.Repeat(")", 200000),
		"echo " + strings.Repeat("x", 2<<20),
	} {
		if v := rs.Line(line); v.Decision != Ask || !strings.Contains(v.Reason, "too long or nested too deep") {
			t.Errorf("%.20q…: %s (%s)", line, v.Decision, v.Reason)
		}
	}
	if v := rs.Line(strings.Repeat("( ", 50) + "git push" + strings.Repeat(" )", 50)); v.Decision != Deny {
		t.Errorf("50 subshells deep: %s, want deny", v.Decision)
	}
}
