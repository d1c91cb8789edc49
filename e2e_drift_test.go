//go:build linux

// The drift differential test: real commits' diffs (git's and GNU diff's)
// applied to work trees that drifted since the diff was made, the way
// working trees drift — lines
// inserted, removed or duplicated near a chunk, the end of the file moved —
// by hunk apply-patch, git apply and GNU patch. Each drift leaves every line
// a chunk reads (its context and removals) as it was, so the tree the commit
// meant is known exactly: the commit's new file with the same drift. An exit
// 0 from hunk must leave exactly that tree; a refusal must leave the drifted
// one. git apply's and GNU patch's results are counted beside hunk's.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// driftKinds name the ways a work tree moves under a diff.
var driftKinds = []string{"inserted", "removed", "duplicated", "end moved"}

// chunkSpan is one chunk's old and new lines: 0-based starts, lengths.
type chunkSpan struct{ oldAt, oldN, newAt, newN int }

var chunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// diffSpans reads a unified diff's chunk headers.
func diffSpans(patch string) []chunkSpan {
	var spans []chunkSpan
	for _, m := range chunkHeader.FindAllStringSubmatch(patch, -1) {
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		s := chunkSpan{num(m[1], 0), num(m[2], 1), num(m[3], 0), num(m[4], 1)}
		if s.oldN > 0 { // "-5,0" is after line 5; "-5,2" starts at line 5
			s.oldAt--
		}
		if s.newN > 0 {
			s.newAt--
		}
		spans = append(spans, s)
	}
	return spans
}

// drift is one change to the old file: at position at (before that line),
// remove n lines, then insert add.
type drift struct {
	at, n int
	add   []string
}

func (d drift) on(lines []string, at int) []string {
	out := append([]string{}, lines[:at]...)
	out = append(out, d.add...)
	return append(out, lines[at+d.n:]...)
}

// lineMap is where each line of the old file stands in the new one: img[r]
// is old line r's index in the new file, -1 for a line the diff removes;
// added[p] says the diff adds lines at old position p (before old line p),
// so that a line inserted there has no one place in the new file.
type lineMap struct {
	img   []int
	added []bool
}

// mapLines reads a unified diff of a file of n lines.
func mapLines(patch string, spans []chunkSpan, n int) lineMap {
	m := lineMap{make([]int, n), make([]bool, n+1)}
	bodies := chunkHeader.Split(patch, -1)[1:]
	o, w := 0, 0
	for k, s := range spans {
		for ; o < s.oldAt && o < n; o, w = o+1, w+1 {
			m.img[o] = w
		}
		w = s.newAt
		body := strings.SplitAfter(bodies[k], "\n")[1:] // the rest of the header's line first
		for _, l := range body {
			if l == "" || o > n {
				break
			}
			switch l[0] {
			case ' ':
				if o < n {
					m.img[o] = w
				}
				o, w = o+1, w+1
			case '-':
				if o < n {
					m.img[o] = -1
				}
				o++
			case '+':
				m.added[min(o, n)] = true
				w++
			}
		}
	}
	for ; o < n; o, w = o+1, w+1 {
		m.img[o] = w
	}
	return m
}

// kept says old lines [from, to) are all in the new file.
func (m lineMap) kept(from, to int) bool {
	for r := from; r < to; r++ {
		if m.img[r] < 0 {
			return false
		}
	}
	return true
}

// pos maps old position p (before old line p) to the new file's, or -1
// where the diff adds lines there.
func (m lineMap) pos(p, newLen int) int {
	switch {
	case m.added[p], p > 0 && p < len(m.img) && m.img[p-1] < 0 && m.img[p] < 0:
		return -1 // among added or removed lines: no one place
	case p == len(m.img):
		return newLen
	case m.img[p] < 0: // before a removed line: after the last kept one
		for q := p - 1; q >= 0; q-- {
			if m.img[q] >= 0 {
				return m.img[q] + 1
			}
		}
		return 0
	}
	return m.img[p]
}

// pickDrift chooses a drift of the kind in or near a random chunk — it
// may remove or copy the chunk's context, never a line the chunk removes,
// nor insert where it adds — and the same drift's place in the new file.
func pickDrift(rng *rand.Rand, kind string, old []string, spans []chunkSpan, m lineMap, newLen int) (drift, int, bool) {
	endsInNewline := len(old) > 0 && strings.HasSuffix(old[len(old)-1], "\n")
	for try := 0; try < 30; try++ {
		s := spans[rng.Intn(len(spans))]
		near := s.oldAt - 5 + rng.Intn(s.oldN+10) // in the chunk or within 5 lines of it
		switch kind {
		case "inserted":
			if near < 0 || near > len(old) || (near == len(old) && !endsInNewline) || m.pos(near, newLen) < 0 {
				continue
			}
			var add []string
			for i := 1 + rng.Intn(2); i > 0; i-- {
				add = append(add, fmt.Sprintf("drift %d: a line added since the diff was made\n", i))
			}
			return drift{at: near, add: add}, m.pos(near, newLen), true
		case "removed":
			n := 1 + rng.Intn(2)
			if near < 0 || near+n > len(old) || !m.kept(near, near+n) || (near+n == len(old) && !endsInNewline) ||
				(n == 2 && m.added[near+1]) {
				continue
			}
			return drift{at: near, n: n}, m.img[near], true
		case "duplicated":
			if near < 0 || near >= len(old) || !m.kept(near, near+1) || !strings.HasSuffix(old[near], "\n") || m.added[near+1] {
				continue
			}
			return drift{at: near + 1, add: []string{old[near]}}, m.img[near] + 1, true
		case "end moved":
			if rng.Intn(2) == 0 && endsInNewline && !m.added[len(old)] {
				return drift{at: len(old), add: []string{"\n", "// drift: the file grew at its end\n"}[rng.Intn(2):]}, newLen, true
			}
			n := 1 + rng.Intn(3)
			if len(old) <= n || !m.kept(len(old)-n, len(old)) || (n > 1 && slices.Contains(m.added[len(old)-n+1:len(old)], true)) || !strings.HasSuffix(old[len(old)-n-1], "\n") || m.added[len(old)] {
				continue
			}
			return drift{at: len(old) - n, n: n}, m.img[len(old)-n], true
		}
	}
	return drift{}, 0, false
}

// driftTally counts one tool's outcomes per kind of drift.
type driftTally map[string]*[4]int // exact, refused, wrong (exit 0), partial (exit ≠ 0, tree changed)

func (t driftTally) add(kind string, outcome int) {
	if t[kind] == nil {
		t[kind] = &[4]int{}
	}
	t[kind][outcome]++
}

func (t driftTally) String() string {
	var b strings.Builder
	for _, k := range driftKinds {
		if c := t[k]; c != nil {
			fmt.Fprintf(&b, " %s: %d exact, %d refused, %d wrong, %d partial;", k, c[0], c[1], c[2], c[3])
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

const (
	driftExact = iota
	driftRefused
	driftWrong
	driftPartial
)

// TestDriftDifferential replays hunk's own latest commits (in a full clone;
// else a generated history over real Go source), each file's diff on the
// parent's file drifted once per kind. HUNK_LONG_TESTS=1 replays 400
// commits, -short 15, else 40; HUNK_TEST_DRIFT_N sets the number,
// HUNK_TEST_DRIFT_SEED other drifts, HUNK_TEST_DRIFT_KEEP=DIR keeps what
// hunk got wrong.
func TestDriftDifferential(t *testing.T) {
	requireGit(t)
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatal("the drift test needs GNU patch (apt-get install patch)")
	}
	hunk := buildHunk(t)
	n := 40
	switch {
	case os.Getenv("HUNK_TEST_DRIFT_N") != "":
		n, _ = strconv.Atoi(os.Getenv("HUNK_TEST_DRIFT_N"))
	case longTests():
		n = 400
	case testing.Short():
		n = 15
	}
	repo, _ := os.Getwd()
	var commits []string
	shallow, err := exec.Command("git", "-C", repo, "rev-parse", "--is-shallow-repository").Output()
	if err == nil && strings.TrimSpace(string(shallow)) == "false" {
		commits = strings.Fields(gitRun(t, repo, "rev-list", "--no-merges", "-n", strconv.Itoa(n+1), "HEAD"))
		t.Logf("hunk's own history: %d commits", len(commits)-1)
	} else {
		repo = t.TempDir()
		commits = generatedHistory(t, repo, n)
		slices.Reverse(commits) // newest first, as rev-list gives them
		t.Logf("a generated history (not a full clone): %d commits", len(commits)-1)
	}
	tallies := map[string]driftTally{"hunk": {}, "git apply": {}, "GNU patch": {}}
	work := filepath.Join(t.TempDir(), "w")
	driftSeed, _ := strconv.ParseInt(os.Getenv("HUNK_TEST_DRIFT_SEED"), 10, 64) // other drifts of the same commits
	cases, patchOnly := 0, map[string]int{}                                     // drifts GNU patch took right and hunk refused
	for i := 0; i+1 < len(commits); i++ {
		c := commits[i]
		p := strings.TrimSpace(gitRun(t, repo, "rev-parse", c+"^")) // (not the next listed: --no-merges skips merges)
		for k, name := range changedTextFiles(t, repo, p, c) {
			oldText, newText := gitRun(t, repo, "show", p+":"+name), gitRun(t, repo, "show", c+":"+name)
			// Every other file's diff is GNU diff's (diff -u: no git
			// headers, its own chunks), the others git's.
			patch, flavour := "", "git diff"
			if (i+k)%2 == 1 {
				patch, flavour = gnuDiff(t, name, oldText, newText), "diff -u"
			} else {
				patch = gitRun(t, repo, "diff", "--no-color", "--no-ext-diff", "--no-renames", p, c, "--", name)
			}
			spans := diffSpans(patch)
			if len(spans) == 0 {
				continue
			}
			old, nw := strings.SplitAfter(oldText, "\n"), strings.SplitAfter(newText, "\n")
			old, nw = old[:len(old)-1+min(1, len(old[len(old)-1]))], nw[:len(nw)-1+min(1, len(nw[len(nw)-1]))]
			m := mapLines(patch, spans, len(old))
			rng := rand.New(rand.NewSource(int64(i)*7919 + int64(len(name)) + driftSeed))
			for _, kind := range driftKinds {
				d, at, ok := pickDrift(rng, kind, old, spans, m, len(nw))
				if !ok {
					continue
				}
				cases++
				drifted := strings.Join(d.on(old, d.at), "")
				want := strings.Join(d.on(nw, at), "")
				label := fmt.Sprintf("%s %s (%s, %s at old line %d)", c[:10], name, flavour, kind, d.at+1)
				outcomes, hunkSaid := map[string]int{}, ""
				for _, tool := range []string{"hunk", "git apply", "GNU patch"} {
					argv := map[string][]string{
						"hunk":      {hunk, "apply-patch"},
						"git apply": {"git", "apply", "-"},
						"GNU patch": {"patch", "-p1", "-s", "--batch", "--no-backup-if-mismatch", "--reject-file=-"},
					}[tool]
					os.RemoveAll(work)
					target := filepath.Join(work, name)
					os.MkdirAll(filepath.Dir(target), 0o755)
					if err := os.WriteFile(target, []byte(drifted), 0o644); err != nil {
						t.Fatal(err)
					}
					out, code := run3(work, []byte(patch), argv[0], argv[1:]...)
					tree := treeContents(work)
					got, only := tree[name], len(tree) == 1
					outcome := driftPartial
					switch {
					case code == 0 && only && got == want:
						outcome = driftExact
					case code != 0 && only && got == drifted:
						outcome = driftRefused
					case code == 0:
						outcome = driftWrong
					}
					tallies[tool].add(kind, outcome)
					outcomes[tool] = outcome
					if tool == "hunk" && (outcome == driftWrong || outcome == driftPartial) {
						keepDrift(t, label, name, patch, drifted, want)
						t.Errorf("%s: hunk exit %d left another tree than the one meant (%s)\n%s\n%s", label, code, out,
							patch, lineDiff(want, got))
					}
					if tool == "hunk" {
						hunkSaid = out
					}
				}
				switch {
				case outcomes["hunk"] == driftExact:
				case outcomes["git apply"] == driftExact:
					// git's exact search found the place: so must hunk's.
					t.Errorf("%s: git apply gave the meant tree, hunk refused: %s\n%s", label, hunkSaid, patch)
				case outcomes["GNU patch"] == driftExact:
					patchOnly[kind]++
				}
			}
		}
	}
	if cases == 0 {
		t.Fatal("no drifted case was made")
	}
	for _, tool := range []string{"hunk", "git apply", "GNU patch"} {
		t.Logf("%s over %d drifted files:%s", tool, cases, tallies[tool])
	}
	t.Logf("refused by hunk where GNU patch's fuzz gave the meant tree: %v", patchOnly)
}

// keepDrift writes a case hunk got wrong below HUNK_TEST_DRIFT_KEEP, when
// set: the drifted work tree in w/, the meant one in want/, and the patch.
func keepDrift(t *testing.T, label, name, patch, drifted, want string) {
	root := os.Getenv("HUNK_TEST_DRIFT_KEEP")
	if root == "" {
		return
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_", "(", "", ")", "").Replace(label))
	for sub, content := range map[string]string{"w": drifted, "want": want} {
		p := filepath.Join(dir, sub, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "p.diff"), []byte(patch), 0o644)
	t.Logf("kept in %s", dir)
}

// gnuDiff is GNU diff -u's diff of a file's two texts, as a/NAME and b/NAME.
func gnuDiff(t *testing.T, name, oldText, newText string) string {
	dir := t.TempDir()
	for side, text := range map[string]string{"a": oldText, "b": newText} {
		p := filepath.Join(dir, side, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("diff", "-u", "a/"+name, "b/"+name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("diff -u %s: %v", name, err)
	}
	return string(out)
}

// changedTextFiles are the text files commit c modified of its parent p.
func changedTextFiles(t *testing.T, repo, p, c string) []string {
	var names []string
	for _, l := range strings.Split(gitRun(t, repo, "diff", "--numstat", "--no-renames", "--diff-filter=M", p, c), "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 || f[0] == "-" || strings.ContainsAny(f[2], "\"\\ ") {
			continue
		}
		names = append(names, f[2])
	}
	sort.Strings(names)
	return names
}

// lineDiff shows where two texts part, a few lines either side.
func lineDiff(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	return fmt.Sprintf("first difference at line %d\nmeant:\n%s\ngot:\n%s", i+1,
		strings.Join(w[from:min(len(w), i+4)], ""), strings.Join(g[from:min(len(g), i+4)], ""))
}
