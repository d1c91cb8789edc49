package policy

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes the files (a trailing / makes a directory; "a -> b" a link).
func tree(t *testing.T, entries ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(dir, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(e), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// render is a layout as "mode name" lines ("+" marking a placeholder).
func render(l *Layout) string {
	var b strings.Builder
	if l.AllowOnly {
		b.WriteString("allow-only\n")
	}
	for _, m := range l.Mounts {
		b.WriteString(m.Mode.String() + " " + m.Name)
		if m.Placeholder {
			b.WriteString(" +")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func rules(kind Kind, patterns ...string) []Rule {
	var out []Rule
	for _, p := range patterns {
		out = append(out, Rule{Kind: kind, Pattern: p, Source: "test"})
	}
	return out
}

// TestLayout: the mounts a sandbox places for a policy, and the rules it
// refuses to hold.
func TestLayout(t *testing.T) {
	std := []string{".env", "a/.env", "a/b/c.txt", "a/b/key.pem", "src/main.go", "docs/", ".github/workflows/ci.yml", "notes.txt"}
	for _, c := range []struct {
		name     string
		files    []string
		rules    []Rule
		readOnly bool
		want     string // the mounts, or "refused: TEXT" (a part of the error)
	}{
		{"no rules", std, nil, false, ""},
		{"bare read.deny at every depth, dirs on the way pinned", std, rules(ReadDeny, ".env", "*.pem"), false,
			"hidden .env\nwritable a\nhidden a/.env\nwritable a/b\nhidden a/b/key.pem\n"},
		{"a hidden directory is not looked into", std, rules(ReadDeny, "a/", ".env"), false,
			"hidden .env\nhidden a\n"},
		{"anchored write.deny", std, rules(WriteDeny, "/.github/workflows/"), false,
			"writable .github\nread-only .github/workflows\n"},
		{"write.deny of a missing path: a placeholder at its first missing directory", std, rules(WriteDeny, "/ci/deploy/"), false,
			"read-only ci +\n"},
		{"write.deny of a missing file beside existing ones", std, rules(WriteDeny, "/.gitlab-ci.yml", "/a/b/gen/"), false,
			"read-only .gitlab-ci.yml +\nwritable a\nwritable a/b\nread-only a/b/gen +\n"},
		{"read-only workspace: write.deny needs nothing", std, rules(WriteDeny, "*.lock", "/x/"), true, ""},
		{"bare write.deny refused", std, rules(WriteDeny, ".gitlab-ci.yml"), false, "refused: a command could create a new path it matches in the workspace root"},
		{"wildcard write.deny refused where it could create", std, rules(WriteDeny, "/a/b/*.txt"), false, "refused: in a/b"},
		{"a file in the way of a write.deny refused", []string{"build"}, rules(WriteDeny, "/build/out/"), false, "refused: build is not a directory"},
		{"write.deny through a link refused", []string{"real/", "conf -> real"}, rules(WriteDeny, "/conf"), false, "refused: conf is a symbolic link"},
		{"write.allow: the rest read-only", std, rules(WriteAllow, "/src/", "docs"), false,
			"allow-only\nwritable docs\nwritable src\n"},
		{"write.allow with deny inside", std, append(rules(WriteAllow, "a/"), rules(WriteDeny, "/a/b/")...), false,
			"allow-only\nwritable a\nread-only a/b\n"},
		{"write.allow with a wildcard deny inside refused", std, append(rules(WriteAllow, "a/"), rules(WriteDeny, "*.txt")...), false, "refused: in a"},
		{"write.allow with a wildcard deny outside: nothing to hold", []string{"src/", "x/y.txt"}, append(rules(WriteAllow, "/src/"), rules(WriteDeny, "/x/*.txt")...), false,
			"allow-only\nwritable src\n"},
		{"write.allow in a read-only workspace", std, rules(WriteAllow, "/src/"), true, ""},
		{"write.deny of everything: the workspace read-only, new files included", std, rules(WriteDeny, "**"), false, "allow-only\n"},
		{"write.deny of everything over a write.allow: deny wins", std, append(rules(WriteAllow, "/src/"), rules(WriteDeny, "/**")...), false, "allow-only\n"},
		{"write.deny of everything, read.deny still hidden", std, append(rules(WriteDeny, "**"), rules(ReadDeny, "*.pem")...), false,
			"allow-only\nhidden a/b/key.pem\n"},
		{"read.deny link: its target hidden", []string{"real.txt", "secret -> real.txt"}, rules(ReadDeny, "/secret"), false, "hidden real.txt\n"},
		{"hard link refused", []string{"f"}, rules(ReadDeny, "/g"), false, "refused: g has 2 names"},
		{"pins only where the parent is writable", []string{"a/b/c/.env"}, append(rules(WriteAllow, "/a/b/"), rules(ReadDeny, ".env")...), false,
			"allow-only\nwritable a/b\nwritable a/b/c\nhidden a/b/c/.env\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, c.files...)
			if c.name == "hard link refused" {
				if err := os.Link(filepath.Join(dir, "f"), filepath.Join(dir, "g")); err != nil {
					t.Skip(err)
				}
			}
			p := mustNew(t, false, c.rules...)
			l, err := p.Layout(dir, c.readOnly)
			if want, ok := strings.CutPrefix(c.want, "refused: "); ok {
				var ue *UnholdableError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, %v; want a refusal saying %q", l, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := render(l); got != c.want {
				t.Errorf("mounts:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestLayoutAgreesWithDecisions: over a tree of many names, a path is
// under a hidden mount exactly when the policy denies reading it, and —
// where rules can be held — under a read-only one (or outside the
// writable part) exactly when it denies writing it.
func TestLayoutAgreesWithDecisions(t *testing.T) {
	files := []string{".env", "a/.env", "a/.ENV", "a/b/c.txt", "a/b/key.pem", "src/main.go", "src/gen/x.go", "docs/a.md",
		".github/workflows/ci.yml", ".github/CODEOWNERS", "notes.txt", "deep/dir/f", "deep/x/dir/g", "secrets/k", "x/secrets/k"}
	sets := [][]Rule{
		rules(ReadDeny, ".env", "*.pem", "secrets/"),
		rules(ReadDeny, "**/dir/*", "/a/b/"),
		append(rules(WriteDeny, "/.github/", "/src/gen/"), rules(ReadDeny, "a/.env")...),
		append(rules(WriteAllow, "/src/", "/a/"), rules(WriteDeny, "/src/gen/", "/a/b/")...),
		append(rules(WriteAllow, "src/**"), rules(ReadDeny, ".env")...),
	}
	dir := tree(t, files...)
	for i, rs := range sets {
		p := mustNew(t, false, rs...)
		l, err := p.Layout(dir, false)
		if err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
		for _, f := range files {
			for n := f; n != "."; n = filepath.Dir(n) {
				hidden := false
				for _, m := range l.Mounts {
					if m.Mode == Hidden && (n == m.Name || strings.HasPrefix(n, m.Name+"/")) {
						hidden = true
					}
				}
				if denied := !p.Read(n).Allowed; denied != hidden {
					t.Errorf("set %d: %s: read denied %v, hidden %v", i, n, denied, hidden)
				}
				if !hidden {
					if denied, writable := !p.Write(n).Allowed, l.Writable(n, false); denied == writable {
						t.Errorf("set %d: %s: write denied %v, writable in the sandbox %v", i, n, denied, writable)
					}
				}
			}
		}
	}
}

// TestLayoutTooDeep: a tree deeper than a path can name (a command can make
// one) refuses the layout with a reason that says so and names the tree
// shortly; one within PATH_MAX is walked as any other.
func TestLayoutTooDeep(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("d", 200)
	p := dir
	for range 15 { // 3,015 bytes: walked
		p = filepath.Join(p, name)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	pol, err := New(rules(ReadDeny, ".env"), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pol.Layout(dir, false); err != nil {
		t.Fatalf("a tree within PATH_MAX: %v", err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(p); err != nil { // deeper, relative to the deepest directory so far
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for range 10 {
		if err := os.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir(name); err != nil {
			t.Fatal(err)
		}
	}
	os.Chdir(wd)
	_, err = pol.Layout(dir, false)
	var ue *UnholdableError
	if !errors.As(err, &ue) || !ue.TooLong || !strings.Contains(ue.Reason, "its path longer than a mount can name (4096 bytes)") || len(ue.Reason) > 400 {
		t.Fatalf("a tree past PATH_MAX: %v", err)
	}
	t.Cleanup(func() { exec.Command("rm", "-rf", dir).Run() })
}
