// Package diff owns unified diff text: it turns an old and a new content into
// the `--- a` / `+++ b` / `@@` form every hunk command shows with --diff;
// coloring is left to the commands.
//
// Lines are compared whole (with their endings). The common head and tail
// are set aside, the rest is cut at lines that occur exactly once on each
// side and in the same order (patience diff's anchors), and only the gaps
// between anchors — small for the edits hunk makes — go to a full LCS, or to
// git's own Myers (merge.Lines: xdiff's, with its cut-offs) when a gap is
// large. So a three-line change in a long file costs about a pass over the
// file, and a rewrite of thousands of lines what git diff's costs, not a
// quadratic table.
package diff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/merge"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// Unified returns the unified diff (3 lines of context) that turns old into
// new, headed "--- oldName" / "+++ newName"; "" when the contents are equal.
// A missing final newline is marked "\ No newline at end of file" as diff(1)
// does. Creations and deletions are diffs against empty content; name them
// /dev/null as git does.
func Unified(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	return Write(fmt.Sprintf("--- %s\n+++ %s\n", oldName, newName), old, new, Style{Context: Context})
}

// Style is how Write lays out hunks.
type Style struct {
	// Context is the number of unchanged lines around each change.
	Context int
	// Counts writes every hunk range as "l,n", as jsdiff (the npm diff
	// package) does, where diff(1) writes "l" for a range of one line.
	Counts bool
}

// Write returns header followed by the hunks that turn old into new, laid
// out in style st (only the header when they are equal).
func Write(header string, old, new []byte, st Style) string {
	a, b := splitLines(string(old)), splitLines(string(new))
	var sb strings.Builder
	sb.WriteString(header)
	if string(old) != string(new) {
		writeHunks(&sb, a, b, lineOps(a, b), st)
	}
	return sb.String()
}

// kind of a line operation.
type kind byte

const (
	equal kind = ' '
	del   kind = '-'
	ins   kind = '+'
)

// op is one line of the edit script: a[i] kept or deleted, or b[j] inserted.
type op struct {
	k    kind
	i, j int // indices into a and b (the line's own side; both for equal)
}

// splitLines splits after each "\n"; a last line without one is kept.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	lines := make([]string, 0, n+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// lineOps computes an edit script turning a into b.
func lineOps(a, b []string) []op {
	ops := make([]op, 0, len(a)+len(b)/4)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for k := 0; k < pre; k++ {
		ops = append(ops, op{equal, k, k})
	}
	ops = diffRange(ops, a, b, pre, len(a)-suf, pre, len(b)-suf)
	for k := 0; k < suf; k++ {
		ops = append(ops, op{equal, len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// maxLCSCells bounds the table of the plain LCS used for a gap; gaps up to
// smallGap cells skip the search for anchors.
const (
	maxLCSCells = 1 << 20
	smallGap    = 1 << 12
)

// diffRange appends the edit script of a[a0:a1] against b[b0:b1].
func diffRange(ops []op, a, b []string, a0, a1, b0, b1 int) []op {
	switch {
	case a0 == a1:
		for j := b0; j < b1; j++ {
			ops = append(ops, op{ins, a0, j})
		}
		return ops
	case b0 == b1:
		for i := a0; i < a1; i++ {
			ops = append(ops, op{del, i, b0})
		}
		return ops
	}
	cells := (a1 - a0) * (b1 - b0)
	if cells <= smallGap {
		return lcs(ops, a, b, a0, a1, b0, b1)
	}
	if anchors := uniqueAnchors(a, b, a0, a1, b0, b1); len(anchors) > 0 {
		pi, pj := a0, b0
		for _, an := range anchors {
			ops = diffRange(ops, a, b, pi, an[0], pj, an[1])
			ops = append(ops, op{equal, an[0], an[1]})
			pi, pj = an[0]+1, an[1]+1
		}
		return diffRange(ops, a, b, pi, a1, pj, b1)
	}
	if cells <= maxLCSCells {
		return lcs(ops, a, b, a0, a1, b0, b1)
	}
	return myersRange(ops, a, b, a0, a1, b0, b1)
}

// uniqueAnchors returns the pairs (i, j) of lines that occur exactly once
// in a[a0:a1] and once in b[b0:b1], longest increasing in both (patience).
func uniqueAnchors(a, b []string, a0, a1, b0, b1 int) [][2]int {
	type seen struct{ na, nb, j int32 }
	idx := make(map[string]int32, a1-a0)
	counts := make([]seen, 0, a1-a0)
	for i := a0; i < a1; i++ {
		k, ok := idx[a[i]]
		if !ok {
			k = int32(len(counts))
			idx[a[i]] = k
			counts = append(counts, seen{})
		}
		counts[k].na++
	}
	for j := b0; j < b1; j++ {
		if k, ok := idx[b[j]]; ok {
			counts[k].nb++
			counts[k].j = int32(j)
		}
	}
	var pairs [][2]int
	for i := a0; i < a1; i++ {
		if c := counts[idx[a[i]]]; c.na == 1 && c.nb == 1 {
			pairs = append(pairs, [2]int{i, int(c.j)})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest increasing subsequence of j (pairs are in i order).
	tails := []int{}
	prev := make([]int, len(pairs))
	for k, p := range pairs {
		x := sort.Search(len(tails), func(t int) bool { return pairs[tails[t]][1] >= p[1] })
		if x > 0 {
			prev[k] = tails[x-1]
		} else {
			prev[k] = -1
		}
		if x == len(tails) {
			tails = append(tails, k)
		} else {
			tails[x] = k
		}
	}
	out := make([][2]int, len(tails))
	for k, x := len(tails)-1, tails[len(tails)-1]; k >= 0; k, x = k-1, prev[x] {
		out[k] = pairs[x]
	}
	return out
}

// lcs appends the edit script of a plain longest-common-subsequence table.
func lcs(ops []op, a, b []string, a0, a1, b0, b1 int) []op {
	n, m := a1-a0, b1-b0
	t := make([]int32, (n+1)*(m+1))
	w := m + 1
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[a0+i] == b[b0+j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else if t[(i+1)*w+j] >= t[i*w+j+1] {
				t[i*w+j] = t[(i+1)*w+j]
			} else {
				t[i*w+j] = t[i*w+j+1]
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[a0+i] == b[b0+j]:
			ops = append(ops, op{equal, a0 + i, b0 + j})
			i++
			j++
		case j < m && (i == n || t[i*w+j+1] > t[(i+1)*w+j]):
			ops = append(ops, op{ins, a0 + i, b0 + j})
			j++
		default:
			ops = append(ops, op{del, a0 + i, b0 + j})
			i++
		}
	}
	return ops
}

// myersRange appends the edit script of a large gap by git's own diff
// (merge.Lines: xdiff's Myers with its cut-offs, so a rewrite of thousands
// of lines costs what git diff's does).
func myersRange(ops []op, a, b []string, a0, a1, b0, b1 int) []op {
	as, bs := make([][]byte, a1-a0), make([][]byte, b1-b0)
	for i := range as {
		as[i] = []byte(a[a0+i])
	}
	for j := range bs {
		bs[j] = []byte(b[b0+j])
	}
	i, j := a0, b0
	for _, c := range merge.Lines(as, bs) {
		for ; i < a0+c.Old; i++ {
			ops = append(ops, op{equal, i, j})
			j++
		}
		for k := 0; k < c.OldN; k++ {
			ops = append(ops, op{del, i, j})
			i++
		}
		for k := 0; k < c.NewN; k++ {
			ops = append(ops, op{ins, i, j})
			j++
		}
	}
	for ; i < a1; i++ {
		ops = append(ops, op{equal, i, j})
		j++
	}
	return ops
}

// writeHunks formats the edit script as unified hunks with st.Context lines
// of context, joining changes that are close.
func writeHunks(sb *strings.Builder, a, b []string, ops []op, st Style) {
	Context := st.Context
	n := len(ops)
	for k := 0; k < n; {
		// Find the next change.
		for k < n && ops[k].k == equal {
			k++
		}
		if k == n {
			return
		}
		start := k - Context
		if start < 0 {
			start = 0
		}
		// Extend while the next change is within 2*Context equal lines.
		end := k
		for {
			for end < n && ops[end].k != equal {
				end++
			}
			run := 0
			for end+run < n && ops[end+run].k == equal {
				run++
			}
			if end+run < n && run <= 2*Context {
				end += run
				continue
			}
			end += min(run, Context)
			break
		}
		// Header: first lines and counts on each side.
		var fromN, toN int
		fromL, toL := -1, -1
		for _, o := range ops[start:end] {
			if o.k != ins {
				if fromL < 0 {
					fromL = o.i
				}
				fromN++
			}
			if o.k != del {
				if toL < 0 {
					toL = o.j
				}
				toN++
			}
		}
		if fromL < 0 {
			fromL = ops[start].i
		}
		if toL < 0 {
			toL = ops[start].j
		}
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", rangeOf(fromL+1, fromN, st.Counts), rangeOf(toL+1, toN, st.Counts))
		for _, o := range ops[start:end] {
			line := ""
			switch o.k {
			case ins:
				line = b[o.j]
			default:
				line = a[o.i]
			}
			sb.WriteByte(byte(o.k))
			sb.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
}

// rangeOf formats a hunk range as diff(1) does: "l" for one line, "l,n"
// otherwise (always, with counts), and "l-1,0" for an empty range (the line
// before which it lies).
func rangeOf(line, n int, counts bool) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", line-1)
	case n == 1 && !counts:
		return fmt.Sprintf("%d", line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}

// Touched reports, for each line of a, whether turning a into b changes
// it: the line is deleted or replaced, or lines are inserted right before
// or after it. Read tracking asks it twice — which lines of the file
// changed since the model read it, and which lines an edit changes — and
// compares the answers.
func Touched(a, b []byte) []bool {
	al, bl := splitLines(string(a)), splitLines(string(b))
	out := make([]bool, len(al))
	ops := lineOps(al, bl)
	for n := 0; n < len(ops); n++ {
		o := ops[n]
		switch o.k {
		case del:
			out[o.i] = true
		case ins:
			// A run of insertions: beside a deletion it replaces the
			// deleted lines; alone it touches the lines around it.
			m := n
			for m < len(ops) && ops[m].k == ins {
				m++
			}
			replaces := n > 0 && ops[n-1].k == del || m < len(ops) && ops[m].k == del
			if !replaces {
				if o.i < len(al) {
					out[o.i] = true
				}
				if o.i > 0 {
					out[o.i-1] = true
				}
			}
			n = m - 1
		}
	}
	return out
}

// hunk is one change of a line diff: a[a0:a1] replaced by lines.
type hunk struct {
	a0, a1 int
	lines  []string
}

func hunksOf(a, b []string) []hunk {
	var out []hunk
	var cur *hunk
	for _, o := range lineOps(a, b) {
		if o.k == equal {
			cur = nil
			continue
		}
		if cur == nil {
			out = append(out, hunk{a0: o.i, a1: o.i})
			cur = &out[len(out)-1]
		}
		if o.k == del {
			cur.a1 = o.i + 1
		} else {
			cur.lines = append(cur.lines, b[o.j])
		}
	}
	return out
}

// Rebase applies the change that turns a into b to c, a version of a
// changed elsewhere: ok is false when the two changes touch the same lines
// of a, or lines next to each other.
func Rebase(a, b, c []byte) ([]byte, bool) {
	al := splitLines(string(a))
	h1, h2 := hunksOf(al, splitLines(string(b))), hunksOf(al, splitLines(string(c)))
	all := append(append([]hunk{}, h1...), h2...)
	sort.Slice(all, func(i, j int) bool { return all[i].a0 < all[j].a0 || all[i].a0 == all[j].a0 && all[i].a1 < all[j].a1 })
	var sb strings.Builder
	pos := 0
	for k, h := range all {
		if k > 0 && h.a0 <= all[k-1].a1 {
			return nil, false // overlapping or adjacent
		}
		for _, l := range al[pos:h.a0] {
			sb.WriteString(l)
		}
		for _, l := range h.lines {
			sb.WriteString(l)
		}
		pos = h.a1
	}
	for _, l := range al[pos:] {
		sb.WriteString(l)
	}
	return []byte(sb.String()), true
}

// File renders the change of one file git-style: "--- a/PATH" and
// "+++ b/PATH", "--- /dev/null" for a file the change creates (created),
// "+++ /dev/null" for one it removes (new nil and not created).
func File(name string, old, new []byte, created bool) string {
	oldName, newName := "a/"+name, "b/"+name
	if created {
		oldName = "/dev/null"
	}
	return Unified(oldName, newName, old, new)
}

// Deletion renders the removal of a file that held old.
func Deletion(name string, old []byte) string {
	return Unified("a/"+name, "/dev/null", old, nil)
}

// JSPatch is the change of the file at name as jsdiff's createPatch
// writes it (the reference MCP filesystem server's edit_file): "Index:",
// "--- NAME\toriginal", "+++ NAME\tmodified", 4 lines of context, every
// range as "l,n".
func JSPatch(name string, old, new []byte) string {
	return Write("Index: "+name+"\n===================================================================\n--- "+name+"\toriginal\n+++ "+name+"\tmodified\n",
		old, new, Style{Context: 4, Counts: true})
}

// Fenced is d in a Markdown "diff" code fence of backticks longer than any
// run in it.
func Fenced(d string) string {
	fence := "```"
	for strings.Contains(d, fence) {
		fence += "`"
	}
	return fence + "diff\n" + d + fence + "\n"
}
