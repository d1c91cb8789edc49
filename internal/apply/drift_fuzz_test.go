package apply

import (
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// FuzzDriftedPlace makes a unified diff's chunk turning a into b (as git
// writes one: a header with line numbers, ctx lines of context), drifts a
// the way work trees drift — a line inserted, removed or duplicated in or
// near the chunk, never a line it removes nor among the lines it adds —
// and checks the property every exit 0 must keep: where every line of a is
// unique (so that the chunk's place is certain), the result is b with the
// same drift — the chunk's whole new side, at the place it was meant —
// or the chunk is refused. Never another text, never a panic.
func FuzzDriftedPlace(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\n", "a\nb\nC\nd\ne\nf\n", uint8(3), uint8(0), uint8(2))
	f.Add("func a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n}\n", "func a() {\n\tx()\n}\n\nfunc b() {\n\tz()\n}\n", uint8(1), uint8(1), uint8(4))
	f.Add("one\ntwo\nthree\nfour\n", "one\ntwo\nthree\nfour\nfive\n", uint8(2), uint8(2), uint8(3))
	f.Add("p\nq\nr\ns\nt\n", "q\nr\ns\nt\n", uint8(0), uint8(0), uint8(0))
	f.Add("0\n\n", "\n1\n", uint8(1), uint8(0), uint8(1)) // an empty context line with lines added after it is no final newline
	f.Fuzz(func(t *testing.T, a, b string, ctx, kind, at uint8) {
		if strings.ContainsAny(a+b, "\x00\r") || !validUTF8(a) || !validUTF8(b) || len(a) > 4000 ||
			strings.HasPrefix(a, "\ufeff") || strings.HasPrefix(b, "\ufeff") ||
			a == "" || !strings.HasSuffix(a, "\n") || !strings.HasSuffix(b, "\n") {
			return
		}
		old, nw := lines(a), lines(b)
		seen := map[string]bool{}
		for _, l := range old {
			if t := strings.TrimSpace(l); seen[t] || strings.HasPrefix(t, "drift") {
				return
			} else {
				seen[t] = true
			}
		}
		c, img, added := unifiedChunk(old, nw, int(ctx%4))
		if c == nil || c.OldLines == 0 {
			return // (lines added with no line to find: their place is the header's number, which drift moves)
		}
		// The drift, at a line of the chunk or within three of it.
		from := max(0, c.OldStart-1-3)
		p := min(len(old), from+int(at)%(c.OldLines+7))
		var drifted, want []string
		pos := func(p int) int { // p's place in b, or -1
			switch {
			case added[p], p > 0 && p < len(old) && img[p-1] < 0 && img[p] < 0:
				return -1
			case p == len(old):
				return len(nw)
			case img[p] >= 0:
				return img[p]
			}
			for q := p - 1; q >= 0; q-- {
				if img[q] >= 0 {
					return img[q] + 1
				}
			}
			return 0
		}
		splice := func(ls []string, at, n int, add ...string) []string {
			out := append(append([]string{}, ls[:at]...), add...)
			return append(out, ls[at+n:]...)
		}
		switch kind % 3 {
		case 0: // a line inserted
			q := pos(p)
			if q < 0 {
				return
			}
			drifted, want = splice(old, p, 0, "drift: a line added since"), splice(nw, q, 0, "drift: a line added since")
		case 1: // a line removed
			if p >= len(old) || img[p] < 0 || (p+1 < len(old) && added[p] && added[p+1]) {
				return
			}
			drifted, want = splice(old, p, 1), splice(nw, img[p], 1)
		default: // a line duplicated
			if p >= len(old) || img[p] < 0 || added[p] || added[p+1] { // (lines added beside a line and its copy could go on either side of either)
				return
			}
			drifted, want = splice(old, p+1, 0, old[p]), splice(nw, img[p]+1, 0, old[p])
		}
		opt := Options{format: patchparse.Unified}
		text := func(ls []string) string {
			if len(ls) == 0 {
				return ""
			}
			return strings.Join(ls, "\n") + "\n"
		}
		got, err := ApplyChunks("f", []byte(text(drifted)), []*patchparse.Chunk{c}, opt)
		if err != nil {
			return // refusing is allowed
		}
		if w := text(want); string(got) != w {
			t.Fatalf("exit 0 with another text than meant\na=%q\nb=%q\ndrifted=%q\nchunk=%+v\nwant=%q\ngot=%q",
				a, b, drifted, c.TextLines(), w, got)
		}
	})
}

// unifiedChunk is the one chunk of a unified diff turning old into new
// (an LCS line diff, ctx lines of context, the header's numbers set), with
// where each old line stands in new (-1: removed) and at which old
// positions lines are added. nil when the texts are equal or too large.
func unifiedChunk(old, nw []string, ctx int) (*patchparse.Chunk, []int, []bool) {
	n, m := len(old), len(nw)
	if n*m > 40000 {
		return nil, nil, nil
	}
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case old[i] == nw[j]:
				dp[i][j] = dp[i+1][j+1] + 1
			case dp[i+1][j] >= dp[i][j+1]:
				dp[i][j] = dp[i+1][j]
			default:
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	type op struct {
		kind byte
		text string
		o, w int // the old and new line indexes before the op
	}
	var ops []op
	img, added := make([]int, n), make([]bool, n+1)
	for i, j := 0, 0; i < n || j < m; {
		switch {
		case i < n && j < m && old[i] == nw[j]:
			ops = append(ops, op{' ', old[i], i, j})
			img[i] = j
			i, j = i+1, j+1
		case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
			ops = append(ops, op{'+', nw[j], i, j})
			added[i] = true
			j++
		default:
			ops = append(ops, op{'-', old[i], i, j})
			img[i] = -1
			i++
		}
	}
	first, last := -1, -1
	for k, o := range ops {
		if o.kind != ' ' {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return nil, nil, nil
	}
	lo, hi := max(0, first-ctx), min(len(ops)-1, last+ctx)
	c := &patchparse.Chunk{Line: 1}
	var ls []patchparse.Line
	for _, o := range ops[lo : hi+1] {
		ls = append(ls, patchparse.Line{Op: o.kind, Text: o.text})
		switch o.kind {
		case ' ':
			c.OldLines++
			c.NewLines++
		case '-':
			c.OldLines++
		default:
			c.NewLines++
		}
	}
	c.SetLines(ls)
	c.OldStart, c.NewStart = ops[lo].o+1, ops[lo].w+1
	if c.OldLines == 0 { // "-5,0": after line 5
		c.OldStart--
	}
	if c.NewLines == 0 {
		c.NewStart--
	}
	return c, img, added
}
