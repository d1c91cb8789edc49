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
	for _, o := range ops[lo : hi+1] {
		c.Lines = append(c.Lines, patchparse.ChunkLine{Op: o.kind, Text: o.text})
	}
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
