package apply

import (
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// FuzzTextRecoveries gives the text recoveries (a partial line, a
// wrapped line, repo-map marks) arbitrary files and blocks: never a
// panic; a block whose SEARCH text stands once inside the file's lines
// and nowhere as whole lines is that text replaced, or refused.
func FuzzTextRecoveries(f *testing.F) {
	f.Add("a = f(x, timeout=30)\nb = 2\n", "timeout=30", "timeout=60")
	f.Add("call(alpha, beta,\n     gamma)\nnext()\n", "call(alpha, beta, gamma)\nnext()", "call(alpha, beta, gamma, delta)\nnext()")
	f.Add("def f():\n    pass\n", "│def f():\n⋮...\n│    pass", "def f():\n    return 1")
	f.Add("x y\n\nz\n", "x y z", "x q z")
	f.Fuzz(func(t *testing.T, file, search, replace string) {
		if strings.Contains(search+replace, "SEARCH") || strings.Contains(search+replace, "REPLACE") || strings.Contains(search+replace, "=======") {
			return
		}
		p, err := patchparse.ParseBlocks("<<<<<<< SEARCH\n"+search+"\n=======\n"+replace+"\n>>>>>>> REPLACE\n", "f")
		if err != nil || len(p.Files) != 1 {
			return
		}
		got, rules, err := applyChunks("f", []byte(file), p.Files[0].Chunks, Options{})
		if err != nil || len(rules) != 1 || !strings.Contains(rules[0], "partial-line") {
			return
		}
		if strings.HasSuffix(file, "\n") && !strings.Contains(file, "\r") && strings.Count(file, search) == 1 {
			if want := strings.Replace(file, search, replace, 1); string(got) != want {
				t.Fatalf("partial-line: got %q, want %q", got, want)
			}
		}
	})
}
