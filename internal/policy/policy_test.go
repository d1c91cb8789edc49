package policy

import (
	"path"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/glob"
)

func mustNew(t *testing.T, fold bool, rules ...Rule) *Policy {
	t.Helper()
	p, err := New(rules, fold)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatch: gitignore-style patterns — bare names at any depth, anchored
// paths, ** across segments, a directory's rule covering what is under it.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{".env", ".env", true},
		{".env", "sub/deep/.env", true},
		{".env", ".env.example", false},
		{".env*", ".env.local", true},
		{"/.env", "sub/.env", false},
		{"/.env", ".env", true},
		{"secrets/", "secrets/key.pem", true},
		{"secrets/", "a/secrets/key.pem", true},
		{"secrets", "a/secrets", true},
		{".github/workflows", ".github/workflows/ci.yml", true},
		{".github/workflows", "x/.github/workflows/ci.yml", false}, // a / in the middle anchors
		{"**/.github/workflows", "x/.github/workflows/ci.yml", true},
		{"**/dir/*", "a/b/dir/f", true},
		{"**/dir/*", "dir/f", true},
		{"**/dir/*", "a/dir", false}, // the directory itself is not matched, only what is in it, as gitignore
		{"src/**/*.go", "src/a/b/c.go", true},
		{"src/**/*.go", "src/c.go", true},
		{"src/**/*.go", "lib/c.go", false},
		{"*.pem", "keys/k.pem", true},
		{"k?y", "key", true},
		{"[a-c]x", "bx", true},
		{".git", ".git/config", true},
		{".git", ".gitignore", false},
		{"caf\u00e9.txt", "cafe\u0301.txt", true}, // NFD on disk, NFC in the rule
		{"cafe\u0301/", "caf\u00e9/x", true},
		{".env", ".\u0435nv", false}, // a Cyrillic look-alike is another name
	} {
		p := mustNew(t, false, Rule{Kind: ReadDeny, Pattern: c.pattern, Source: "test"})
		if got := !p.Read(c.name).Allowed; got != c.want {
			t.Errorf("%q on %q: denied %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// TestDecide: read.deny covers writing too; write.allow, when given, makes
// every other path unwritable; deny wins over allow; the deciding rule and
// its source are named.
func TestDecide(t *testing.T) {
	p := mustNew(t, false,
		Rule{Kind: ReadDeny, Pattern: ".env", Source: "--deny-read"},
		Rule{Kind: WriteDeny, Pattern: ".github/workflows/", Source: "config.toml:3"},
		Rule{Kind: WriteAllow, Pattern: "src/", Source: "HUNK_ALLOW_WRITE"},
		Rule{Kind: WriteAllow, Pattern: ".github/", Source: "HUNK_ALLOW_WRITE"},
	)
	for _, c := range []struct {
		name          string
		read, write   bool
		reasonContain string
	}{
		{"src/main.go", true, true, ""},
		{"src/.env", false, false, `read.deny ".env" (--deny-read)`},
		{"README.md", true, false, "not under any policy write.allow rule"},
		{".github/workflows/ci.yml", true, false, `write.deny ".github/workflows/" (config.toml:3)`},
		{".github/CODEOWNERS", true, true, ""},
	} {
		r, w := p.Read(c.name), p.Write(c.name)
		if r.Allowed != c.read || w.Allowed != c.write {
			t.Errorf("%s: read %v write %v, want %v %v", c.name, r.Allowed, w.Allowed, c.read, c.write)
		}
		if c.reasonContain != "" && !strings.Contains(w.Reason(), c.reasonContain) {
			t.Errorf("%s: reason %q lacks %q", c.name, w.Reason(), c.reasonContain)
		}
	}
	if !mustNew(t, false).Write("anything").Allowed || !(*Policy)(nil).Read("x").Allowed {
		t.Error("no rules must allow everything")
	}
}

// TestFold: on a file system that folds case, case variants are the path.
func TestFold(t *testing.T) {
	p := mustNew(t, true, Rule{Kind: ReadDeny, Pattern: ".Env", Source: "t"})
	if p.Read("SUB/.ENV").Allowed {
		t.Error("a case variant got through a folding policy")
	}
	if !mustNew(t, false, Rule{Kind: ReadDeny, Pattern: ".env", Source: "t"}).Read(".ENV").Allowed {
		t.Error("a case-sensitive policy folded case")
	}
}

// TestBadRules: an empty pattern, a dot segment or an open bracket is an
// error naming the rule and its source.
func TestBadRules(t *testing.T) {
	for _, pat := range []string{"", "/", "a/../b", "[a"} {
		_, err := New([]Rule{{Kind: WriteDeny, Pattern: pat, Source: "cfg:7"}}, false)
		if err == nil || !strings.Contains(err.Error(), "cfg:7") {
			t.Errorf("%q: %v", pat, err)
		}
	}
}

func FuzzPolicy(f *testing.F) {
	for _, s := range [][2]string{{".env", "a/.env"}, {"**/x/**", "x/y"}, {"[!a]", "b"}, {"/a/b/", "a/b/c"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := New([]Rule{{Kind: WriteDeny, Pattern: pattern, Source: "fuzz"}}, len(name)%2 == 0)
		if err != nil {
			return
		}
		p.Read(name)
		denied := !p.Write(name).Allowed
		// The matcher (Rule.step, a segment at a time, as the sandbox's
		// walk uses it) decides as the reference matcher does: the
		// pattern against the name and each directory above it.
		clean := path.Clean(strings.TrimPrefix(name, "/"))
		if clean == "." {
			return
		}
		segs := strings.Split(p.norm(clean), "/")
		stepped := false
		for n := 1; n <= len(segs); n++ {
			if glob.Segments(p.rules[0].segs, segs[:n], segMatch) {
				stepped = true
			}
		}
		if stepped != denied {
			t.Fatalf("%q on %q: matcher %v, reference %v", pattern, name, denied, stepped)
		}
	})
}

// TestWithin: a workspace narrowed to a directory decides its names as
// they lie under the root the rules were written for.
func TestWithin(t *testing.T) {
	p := mustNew(t, false, Rule{Kind: WriteDeny, Pattern: "/sub/gen/", Source: "t"})
	if p.Write("gen/x").Allowed == false {
		t.Error("gen/x at the root is not sub/gen/x")
	}
	if p.Within("sub").Write("gen/x").Allowed {
		t.Error("gen/x under sub is sub/gen/x, which is denied")
	}
}

// FuzzSplitList: any list splits without a panic into trimmed, non-empty
// patterns with no comma outside braces unless it was escaped, and a list
// of plain names joined by commas splits back into them.
func FuzzSplitList(f *testing.F) {
	for _, s := range []string{".env,*.pem", "*.{pem,key}", `a\,b`, "{,}", "{{a,b},c}", ",,", "a,{b", "}x,y{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range SplitList(s) {
			if p == "" || p != strings.TrimSpace(p) {
				t.Fatalf("SplitList(%q) gave %q", s, p)
			}
		}
		names := strings.FieldsFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z') })
		if got := SplitList(strings.Join(names, ",")); len(names) > 0 && strings.Join(got, ",") != strings.Join(names, ",") {
			t.Fatalf("SplitList(%q) = %q", strings.Join(names, ","), got)
		}
	})
}
