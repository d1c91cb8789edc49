//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestThreeWayAgainstGit applies each commit's diff to its grandparent —
// the parent's blobs are in the repository, the work tree lacks the
// parent's changes — with git apply --3way and with hunk apply-patch
// --3way, and asserts the same outcome: the same tree byte for byte (merged
// files, conflict markers and all) and exit 1 exactly where git reports
// conflicts. The histories are a generated one over real Go source (edits
// that land near each other, so that many merges conflict) and, where the
// test runs in a full clone, hunk's own latest commits.
func TestThreeWayAgainstGit(t *testing.T) {
	requireGit(t)
	hunk := buildHunk(t)
	src := t.TempDir()
	commits := generatedHistory(t, src, 40)
	stats := threeWayReplay(t, hunk, src, commits)
	t.Logf("generated history: %s", stats)
	self, _ := os.Getwd()
	shallow, err := exec.Command("git", "-C", self, "rev-parse", "--is-shallow-repository").Output()
	if err != nil || strings.TrimSpace(string(shallow)) != "false" {
		t.Logf("hunk's own history: not replayed (not a full clone: %s%v)", bytes.TrimSpace(shallow), err)
		return
	}
	n := "60" // HUNK_3WAY_N: more
	if v := os.Getenv("HUNK_3WAY_N"); v != "" {
		n = v
	} else if testing.Short() {
		n = "15"
	}
	own := strings.Fields(gitRun(t, self, "rev-list", "--first-parent", "-n", n, "HEAD"))
	for i, j := 0, len(own)-1; i < j; i, j = i+1, j-1 {
		own[i], own[j] = own[j], own[i]
	}
	stats = threeWayReplay(t, hunk, self, own)
	t.Logf("hunk's own history: %s", stats)
}

func requireGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the three-way test needs git (apt-get install git)")
	}
}

// generatedHistory commits real Go files and then n commits of a few
// random line edits each, close together; it returns the commits oldest
// first.
func generatedHistory(t *testing.T, dir string, n int) []string {
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "config", "core.autocrlf", "false")
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	srcs, _ := filepath.Glob(filepath.Join(goroot, "src", "sort", "*.go"))
	if len(srcs) < 3 {
		t.Fatalf("no Go sources under %s", goroot)
	}
	files := map[string][]string{}
	var names []string // in order: the same history every run
	for _, s := range srcs[:3] {
		names = append(names, filepath.Base(s))
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(s)] = strings.SplitAfter(string(b), "\n")
	}
	rng := rand.New(rand.NewSource(38))
	var commits []string
	for k := 0; k <= n; k++ {
		if k > 0 {
			for _, name := range names {
				ls := files[name]
				if rng.Intn(3) == 0 {
					continue
				}
				at := rng.Intn(len(ls) / 4) // near the top: edits meet
				for e := 1 + rng.Intn(4); e > 0; e-- {
					i := min(at+rng.Intn(12), len(ls)-1)
					switch rng.Intn(3) {
					case 0:
						ls[i] = fmt.Sprintf("// edit %d.%d\n", k, e)
					case 1:
						ls = append(ls[:i], ls[i+1:]...)
					default:
						ls = append(ls[:i], append([]string{fmt.Sprintf("\t// added in %d\n", k)}, ls[i:]...)...)
					}
				}
				files[name] = ls
			}
		}
		for name, ls := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(ls, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint(k))
		commits = append(commits, strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD")))
	}
	return commits
}

// threeWayReplay applies commits[i-1]..commits[i] to commits[i-2] in a
// local clone of repo (its objects hard-linked, as a clone of one's own
// checkout is), once with git and once with hunk, and compares.
func threeWayReplay(t *testing.T, hunk, repo string, commits []string) string {
	work := filepath.Join(t.TempDir(), "w")
	gitRun(t, filepath.Dir(work), "clone", "-q", "--no-checkout", repo, work)
	gitRun(t, work, "config", "core.autocrlf", "false")
	var clean, conflicted, refused int
	for i := 2; i < len(commits); i++ {
		g, p, c := commits[i-2], commits[i-1], commits[i]
		patch := []byte(gitRun(t, work, "diff", p, c))
		if len(patch) == 0 {
			continue
		}
		reset := func() {
			gitRun(t, work, "checkout", "-q", "-f", "--detach", g)
			gitRun(t, work, "clean", "-q", "-fdx")
		}
		reset()
		before := treeWithoutGit(t, work)
		gitOut, gitCode := run3(work, patch, "git", "apply", "--3way", "-")
		want := treeWithoutGit(t, work)
		reset()
		hunkOut, hunkCode := run3(work, patch, hunk, "apply-patch", "--3way")
		got := treeWithoutGit(t, work)
		gitConflict := gitCode == 1 && strings.Contains(gitOut, "with conflicts")
		switch {
		case gitCode == 0 || gitConflict:
			if got != want || hunkCode != gitCode {
				t.Errorf("%s..%s on %s: hunk exit %d, git exit %d\nhunk: %s\ngit: %s\n%s", p[:10], c[:10], g[:10],
					hunkCode, gitCode, hunkOut, gitOut, treeDiff(got, want))
			}
			if gitConflict {
				conflicted++
			} else {
				clean++
			}
		default:
			// git refused (a file the grandparent lacks, say) and changed
			// nothing: hunk may not write anything else in silence.
			refused++
			if hunkCode == 0 && got != before && got != want {
				t.Errorf("%s..%s on %s: git refused (%s), hunk exit 0 with another tree", p[:10], c[:10], g[:10], gitOut)
			}
		}
	}
	return fmt.Sprintf("%d merged cleanly, %d with conflicts, %d refused by git", clean, conflicted, refused)
}

// run3 runs a command in dir with patch on stdin: its output and exit code.
func run3(dir string, patch []byte, name string, args ...string) (string, int) {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Stdin = bytes.NewReader(patch)
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Join(filepath.Dir(dir), "home"), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	out, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		return err.Error(), -1
	}
	return string(out), 0
}

// treeWithoutGit is treeOf without the repository itself.
func treeWithoutGit(t *testing.T, dir string) string {
	var keep []string
	for _, l := range strings.Split(treeOf(t, dir), "\n") {
		if !strings.HasPrefix(l, ".git/") && !strings.HasPrefix(l, ".git ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
