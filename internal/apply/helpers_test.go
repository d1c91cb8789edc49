package apply

import (
	"strconv"
	"strings"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// chunksOf reads the body of an Update File in Codex syntax — "@@",
// "@@ context", "@@ -a,b +c,d @@", " ", "+", "-" lines and "*** End of
// File" — into chunks. It is the tests' shorthand for building ASTs; the real
// parser is internal/patchparse.
func chunksOf(body string) []*patchparse.Chunk {
	var chunks []*patchparse.Chunk
	var cur *patchparse.Chunk
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	for i, l := range lines {
		n := i + 1
		switch {
		case strings.HasPrefix(l, "@@"):
			cur = &patchparse.Chunk{Line: n}
			rest := strings.TrimSpace(strings.TrimPrefix(l, "@@"))
			if strings.HasPrefix(rest, "-") && strings.HasSuffix(rest, "@@") {
				f := strings.Fields(strings.TrimSuffix(rest, "@@"))
				cur.OldStart, cur.OldLines = rng(f[0][1:])
				if len(f) > 1 {
					cur.NewStart, cur.NewLines = rng(f[1][1:])
				}
			} else {
				cur.Context = rest
			}
			chunks = append(chunks, cur)
		case l == "*** End of File":
			cur.EndOfFile = true
		default:
			if cur == nil {
				cur = &patchparse.Chunk{Line: n, NoHeader: true}
				chunks = append(chunks, cur)
			}
			op, text := byte(' '), ""
			if l != "" {
				op, text = l[0], l[1:]
			}
			cur.SetLines(append(cur.TextLines(), patchparse.Line{Op: op, Text: text, Line: int32(n)}))
		}
	}
	return chunks
}

func rng(s string) (int, int) {
	a, b, ok := strings.Cut(s, ",")
	x, _ := strconv.Atoi(a)
	if !ok {
		return x, 1
	}
	y, _ := strconv.Atoi(b)
	return x, y
}
