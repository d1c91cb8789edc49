//go:build linux

// The differential test of apply-patch against the real git (and GNU patch
// for diff -ruN): small repositories are built with git commands at run
// time, each commit is turned into a patch in every flavour git writes, and
// the tree hunk leaves is compared byte for byte (type and exec bit
// included) with the one git apply leaves from the same parent tree.
package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// gitRun runs git in dir with a fixed identity and no user config.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z")
	out, err := c.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// repoStep is one commit of a scenario: what it does to the work tree.
type repoStep struct {
	name string
	do   func(t testing.TB, dir string)
}

func write(name, content string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func steps(fs ...func(testing.TB, string)) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		for _, f := range fs {
			f(t, dir)
		}
	}
}

func shell(script string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		c := exec.Command("sh", "-ec", script)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
}

// lines makes n numbered lines of text with a prefix.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return b.String()
}

// binaryBytes is n bytes of a binary file (NULs and high bytes), seeded.
func binaryBytes(seed byte, n int) string {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1103515245 + 12345
		b[i] = byte(x >> 16)
	}
	b[0] = 0
	return string(b)
}

// gitScenario is the history the differential test replays: every kind of
// change the issue names, a commit each.
var gitScenario = []repoStep{
	{"initial", steps(
		write("a.txt", lines("a", 40)),
		write("src/b.go", "package b\n\nfunc B() int {\n\treturn 1\n}\n"),
		write("run.sh", "#!/bin/sh\necho hi\n"),
		write("latin1.txt", "caf\xe9\nna\xefve\nline 3\n"),
		write("crlf.txt", "one\r\ntwo\r\nthree\r\n"),
		write("lf2crlf.txt", "x\ny\nz\n"),
		write("nonl.txt", "no newline"),
		write("empty.txt", ""),
		write("bin.dat", binaryBytes(1, 3000)),
		write("gone.txt", lines("gone", 5)),
		write("deep/er/x.txt", lines("x", 3)),
		write("deep/y.txt", lines("y", 3)),
		shell("ln -s a.txt link-a && ln -s src link-dir"),
	)},
	{"edits", steps(
		write("a.txt", strings.Replace(strings.Replace(lines("a", 40), "a line 3\n", "a line 3 changed\n", 1), "a line 35\n", "", 1)),
		write("src/b.go", "package b\n\nfunc B() int {\n\treturn 2\n}\n\nfunc C() {}\n"),
		shell("chmod +x run.sh"),
	)},
	{"endings", steps(
		write("lf2crlf.txt", "x\r\ny\r\nz\r\n"),
		write("crlf.txt", "one\r\ntwo changed\r\nthree\r\n"),
		write("nonl.txt", "no newline\nnow two lines\n"),
		write("latin1.txt", "caf\xe9\nna\xefve changed \xe0\nline 3\n"),
	)},
	{"binary", steps(
		write("bin.dat", binaryBytes(1, 1500)+"changed"+binaryBytes(1, 3000)[1500:]),
		write("new.bin", binaryBytes(2, 500)),
	)},
	{"delete", steps(
		shell("rm gone.txt empty.txt"),
	)},
	{"prune", steps(
		shell("git mv deep/er/x.txt x2.txt && git mv deep/y.txt y2.txt"),
	)},
	{"rename", steps(
		shell("git mv a.txt moved.txt && git mv bin.dat bin2.dat"),
		write("moved.txt", strings.Replace(lines("a", 40), "a line 20\n", "a line twenty\n", 1)),
	)},
	{"copy", steps(
		write("src/copy.go", "package b\n\nfunc B() int {\n\treturn 2\n}\n\nfunc C() {}\n\nfunc D() {}\n"),
		write("src/b.go", "package b\n\nfunc B() int {\n\treturn 3\n}\n\nfunc C() {}\n"),
	)},
	{"symlinks", steps(
		shell("ln -sfn moved.txt link-a && ln -s src/b.go link-new && rm link-dir && echo now-a-file > link-dir"),
	)},
	{"symlink-types", steps(
		shell("rm link-dir && ln -s moved.txt link-dir && git mv link-new link-renamed && rm run.sh && ln -s latin1.txt run.sh"),
	)},
	{"submodule", steps(
		shell("mkdir sub && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub"),
	)},
	{"submodule-update", steps(
		shell("git update-index --cacheinfo 160000,2222222222222222222222222222222222222222,sub"),
	)},
	{"submodule-delete", steps(
		shell("git update-index --force-remove sub && rmdir sub"),
	)},
	{"mode-only", steps(
		shell("chmod +x latin1.txt"),
	)},
	{"crlf2lf", steps(
		write("crlf.txt", "one\ntwo changed\nthree\n"),
	)},
	{"emptied", steps(
		write("moved.txt", ""),
		write("made.txt", ""),
	)},
}

// buildScenarioRepo makes the scenario's repository and returns its
// directory and its commits, oldest first.
func buildScenarioRepo(t testing.TB, dir string, scenario []repoStep) []string {
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "config", "core.autocrlf", "false")
	var commits []string
	for _, s := range scenario {
		s.do(t, dir)
		gitRun(t, dir, "add", "-A", ".")
		gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", s.name)
		commits = append(commits, strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD")))
	}
	return commits
}

// checkout writes commit's tree into dir (links as links, gitlinks as
// empty directories, the exec bit kept).
func checkout(t testing.TB, repo, commit, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	c := exec.Command("sh", "-ec", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", repo, commit, dir)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("checkout %s: %v\n%s", commit, err, out)
	}
}

// treeOf describes a directory: one line per entry with its type, exec bit
// and content or link target.
func treeOf(t testing.TB, dir string) string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, fmt.Sprintf("%s -> %s", rel, target))
		case fi.IsDir():
			out = append(out, rel+"/")
		default:
			b, _ := os.ReadFile(p)
			x := ""
			if fi.Mode()&0o111 != 0 {
				x = " (exec)"
			}
			if len(b) > 200 {
				out = append(out, fmt.Sprintf("%s%s %d bytes, sha256 %x", rel, x, len(b), sha256.Sum256(b)))
			} else {
				out = append(out, fmt.Sprintf("%s%s %q", rel, x, b))
			}
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// flavour makes one kind of patch of a commit against its parent.
type flavour struct {
	name    string
	reverse bool // the patch is applied with -R to the commit's tree
	gnu     bool // the reference is GNU patch, not git apply
	make    func(t testing.TB, repo, parent, commit, tmp string) []byte
}

var flavours = []flavour{
	{name: "diff", make: func(t testing.TB, repo, p, c, _ string) []byte {
		return []byte(gitRun(t, repo, "diff", p, c))
	}},
	{name: "binary", make: func(t testing.TB, repo, p, c, _ string) []byte {
		return []byte(gitRun(t, repo, "diff", "--binary", p, c))
	}},
	{name: "format-patch", make: func(t testing.TB, repo, p, c, _ string) []byte {
		return []byte(gitRun(t, repo, "format-patch", "--stdout", "-1", c))
	}},
	{name: "copies", make: func(t testing.TB, repo, p, c, _ string) []byte {
		return []byte(gitRun(t, repo, "diff", "--binary", "-C", "-C", p, c))
	}},
	{name: "reverse", reverse: true, make: func(t testing.TB, repo, p, c, _ string) []byte {
		return []byte(gitRun(t, repo, "diff", "--binary", "-C", "-C", p, c))
	}},
	{name: "diff-ruN", gnu: true, make: func(t testing.TB, repo, p, c, tmp string) []byte {
		checkout(t, repo, p, filepath.Join(tmp, "a"))
		checkout(t, repo, c, filepath.Join(tmp, "b"))
		cmd := exec.Command("diff", "-ruN", "--no-dereference", "a", "b")
		cmd.Dir = tmp
		out, _ := cmd.Output() // exit 1: differences
		return out
	}},
}

// applyRef applies patch to dir with the reference tool; ok reports success.
func applyRef(dir string, patch []byte, f flavour) (bool, string) {
	var c *exec.Cmd
	switch {
	case f.gnu:
		c = exec.Command("patch", "-p1", "-s", "--no-backup-if-mismatch")
	case f.reverse:
		c = exec.Command("git", "apply", "-R", "-")
	default:
		c = exec.Command("git", "apply", "-")
	}
	if f.gnu && bytes.Contains(patch, []byte("\nBinary files ")) {
		// GNU patch skips them and exits 0: its tree is not the commit's.
		return false, "GNU patch skips binary files"
	}
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	c.Stdin = bytes.NewReader(patch)
	out, err := c.CombinedOutput()
	return err == nil, string(out)
}

// notYet are the scenarios hunk refuses (leaving the tree as it was) while
// the work of issue 19 goes on: each names what is missing.
var notYet = map[string]string{}

// TestGitApplyDifferential applies every commit of the scenario in every
// flavour with hunk and with git apply (GNU patch for diff -ruN) and asserts
// the same tree, byte for byte. Where the reference refuses, hunk must leave
// the tree as it was if it refuses too; it may not exit 0 with another tree.
func TestGitApplyDifferential(t *testing.T) {
	for _, tool := range []string{"git", "patch", "diff", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the differential test needs %s (CI installs it)", tool)
			}
			sandboxtest.Skip(t, "the differential test against git needs %s", tool)
		}
	}
	hunk := buildHunk(t)
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.Mkdir(repo, 0o755)
	commits := buildScenarioRepo(t, repo, gitScenario)
	for i := 1; i < len(commits); i++ {
		parent, commit := commits[i-1], commits[i]
		for _, f := range flavours {
			t.Run(gitScenario[i].name+"/"+f.name, func(t *testing.T) {
				diffGitApply(t, hunk, repo, parent, commit, f)
			})
		}
	}
}

// diffGitApply compares hunk and the reference on one commit and flavour.
func diffGitApply(t *testing.T, hunk, repo, parent, commit string, f flavour) {
	tmp := t.TempDir()
	patch := f.make(t, repo, parent, commit, tmp)
	if len(bytes.TrimSpace(patch)) == 0 {
		// diff -ruN of a change it does not see (a submodule's commit):
		// an empty patch is an error for hunk, as for git apply.
		t.Skip("the flavour writes an empty patch for this commit")
	}
	from := parent
	if f.reverse {
		from = commit
	}
	ref, got := filepath.Join(tmp, "ref"), filepath.Join(tmp, "hunk")
	checkout(t, repo, from, ref)
	checkout(t, repo, from, got)
	before := treeOf(t, got)
	refOK, refOut := applyRef(ref, patch, f)
	args := []string{"-C", got, "apply-patch"}
	if f.reverse {
		args = append(args, "-R")
	}
	c := exec.Command(hunk, args...)
	c.Stdin = bytes.NewReader(patch)
	c.Env = append(os.Environ(), "NO_COLOR=1", "HUNK_CONFIG=/dev/null")
	out, err := c.CombinedOutput()
	after := treeOf(t, got)
	switch {
	case err == nil && !refOK:
		if after != before {
			t.Errorf("hunk exited 0 and changed the tree where the reference refused (%s)\n%s\npatch:\n%s", strings.TrimSpace(refOut), out, patch)
		}
	case err == nil:
		if want := treeOf(t, ref); after != want {
			t.Errorf("hunk exited 0 with another tree than the reference:\n%s\n%s\npatch:\n%s", out, treeDiff(after, want), patch)
		}
	case refOK:
		if after != before {
			t.Errorf("hunk failed and changed the tree:\n%s", out)
		}
		if why := notYet[strings.Split(t.Name(), "/")[1]]; why != "" {
			t.Logf("refused, as it should until %s:\n%s", why, out)
			return
		}
		if f.reverse && bytes.Contains(out, []byte("cannot reverse the copy of")) {
			// Deliberate (docs/apply-patch.md): git apply -R copies a
			// copy back onto its source where the patch also moves the
			// source away, leaving the copy, and writes that path twice;
			// hunk refuses every copy reversed.
			t.Logf("a copy reversed, refused:\n%s", out)
			return
		}
		t.Errorf("hunk refused what the reference applies:\n%s\npatch:\n%s", out, patch)
	default:
		if after != before {
			t.Errorf("hunk failed and changed the tree:\n%s", out)
		}
	}
}

// FuzzGitApply: a random tree (text with repeated lines, CRLF, missing final
// newlines, Latin-1, binary files, links, exec bits) is committed, mutated
// as the input says, committed again, and the second commit applied by hunk
// and by git apply — forward, reversed, and with copies and renames found —
// must give the same tree. The seeds run in every `go test`; `go test -fuzz
// FuzzGitApply` explores further.
func FuzzGitApply(f *testing.F) {
	for _, tool := range []string{"git", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				f.Fatalf("FuzzGitApply needs %s (CI installs it)", tool)
			}
			sandboxtest.Skip(f, "the differential fuzzer needs %s", tool)
		}
	}
	f.Add(int64(1), []byte{0, 1, 2, 3})
	f.Add(int64(2), []byte{4, 5, 6, 7, 8, 9})
	f.Add(int64(3), []byte{10, 11, 0, 0, 0, 12})
	f.Add(int64(4), []byte{1, 1, 1, 1, 13, 14, 15})
	f.Add(int64(5), []byte{2, 9, 3, 8, 4, 7})
	f.Add(int64(6), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	hunk := buildHunk(f)
	f.Fuzz(func(t *testing.T, seed int64, ops []byte) {
		if len(ops) > 40 {
			ops = ops[:40]
		}
		root := t.TempDir()
		repo := filepath.Join(root, "repo")
		os.Mkdir(repo, 0o755)
		rng := rand.New(rand.NewSource(seed))
		tree := &fuzzTree{rng: rng, dir: repo}
		commits := buildScenarioRepo(t, repo, []repoStep{
			{"base", func(t testing.TB, dir string) { tree.populate(t) }},
			{"change", func(t testing.TB, dir string) {
				for _, op := range ops {
					tree.mutate(t, op)
				}
			}},
		})
		for _, fl := range flavours {
			if fl.gnu || fl.name == "diff" {
				continue // GNU patch and text-only diffs: TestGitApplyDifferential
			}
			t.Run(fl.name, func(t *testing.T) { diffGitApply(t, hunk, repo, commits[0], commits[1], fl) })
		}
	})
}

// fuzzTree makes and changes a random work tree.
type fuzzTree struct {
	rng *rand.Rand
	dir string
	n   int // files made so far (for fresh names)
}

// words are few, so that lines repeat and contexts are ambiguous.
var fuzzWords = []string{"a", "b", "}", "return x", "", "\tif x {", "caf\xe9", "x = 1"}

func (f *fuzzTree) text() string {
	var b strings.Builder
	eol := "\n"
	if f.rng.Intn(4) == 0 {
		eol = "\r\n"
	}
	n := f.rng.Intn(30)
	for i := 0; i < n; i++ {
		b.WriteString(fuzzWords[f.rng.Intn(len(fuzzWords))])
		if f.rng.Intn(3) == 0 {
			fmt.Fprintf(&b, " %d", f.rng.Intn(5))
		}
		if i < n-1 || f.rng.Intn(5) != 0 {
			b.WriteString(eol)
		}
	}
	return b.String()
}

func (f *fuzzTree) newName() string {
	f.n++
	return fmt.Sprintf("d%d/f%d.txt", f.rng.Intn(3), f.n)
}

func (f *fuzzTree) populate(t testing.TB) {
	for i := 0; i < 3+f.rng.Intn(5); i++ {
		write(f.newName(), f.text())(t, f.dir)
	}
	write("bin.dat", binaryBytes(byte(f.rng.Intn(256)), 300+f.rng.Intn(3000)))(t, f.dir)
}

// files lists the regular files of the tree (not .git).
func (f *fuzzTree) files() []string {
	var out []string
	filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(f.dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (f *fuzzTree) mutate(t testing.TB, op byte) {
	files := f.files()
	if len(files) == 0 {
		write(f.newName(), f.text())(t, f.dir)
		return
	}
	name := files[int(op>>4)%len(files)]
	p := filepath.Join(f.dir, name)
	b, _ := os.ReadFile(p)
	switch op % 8 {
	case 0, 1: // change, insert or delete some lines
		lines := strings.SplitAfter(string(b), "\n")
		for k := 0; k < 1+f.rng.Intn(3) && len(lines) > 0; k++ {
			i := f.rng.Intn(len(lines))
			switch f.rng.Intn(3) {
			case 0:
				lines[i] = fuzzWords[f.rng.Intn(len(fuzzWords))] + " changed\n"
			case 1:
				lines = append(lines[:i], lines[i+1:]...)
			default:
				lines = append(lines[:i], append([]string{"inserted\n"}, lines[i:]...)...)
			}
		}
		os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	case 2:
		os.Remove(p)
	case 3:
		write(f.newName(), f.text())(t, f.dir)
	case 4:
		to := f.newName()
		os.MkdirAll(filepath.Join(f.dir, filepath.Dir(to)), 0o755)
		os.Rename(p, filepath.Join(f.dir, to))
	case 5:
		fi, _ := os.Stat(p)
		os.Chmod(p, fi.Mode()^0o111)
	case 6:
		os.Symlink(filepath.Base(name), filepath.Join(filepath.Dir(p), fmt.Sprintf("link%d", f.rng.Intn(1000))))
	case 7:
		if bytes.Contains(b, []byte("\r\n")) {
			b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		} else {
			b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
		}
		os.WriteFile(p, b, 0o644)
	}
}

// treeDiff lists the entries two tree descriptions disagree on.
func treeDiff(got, want string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("hunk:      " + l + "\n")
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("reference: " + l + "\n")
		}
	}
	return b.String()
}

// TestGitApplyReplay replays the history of a real repository (a developer
// tool, not run by default: HUNK_REPLAY_REPO names a git directory,
// HUNK_REPLAY_N how many of its latest non-merge commits, default 100):
// every commit as `git diff --binary`, `-C -C` and reversed, compared as in
// TestGitApplyDifferential.
func TestGitApplyReplay(t *testing.T) {
	repo := os.Getenv("HUNK_REPLAY_REPO")
	if repo == "" {
		t.Skip("set HUNK_REPLAY_REPO to a git directory to replay its history")
	}
	n := "100"
	if v := os.Getenv("HUNK_REPLAY_N"); v != "" {
		n = v
	}
	hunk := buildHunk(t)
	// --parents prints each commit with its parent: "C P" (a root commit alone).
	for _, line := range strings.Split(strings.TrimSpace(gitRun(t, repo, "rev-list", "--no-merges", "--parents", "-n", n, "HEAD")), "\n") {
		revs := strings.Fields(line)
		if len(revs) != 2 {
			continue
		}
		commit, parent := revs[0], revs[1]
		for _, fl := range flavours {
			if fl.gnu || fl.name == "diff" || fl.name == "format-patch" {
				continue
			}
			t.Run(commit[:10]+"/"+fl.name, func(t *testing.T) { diffGitApply(t, hunk, repo, parent, commit, fl) })
		}
	}
}
