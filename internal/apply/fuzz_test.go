package apply

import (
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// FuzzApplyChunks builds, from two texts, a patch in Codex's shape (chunks of
// context, removed and added lines from a line diff of the two) and checks
// that it turns the first text into the second, under hunk's rules and
// under --compat codex, or is refused — never a panic, never another text.
func FuzzApplyChunks(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", uint8(3))
	f.Add("x\ny\nx\ny\n", "x\ny\nx\nY\n", uint8(1))
	f.Add("one\r\ntwo\r\n", "one\r\n2\r\nthree\r\n", uint8(2))
	f.Add("no final", "no final\nnewline", uint8(0))
	f.Add("\ufeffbom\n", "\ufeffBOM\n", uint8(1))
	f.Add("", "new\n", uint8(3))
	f.Fuzz(func(t *testing.T, a, b string, ctx uint8) {
		if strings.ContainsAny(a+b, "\x00\r") || !validUTF8(a) || !validUTF8(b) {
			return // line endings other than LF are covered by the fixtures
		}
		if strings.HasPrefix(a, "\ufeff") != strings.HasPrefix(b, "\ufeff") {
			return
		}
		chunks := diffChunks(a, b, int(ctx%4))
		ownRefused := false
		for _, opt := range []Options{{}, {Compat: "codex"}} {
			got, err := ApplyChunks("f", []byte(a), chunks, opt)
			if err != nil {
				ownRefused = true
				continue // refusing is allowed (ambiguity)
			}
			if opt.codex() && ownRefused {
				// Where hunk refuses to guess, Codex takes the first match
				// — another place than the diff meant, by design: only its
				// exactness elsewhere is checked.
				continue
			}
			want := b
			if opt.codex() && want != "" && !strings.HasSuffix(want, "\n") && len(chunks) > 0 {
				want += "\n"
			}
			if !sameText(string(got), want, a) {
				t.Fatalf("compat=%q\na=%q\nb=%q\ngot=%q", opt.Compat, a, b, got)
			}
		}
	})
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// sameText compares results, allowing for what a Codex patch cannot say:
// whether the result ends with a newline when the original did not.
func sameText(got, want, orig string) bool {
	if got == want {
		return true
	}
	return strings.TrimSuffix(got, "\n") == strings.TrimSuffix(want, "\n")
}

// diffChunks makes the chunks of a patch turning a into b: an LCS line diff,
// with ctx lines of context around each change, anchored so that Codex's
// rules find it (context that fits elsewhere makes hunk refuse, which the
// fuzzer accepts).
func diffChunks(a, b string, ctx int) []*patchparse.Chunk {
	al, bl := lines(a), lines(b)
	// LCS table (inputs are small under fuzzing).
	if len(al)*len(bl) > 40000 {
		return nil
	}
	n, m := len(al), len(bl)
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else if dp[i+1][j] >= dp[i][j+1] {
				dp[i][j] = dp[i+1][j]
			} else {
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	type op struct {
		kind byte
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			ops = append(ops, op{' ', al[i]})
			i++
			j++
		case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
			ops = append(ops, op{'+', bl[j]})
			j++
		default:
			ops = append(ops, op{'-', al[i]})
			i++
		}
	}
	// One chunk for the whole file when there is any change: full context
	// keeps every chunk uniquely placed; ctx trims the edges.
	changed := false
	for _, o := range ops {
		if o.kind != ' ' {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	first, last := 0, len(ops)-1
	for first < len(ops) && ops[first].kind == ' ' {
		first++
	}
	for last >= 0 && ops[last].kind == ' ' {
		last--
	}
	lo, hi := first-ctx, last+ctx
	if lo < 0 || ctx == 3 {
		lo = 0
	}
	if hi >= len(ops) || ctx == 3 {
		hi = len(ops) - 1
	}
	// A chunk without old lines goes at the end of the file (Codex's
	// rule): give it a context line unless that is where it goes.
	hasOld := func() bool {
		for _, o := range ops[lo : hi+1] {
			if o.kind != '+' {
				return true
			}
		}
		return false
	}
	for !hasOld() && (lo > 0 || hi < len(ops)-1) {
		if hi < len(ops)-1 {
			hi++
		} else {
			lo--
		}
	}
	c := &patchparse.Chunk{Line: 1}
	var ls []patchparse.Line
	for _, o := range ops[lo : hi+1] {
		ls = append(ls, patchparse.Line{Op: o.kind, Text: o.text})
	}
	c.SetLines(ls)
	c.EndOfFile = hi == len(ops)-1
	return []*patchparse.Chunk{c}
}

func lines(s string) []string {
	s = strings.TrimPrefix(s, "\ufeff")
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// FuzzRecoverChunks perturbs the chunk of a patch turning a into b the ways
// models get chunks wrong — a context line left out, written twice,
// misremembered or elided as "...", the context's indentation drifted,
// several at once — and checks that hunk's recoveries never panic and,
// where the chunk spans a file of unique lines (so that its place and
// arrangement are certain) and does not, as perturbed, fit as it stands,
// give b or refuse.
func FuzzRecoverChunks(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n", uint8(3), uint8(7), uint8(1))
	f.Add("def f():\n    x = 1\n    y = 2\n    return x\n", "def f():\n    x = 1\n    z = 3\n    return x\n", uint8(3), uint8(2), uint8(0))
	f.Add("if a {\n\tb()\n}\nif a {\n\tc()\n}\n", "if a {\n\tb()\n}\nif a {\n\tC()\n}\n", uint8(1), uint8(5), uint8(2))
	f.Fuzz(func(t *testing.T, a, b string, ctx, kinds, at uint8) {
		if strings.ContainsAny(a+b, "\x00\r") || !validUTF8(a) || !validUTF8(b) || len(a) > 4000 {
			return
		}
		chunks := diffChunks(a, b, int(ctx%4))
		if len(chunks) == 0 {
			return
		}
		c := chunks[0]
		var ctxAt []int
		for i, l := range c.Lines() {
			if l.Op == ' ' {
				ctxAt = append(ctxAt, i)
			}
		}
		if len(ctxAt) == 0 {
			return
		}
		pick := func(k int) int { return ctxAt[(int(at)+k)%len(ctxAt)] }
		ls := c.TextLines()
		removes := false
		for _, l := range ls {
			removes = removes || l.Op == '-' && strings.TrimSpace(l.Text) != ""
		}
		if kinds&16 != 0 && removes {
			// Context indentation drifted, where a removed line shows
			// the added lines' frame (with none, the file's indentation
			// around the chunk decides: a reading, not a certainty).
			for i, l := range ls {
				if l.Op == ' ' && strings.TrimSpace(l.Text) != "" {
					ls[i].Text = "  " + l.Text
				}
			}
		}
		if kinds&4 != 0 { // misremembered
			i := pick(1)
			ls[i].Text += " // misremembered"
		}
		if kinds&8 != 0 { // elided
			ls[pick(2)].Text = "..."
		}
		if kinds&2 != 0 { // written twice
			i := pick(3)
			ls = append(ls[:i+1], ls[i:]...)
		}
		if kinds&1 != 0 { // left out, between two old lines (at an edge or
			// beside added lines it leaves the chunk another meaning)
			i := pick(0)
			if i > 0 && i+1 < len(ls) && ls[i].Op == ' ' && ls[i-1].Op != '+' && ls[i+1].Op != '+' {
				ls = append(ls[:i], ls[i+1:]...)
			}
		}
		p := &patchparse.Chunk{Line: 1, EndOfFile: c.EndOfFile}
		p.SetLines(ls)
		got, err := ApplyChunks("f", []byte(a), []*patchparse.Chunk{p}, Options{})
		if old := p.Old(); err != nil || ctx%4 != 3 || len(old) == 0 || strings.TrimSpace(old[len(old)-1]) == "" {
			// (A chunk with no old lines left is an addition at the end;
			// one ending in an empty line may mean the final newline.)
			return
		}
		// Where lines repeat (blank lines, "}"), a perturbed chunk can
		// mean another arrangement as well as the intended one; the
		// result is checked where every line of the file is unique.
		seen := map[string]bool{}
		for _, l := range lines(a) {
			if t := strings.TrimSpace(l); seen[t] {
				return
			} else {
				seen[t] = true
			}
		}
		if hits, _ := seekAll(lines(a), p.Old(), 0, len(lines(a)), p.EndOfFile); len(hits) > 0 {
			return // as perturbed, the chunk fits as it stands: that is its meaning
		}
		if !sameText(string(got), b, a) {
			t.Fatalf("WRONG result\na=%q\nb=%q\nchunk=%+v\ngot=%q", a, b, ls, got)
		}
	})
}
