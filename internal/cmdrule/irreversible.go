package cmdrule

import "strings"

// irreversibleSource names hunk's own asks in a refusal and the audit trail.
const irreversibleSource = "hunk's own: it cannot be taken back"

// Irreversible are hunk's own ask rules, in force where a command can reach
// a network: commands that publish what others then fetch, which no undo
// takes back. They decide only what none of the person's rules names — an
// allow rule for one (--allow-cmd 'git push') lets it run unasked — and
// never stand against the person's default (exec.default ask or deny).
var Irreversible = irreversible(
	"git push", "git send-email",
	"npm publish", "pnpm publish", "yarn publish", "yarn npm publish", "bun publish",
	"cargo publish", "twine upload", "uv publish", "poetry publish", "flit publish", "hatch publish",
	"gem push", "docker push", "podman push", "buildah push", "helm push",
	"gh release create", "gh pr merge", "glab release create", "dotnet nuget push", "nuget push",
	"mvn deploy", "gradle publish", "gradlew publish", "goreleaser release",
)

func irreversible(prefixes ...string) []Rule {
	out := make([]Rule, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, Rule{Decision: Ask, Prefix: strings.Fields(p), Source: irreversibleSource,
			Why: "it publishes what others then fetch, which hunk cannot undo; a person says yes first (or allows it: --allow-cmd '" + p + "')"})
	}
	return out
}

// WithIrreversible is rs with hunk's own asks (Irreversible) beneath the
// person's rules; rs itself is not changed.
func (rs *Rules) WithIrreversible() *Rules {
	out := &Rules{}
	if rs != nil {
		*out = *rs
	}
	out.Fallback = Irreversible
	return out
}

// IsIrreversible says r is one of hunk's own asks.
func (r *Rule) IsIrreversible() bool { return r != nil && r.Source == irreversibleSource }
