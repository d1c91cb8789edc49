// Package placeholder finds the placeholders models write instead of code they
// leave out — "// ... existing code ...", "# ... rest of the file ...",
// "<!-- ... -->" — so that an edit holding one in place of real lines is
// refused (LAZY_EDIT) rather than written over them.
package placeholder

import (
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
)

// Find returns the index of the first line of new that is a placeholder
// comment standing for lines of old that new leaves out, and -1 when there
// is none: the comment must be new (not a line old has), and old must have
// lines new does not. Comments are read in the syntax of the file's
// language, by its name (any of them for a name hunk does not know).
func Find(name string, old, new []string) int {
	markers := commentMarkers(name)
	var cands []int // placeholder lines of new (most changes have none)
	for i, l := range new {
		if isPlaceholder(strings.TrimSpace(l), markers) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return -1
	}
	had := make(map[string]int, len(old))
	for _, l := range old {
		had[strings.TrimSpace(l)]++
	}
	at := -1
	for _, i := range cands {
		if had[strings.TrimSpace(new[i])] == 0 {
			at = i
			break
		}
	}
	if at < 0 {
		return -1
	}
	for _, l := range new {
		had[strings.TrimSpace(l)]--
	}
	for t, n := range had {
		if n > 0 && t != "" {
			return at // a line of old that new leaves out
		}
	}
	return -1
}

// Has reports whether some line of text is a placeholder comment at all
// (a cheap look, line by line without splitting, before reading what the
// text would replace).
func Has(name, text string) bool {
	markers := commentMarkers(name)
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if isPlaceholder(strings.TrimSpace(line), markers) {
			return true
		}
	}
	return false
}

// comment syntaxes: a line comment marker, or an opening and closing pair.
type marker struct{ open, close string }

var (
	slashes = []marker{{"//", ""}, {"/*", "*/"}, {"{/*", "*/}"}, {"*", ""}}
	hashes  = []marker{{"#", ""}}
	markup  = []marker{{"<!--", "-->"}}
	dashes  = []marker{{"--", ""}}
	semis   = []marker{{";", ""}}
	percent = []marker{{"%", ""}}
)

// byExt are the comment syntaxes of the languages hunk knows by extension
// (made when first needed: hunk starts once per call).
var byExt = sync.OnceValue(func() map[string][]marker {
	return map[string][]marker{
		".go": slashes, ".js": slashes, ".jsx": append(append([]marker{}, slashes...), markup...), ".ts": slashes, ".tsx": append(append([]marker{}, slashes...), markup...),
		".mjs": slashes, ".cjs": slashes, ".java": slashes, ".kt": slashes, ".kts": slashes, ".scala": slashes, ".swift": slashes,
		".c": slashes, ".h": slashes, ".cc": slashes, ".cpp": slashes, ".cxx": slashes, ".hpp": slashes, ".cs": slashes, ".m": slashes,
		".rs": slashes, ".dart": slashes, ".php": append(append([]marker{}, slashes...), hashes...), ".css": slashes, ".scss": slashes, ".less": slashes,
		".zig": slashes, ".proto": slashes, ".groovy": slashes, ".gradle": slashes, ".vue": append(append([]marker{}, slashes...), markup...), ".svelte": append(append([]marker{}, slashes...), markup...),
		".py": hashes, ".rb": hashes, ".sh": hashes, ".bash": hashes, ".zsh": hashes, ".fish": hashes, ".pl": hashes, ".r": hashes,
		".yaml": hashes, ".yml": hashes, ".toml": hashes, ".ini": append(append([]marker{}, hashes...), semis...), ".cfg": hashes, ".conf": hashes,
		".mk": hashes, ".cmake": hashes, ".nix": hashes, ".ex": hashes, ".exs": hashes, ".jl": hashes, ".tf": append(append([]marker{}, hashes...), slashes...),
		".html": markup, ".htm": markup, ".xml": markup, ".md": markup, ".svg": markup,
		".sql": dashes, ".lua": dashes, ".hs": dashes, ".elm": dashes, ".ada": dashes,
		".lisp": semis, ".clj": semis, ".el": semis, ".scm": semis, ".asm": semis,
		".tex": percent, ".erl": percent, ".m4": percent,
	}
})

// byName are the syntaxes of files known by their whole name.
var byName = map[string][]marker{"Makefile": hashes, "Dockerfile": hashes, "Gemfile": hashes, "Rakefile": hashes, "CMakeLists.txt": hashes, "BUILD": hashes}

func commentMarkers(name string) []marker {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if m, ok := byName[base]; ok {
		return m
	}
	if m, ok := byExt()[strings.ToLower(path.Ext(base))]; ok {
		return m
	}
	var all []marker
	for _, m := range [][]marker{slashes, hashes, markup, dashes} {
		all = append(all, m...)
	}
	return all
}

// isPlaceholder reports whether the trimmed line t is a comment (in one of
// the markers' syntaxes) that stands for code left out: "...", "…", or a
// phrase like "existing code", "rest of the file", "unchanged".
func isPlaceholder(t string, markers []marker) bool {
	for _, m := range markers {
		body, ok := strings.CutPrefix(t, m.open)
		if !ok {
			continue
		}
		if m.close != "" {
			if body, ok = strings.CutSuffix(body, m.close); !ok {
				continue
			}
		}
		if elision(strings.TrimSpace(body)) {
			return true
		}
	}
	return false
}

// elision reports whether a comment's text stands for code left out.
func elision(body string) bool {
	lead := strings.HasPrefix(body, "...") || strings.HasPrefix(body, "…")
	trail := strings.HasSuffix(body, "...") || strings.HasSuffix(body, "…")
	dots := lead || trail
	if !dots && ascii(body) {
		// Most comments of a diff: what follows, without lowering a copy.
		b := strings.Trim(body, ".… \t[]()")
		return b != "" && opens(b)
	}
	b := strings.Trim(strings.ToLower(body), ".… \t[]()")
	if b == "" {
		return dots // "// ...", "# …"
	}
	if lead && trail && len(b) <= 60 {
		return true // "// ... anything short ..."
	}
	if dots && slices.ContainsFunc(phrases, func(phrase string) bool { return strings.Contains(b, phrase) }) {
		return true // "// ... existing code here ..."
	}
	return opens(b)
}

// opens reports whether comment b (lowered, or ASCII and compared as
// lowered) opens with a placeholder's phrase and is short: "// rest of the
// code remains the same", not "// the rest of the loop retries".
func opens(b string) bool {
	lead3 := b
	for _, w := range []string{"the ", "all "} {
		if hasLowerPrefix(lead3, w) {
			lead3 = lead3[len(w):]
		}
	}
	if hasLowerPrefix(b, "the rest") {
		return false
	}
	for _, phrase := range phrases {
		if len(lead3) <= len(phrase)+30 && hasLowerPrefix(lead3, phrase) {
			return true
		}
	}
	return false
}

// hasLowerPrefix reports whether ASCII s lowered begins with lower-case p.
func hasLowerPrefix(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return false
		}
	}
	return true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// phrases are what models write in a placeholder comment.
var phrases = []string{
	"existing code", "existing implementation", "existing imports", "existing methods", "existing functions",
	"rest of the", "rest of file", "unchanged", "rest of the code", "rest of code", "rest of the function", "rest of the class",
	"rest of the method", "rest of the component", "rest of the implementation", "rest of the module",
	"remains unchanged", "remain unchanged", "remains the same", "remain the same", "unchanged code", "code unchanged",
	"other code", "previous code", "same as before", "keep existing", "keep the rest", "omitted for brevity", "truncated for brevity",
}

// refusal is the refusal of a placeholder comment written where the new
// text leaves out lines of the old (LAZY_EDIT); where names the line.
func refusal(path, where, text string) *result.Error {
	return result.Errorf(result.LazyEdit, "%s: %s is a placeholder (%q) standing for lines the change leaves out; nothing was written",
		path, where, strings.TrimSpace(text)).
		WithHint("write out the lines the placeholder stands for (a change holds only the lines it changes, with a few around them), or pass --allow-placeholders if the comment is meant to be in the file").
		At(path)
}

// InPatch refuses a patch whose chunk writes a placeholder in place of
// lines it removes — but in a file trusted says is git's own diff of the
// file as it is (asked only of a file with such a chunk).
func InPatch(p *patchparse.Patch, trusted func(*patchparse.FileOp) bool) error {
	for i, cs := range suspects(p) {
		f := p.Files[i]
		asked, trust := false, false
		for _, c := range cs {
			k := Find(f.Path, c.Old(), c.New())
			if k >= 0 && !asked && trusted != nil {
				asked, trust = true, trusted(f) // (it reads the file: once)
			}
			if k < 0 || trust {
				continue
			}
			n := -1
			for l := range c.All() {
				if l.Op == '-' {
					continue
				}
				if n++; n == k {
					return refusal(f.Path, "an added line", c.Text(l)).AtLine(int(l.Line))
				}
			}
		}
	}
	return nil
}

// suspects are, for each file of p, its chunks that keep or add a line
// that reads as a placeholder comment: most chunks have none, and a big
// patch's files are looked at by as many goroutines as there are
// processors.
func suspects(p *patchparse.Patch) [][]*patchparse.Chunk {
	out := make([][]*patchparse.Chunk, len(p.Files))
	look := func(i int) {
		f := p.Files[i]
		markers := commentMarkers(f.Path)
		for _, c := range f.Chunks {
			if c.Any(func(l patchparse.ChunkLine) bool {
				return l.Op != '-' && isPlaceholder(strings.TrimSpace(c.Text(l)), markers)
			}) {
				out[i] = append(out[i], c)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(p.Files)/64+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(p.Files); i = int(next.Add(1) - 1) {
				look(i)
			}
		})
	}
	wg.Wait()
	return out
}

// InText refuses new text (an edit's, or a file's whole content
// over an existing one) that holds a placeholder in place of lines of old.
func InText(path, what, old, new string) error {
	nl := strings.Split(strings.ReplaceAll(new, "\r\n", "\n"), "\n")
	if i := Find(path, strings.Split(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), nl); i >= 0 {
		return refusal(path, fmt.Sprintf("line %d of %s", i+1, what), nl[i])
	}
	return nil
}

// AtEdges handles the placeholders a SEARCH/REPLACE block writes beside
// the lines it adds while it removes none (InPatch refuses the others):
// "# ... existing code ..." as the first or last line of a REPLACE text
// that keeps its whole SEARCH stands for the file around the change, as
// the model meant it, and is dropped (said in the notes); one between
// added lines stands for nothing the block holds and is refused
// (LAZY_EDIT). A line the SEARCH has is text. Other formats' added lines
// are as the patch writes them.
func AtEdges(p *patchparse.Patch) (notes []string, err error) {
	if !p.Format.Blocks() {
		return nil, nil
	}
	for _, f := range p.Files {
		for _, c := range f.Chunks {
			lines, dropped, err := edges(f.Path, c.TextLines())
			if err != nil {
				return nil, err
			}
			if len(dropped) > 0 {
				c.SetLines(lines)
			}
			for i := range c.Splits {
				if c.Splits[i].Lines, _, err = edges(f.Path, c.Splits[i].Lines); err != nil {
					return nil, err
				}
			}
			for _, l := range dropped {
				notes = append(notes, fmt.Sprintf("left out the placeholder %q (patch line %d) standing for the file's lines around the block", strings.TrimSpace(l.Text), l.Line))
			}
		}
	}
	return notes, nil
}

// edges is AtEdges for one chunk's lines: the lines kept, and those
// dropped.
func edges(name string, lines []patchparse.Line) (kept, dropped []patchparse.Line, err error) {
	markers := commentMarkers(name)
	old := map[string]bool{}
	var added []int // indexes of added placeholders
	for _, l := range lines {
		switch l.Op {
		case '-':
			return lines, nil, nil // it removes lines: InPatch's rule
		case ' ':
			old[strings.TrimSpace(l.Text)] = true
		}
	}
	for i, l := range lines {
		if l.Op == '+' && isPlaceholder(strings.TrimSpace(l.Text), markers) && !old[strings.TrimSpace(l.Text)] {
			added = append(added, i)
		}
	}
	if len(added) == 0 || len(old) == 0 {
		return lines, nil, nil // no placeholder, or a new file's whole text
	}
	for _, i := range added {
		if i != 0 && i != len(lines)-1 { // (every line is new text: none removed)
			return nil, nil, result.Errorf(result.LazyEdit, "%s: an added line is a placeholder (%q) between lines the block adds, standing for lines it does not hold; nothing was written",
				name, strings.TrimSpace(lines[i].Text)).
				WithHint("write out the lines it stands for, or leave it out (pass --allow-placeholders if the comment is meant to be in the file)").
				At(name).AtLine(int(lines[i].Line))
		}
	}
	kept = make([]patchparse.Line, 0, len(lines))
	for i, l := range lines {
		if slices.Contains(added, i) {
			dropped = append(dropped, l)
			continue
		}
		kept = append(kept, l)
	}
	return kept, dropped, nil
}
