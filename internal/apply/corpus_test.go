package apply_test

// The model-mistake corpus of issue 25: real Go, Python, JavaScript and C
// files (one in seven written with CRLF line endings) get 1-3 random edits,
// written as clean patches in Codex's format and as unified diffs, then
// carrying one, two or three of the mistakes models make — the generator's
// (robust_test.go) and those of a loose Codex envelope and of a file that
// changed since the model read it. Every patch goes through patchparse.Parse
// and apply.Apply on a real workspace, as `hunk apply-patch` runs it, and
// its result is compared with the intended file: right, refused or WRONG.
// Every clean patch must be right and no patch WRONG; the rates are the
// benchmark of bench/README.md (go test -run TestMistakeCorpus -v
// ./internal/apply; HUNK_ROBUST_SEED=N for another sample).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/hunk-dev/hunk/internal/apply"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

const (
	corpusGoFiles  = 40 // Go sources sampled from GOROOT/src
	corpusPerOther = 2  // changes per Python, JavaScript and C file
	corpusPairs    = 4  // combinations of two mistakes per change and format
	corpusTriples  = 10 // combinations of three
	corpusCRLF     = 7  // one change in corpusCRLF is made to a CRLF file
)

var corpusLangs = map[string]*lang{
	"python": {
		name:    "Python",
		comment: "#",
		isDef: func(l string) bool {
			t := strings.TrimSpace(l)
			return strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "class ")
		},
		newLine: func(ind string, n int, file string) string {
			return fmt.Sprintf("%sedit%d = %q + \"-\"  # 'new'", ind, n, file)
		},
	},
	"javascript": {
		name:    "JavaScript",
		comment: "//",
		isDef: func(l string) bool {
			t := strings.TrimSpace(l)
			return strings.HasPrefix(t, "function ") || strings.HasPrefix(t, "async function ") || strings.HasPrefix(t, "class ")
		},
		newLine: func(ind string, n int, file string) string {
			return fmt.Sprintf("%sconst edit%d = %q + '-' // 'new'", ind, n, file)
		},
	},
	"c": {
		name:    "C",
		comment: "//",
		isDef: func(l string) bool {
			return l != "" && strings.Contains(l, "(") && !strings.HasSuffix(l, ";") &&
				!strings.ContainsAny(l[:1], " \t#/*}{")
		},
		newLine: func(ind string, n int, file string) string {
			return fmt.Sprintf("%sint edit%d = 0; /* %s 'new' */", ind, n, file)
		},
	},
}

// corpusMistakes are the mistakes beyond the generator's: a loose Codex
// envelope (codex: Codex's format only), and a file changed since it was
// read (applied before any other, so that it can name the file line).
var corpusMistakes = []struct {
	mistake
	codex bool
}{
	{mistake{"end-patch-missing", false, func(rng *rand.Rand, f *form) bool {
		f.noEnd = true
		return true
	}}, true},
	{mistake{"prose-around", false, func(rng *rand.Rand, f *form) bool {
		f.prose = true
		return true
	}}, true},
	{mistake{"path-prefix", false, func(rng *rand.Rand, f *form) bool {
		f.pathPrefix = []string{"a/", "./"}[rng.IntN(2)]
		return true
	}}, true},
	{mistake{"new-side-elsewhere", false, func(rng *rand.Rand, f *form) bool {
		// The change's result stands elsewhere too (a twin of the
		// function as it will read): the patch is not "already applied".
		for _, h := range f.hunks {
			if h.eof {
				return false
			}
		}
		f.twin = 1 + rng.IntN(len(f.hunks))
		return true
	}}, false},
	{mistake{"file-changed", false, func(rng *rand.Rand, f *form) bool {
		// A context line with text, one of the file's: the person
		// (or a formatter) changed it after the model read it.
		h := &f.hunks[rng.IntN(len(f.hunks))]
		var at []int
		n := 0
		for _, l := range h.lines {
			if l[0] == ' ' && strings.TrimSpace(l[1:]) != "" {
				at = append(at, h.at+n)
			}
			if l[0] != '+' {
				n++
			}
		}
		if len(at) == 0 {
			return false
		}
		f.changed = at[rng.IntN(len(at))]
		return true
	}}, false},
}

// blockMistakes are the SEARCH/REPLACE blocks' own: their SEARCH lines
// copied with the line numbers a read tool prints (hunk read -n's
// "N<tab>", Claude Code's "     N→").
var blockMistakes = []mistake{
	{"numbered-lines", false, func(rng *rand.Rand, f *form) bool {
		f.numbered = []string{"%d\t", "%6d→"}[rng.IntN(2)]
		return true
	}},
}

// corpusSources returns the corpus's files: name -> content, and their
// languages.
func corpusSources(t *testing.T) ([]string, map[string]string, map[string]*lang) {
	names, files := sampleGoSources(t, corpusGoFiles)
	langs := map[string]*lang{}
	for _, n := range names {
		langs[n] = goLang
	}
	var dirs []string
	for d := range corpusLangs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join("testdata", "corpus", d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("testdata", "corpus", d, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			n := d + "/" + e.Name()
			names = append(names, n)
			files[n] = string(b)
			langs[n] = corpusLangs[d]
		}
	}
	return names, files, langs
}

func TestMistakeCorpus(t *testing.T) {
	names, sources, langs := corpusSources(t)
	seed := robustSeed()
	rng := rand.New(rand.NewPCG(seed, seed^0x25))
	ws, err := workspace.Open(t.TempDir(), workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	fsys := &captureFS{ws: ws, files: fstest.MapFS{}}

	rates := map[string]*tally{}
	get := func(key string) *tally {
		if rates[key] == nil {
			rates[key] = &tally{}
		}
		return rates[key]
	}
	run := func(c *change, f *form, clean bool, keys ...string) {
		got, want, err := fsys.outcome(c, f)
		for _, k := range keys {
			tl := get(k)
			switch {
			case err == errMoved && !clean:
				tl.moved++
				continue
			case err == nil && got == want:
				tl.exact++
			case err != nil:
				tl.refused++
			default:
				tl.wrong++
			}
			tl.n++
		}
		switch {
		case err == errMoved && !clean:
		case err != nil && clean:
			t.Errorf("%s: clean patch refused: %v\npatch:\n%s", c.name, err, f.render(c.name))
		case err == nil && got != want:
			if d := os.Getenv("HUNK_CORPUS_DUMP"); d != "" {
				os.WriteFile(filepath.Join(d, "patch"), []byte(f.render(c.name)), 0o644)
				os.WriteFile(filepath.Join(d, "file"), []byte(fsys.lastOld), 0o644)
			}
			t.Errorf("%s (%s; CRLF file %v, changed line %d): WRONG result\npatch:\n%s\ndiff of result vs intended:\n%s", c.name, strings.Join(keys, "; "), c.crlf, f.changed+1, f.render(c.name), lineDiff(want, got))
		case err == nil && got != fsys.lastOld:
			// Sent again to the file it made (a retry, a model repeating
			// itself), a block changes nothing: already applied, or
			// refused — never made twice.
			if again, ok := fsys.resend(c, f, got); ok && again != got {
				if d := os.Getenv("HUNK_CORPUS_DUMP"); d != "" {
					os.WriteFile(filepath.Join(d, "patch"), []byte(f.render(c.name)), 0o644)
					os.WriteFile(filepath.Join(d, "file"), []byte(got), 0o644)
				}
				t.Errorf("%s (%s): sent again, the patch changes the file it made\npatch:\n%s\ndiff of the second result vs the first:\n%s", c.name, strings.Join(keys, "; "), f.render(c.name), lineDiff(got, again))
			}
		case err != nil && os.Getenv("HUNK_ROBUST_SHOW") != "" && strings.Contains(keys[0], os.Getenv("HUNK_ROBUST_SHOW")):
			t.Logf("%s: %s refused: %v\npatch:\n%s", keys[0], c.name, err, f.render(c.name))
		}
	}

	// exercise runs a change's clean patch in one format and the patch
	// with each mistake, then with combinations of two and three.
	exercise := func(rng *rand.Rand, c *change, lg *lang, format string, clean *form, usable []mistake, first map[string]bool) {
		run(c, clean, true, format+" clean", format+" clean "+lg.name)
		for _, m := range usable {
			f := clean.clone()
			if m.fn(rng, f) {
				run(c, f, false, format+" "+m.name)
			}
		}
		for k := 0; k < corpusPairs+corpusTriples; k++ {
			n := 2
			if k >= corpusPairs {
				n = 3
			}
			var picked []mistake
			for _, i := range rng.Perm(len(usable)) {
				m := usable[i]
				var used []string
				for _, p := range picked {
					used = append(used, p.name)
				}
				if len(picked) < n && !conflicting(m.name, used) {
					picked = append(picked, m)
				}
			}
			// A changed file line is chosen on the clean chunk.
			sort.SliceStable(picked, func(a, b int) bool { return first[picked[a].name] && !first[picked[b].name] })
			f := clean.clone()
			var used []string
			for _, m := range picked {
				if m.fn(rng, f) {
					used = append(used, m.name)
				}
			}
			if len(used) < 2 {
				continue
			}
			keys := []string{fmt.Sprintf("%s %d mistakes", format, len(used)), fmt.Sprintf("%s %d mistakes, %s", format, len(used), lg.name)}
			for _, u := range used {
				keys = append(keys, fmt.Sprintf("%s %dx with %s", format, len(used), u))
			}
			run(c, f, false, keys...)
		}
	}
	rngBlocks := rand.New(rand.NewPCG(seed, seed^0x22))

	changes := 0
	for _, name := range names {
		lg := langs[name]
		times := 1
		if lg != goLang {
			times = corpusPerOther
		}
		for k := 0; k < times; k++ {
			c, ok := makeChange(rng, name, sources[name], lg)
			if !ok {
				continue
			}
			changes++
			c.crlf = changes%corpusCRLF == 0
			for _, unified := range []bool{false, true} {
				format := "codex"
				if unified {
					format = "unified"
				}
				clean := &form{unified: unified, hunks: c.hunks, comment: lg.comment, changed: -1}
				var usable []mistake
				first := map[string]bool{}
				for _, m := range mistakes {
					if !m.unified || unified {
						usable = append(usable, m)
					}
				}
				for _, m := range corpusMistakes {
					if !m.codex || !unified {
						usable = append(usable, m.mistake)
						first[m.name] = m.name == "file-changed"
					}
				}
				exercise(rng, c, lg, format, clean, usable, first)
			}
			// SEARCH/REPLACE blocks, on their own random numbers (the
			// figures of the two formats above stay as they were).
			blocks := &form{blocks: true, hunks: c.hunks, comment: lg.comment, changed: -1}
			var usable []mistake
			first := map[string]bool{}
			for _, m := range mistakes {
				if !m.unified {
					usable = append(usable, m)
				}
			}
			for _, m := range corpusMistakes {
				if m.name == "prose-around" || m.name == "file-changed" {
					usable = append(usable, m.mistake)
					first[m.name] = m.name == "file-changed"
				}
			}
			usable = append(usable, blockMistakes...)
			exercise(rngBlocks, c, lg, "blocks", blocks, usable, first)
		}
	}
	t.Log(rateTable(fmt.Sprintf("mistake corpus: %d changes to Go, Python, JavaScript and C files, one in %d CRLF (seed %d):", changes, corpusCRLF, seed), rates))
}

// captureFS is the corpus's workspace, in memory: its files (regular, no
// links) read from a map, its writes kept, not made — what apply-patch
// would write, file by file. Names are resolved and errors typed by a real
// (empty) workspace, as apply-patch's are; no patch touches the disk.
type captureFS struct {
	ws      *workspace.Workspace
	files   fstest.MapFS
	mu      sync.Mutex // a Txn's stages come from several workers
	out     map[string][]byte
	lastOld string
}

// pathErr is err on name as the workspace says it (not found: NOT_FOUND).
func (c *captureFS) pathErr(op, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		err = syscall.ENOENT
	}
	return c.ws.Error(name, &fs.PathError{Op: op, Path: name, Err: err})
}

func (c *captureFS) Resolve(p string) (string, error)      { return c.ws.Resolve(p) }
func (c *captureFS) Stat(name string) (fs.FileInfo, error) { return c.Lstat(name) }
func (c *captureFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(c.files, name)
	if err != nil {
		return nil, c.pathErr("lstat", name, err)
	}
	return fi, nil
}
func (c *captureFS) FollowLinks(name string) (string, error) { return name, nil }
func (c *captureFS) Readlink(name string) (string, error) {
	return "", c.pathErr("readlink", name, syscall.EINVAL)
}
func (c *captureFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(c.files, name)
	if err != nil {
		return nil, c.pathErr("readdir", name, err)
	}
	return ents, nil
}
func (c *captureFS) Open(name string) (*os.File, error) {
	return nil, c.pathErr("open", name, errors.ErrUnsupported)
}
func (c *captureFS) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(c.files, name)
	if err != nil {
		return nil, c.pathErr("open", name, err)
	}
	return b, nil
}
func (c *captureFS) Lock(...string) (func(), error)          { return func() {}, nil }
func (c *captureFS) DidYouMean(name string, err error) error { return c.ws.DidYouMean(name, err) }
func (c *captureFS) CheckWrite(string) error                 { return nil }
func (c *captureFS) Begin() workspace.Txn                    { return &captureTxn{c} }
func (c *captureFS) MkdirAll(string) error                   { return nil }
func (c *captureFS) Move(from, to string) error {
	return c.pathErr("rename", from, errors.ErrUnsupported)
}
func (c *captureFS) RemoveEmptyDirs([]string) ([]string, error) { return nil, nil }
func (c *captureFS) Done()                                      {}

func (c *captureFS) WriteFile(name string, parts [][]byte, _ workspace.WriteOptions) error {
	c.out[name] = bytes.Join(parts, nil)
	return nil
}

type captureTxn struct{ c *captureFS }

func (x *captureTxn) Stage(name string, data []byte, _ workspace.WriteOptions) error {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	x.c.out[name] = bytes.Clone(data)
	return nil
}
func (x *captureTxn) StageParts(name string, parts [][]byte, opt workspace.WriteOptions) error {
	return x.Stage(name, bytes.Join(parts, nil), opt)
}
func (*captureTxn) StageLink(string, string) error { return nil }
func (*captureTxn) Mkdir(string) error             { return nil }
func (*captureTxn) Remove(string) error            { return nil }
func (*captureTxn) RemoveDir(string) error         { return nil }
func (*captureTxn) PruneEmptyDirs()                {}
func (*captureTxn) Commit() error                  { return nil }
func (*captureTxn) Abort()                         {}

// resend applies the patch again to the file it made (content): what
// apply-patch would write, and whether it applied.
func (c *captureFS) resend(ch *change, f *form, content string) (string, bool) {
	c.files[ch.name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	pt, err := patchparse.Parse(f.render(ch.name), patchparse.Options{Strip: patchparse.DefaultStrip})
	if err != nil {
		return "", false
	}
	c.out = map[string][]byte{}
	if _, err := apply.Apply(c, pt, apply.Options{}); err != nil {
		return "", false
	}
	if b, ok := c.out[ch.name]; ok {
		return string(b), true
	}
	return content, true
}

// outcome writes the change's file as the workspace has it (with a changed
// line, with CRLF endings), applies the patch as apply-patch does, and
// returns what apply-patch would write and what was intended.
func (c *captureFS) outcome(ch *change, f *form) (got, want string, err error) {
	old, want := ch.old, ch.new
	lines := ch.lines
	if f.changed >= 0 || f.twin > 0 {
		lines = append([]string(nil), ch.lines...)
		if f.changed >= 0 {
			lines[f.changed] += " " + ch.lang.comment + " changed"
		}
		if f.twin > 0 {
			lines = append(lines, "")
			for _, l := range ch.hunks[f.twin-1].lines {
				if l[0] != '-' {
					lines = append(lines, l[1:])
				}
			}
		}
		old, want = strings.Join(lines, "\n")+"\n", applyEdits(lines, ch.edits)
	}
	if ch.crlf {
		old, want = strings.ReplaceAll(old, "\n", "\r\n"), strings.ReplaceAll(want, "\n", "\r\n")
	}
	c.lastOld = old
	c.files[ch.name] = &fstest.MapFile{Data: []byte(old), Mode: 0o644}
	text := f.render(ch.name)
	pt, err := patchparse.Parse(text, patchparse.Options{Strip: patchparse.DefaultStrip})
	if err != nil {
		return "", want, err
	}
	if len(pt.Files) == 1 && len(pt.Files[0].Chunks) == len(f.hunks) && movedChunk(lines, pt.Files[0].Chunks, f) {
		return "", want, errMoved
	}
	c.out = map[string][]byte{}
	if _, err := apply.Apply(c, pt, apply.Options{}); err != nil {
		code := result.As(err).Code // (as apply-patch asks: ops.applyParsed)
		if old != want && (code == result.NoMatch || code == result.AlreadyExists) && apply.AlreadyApplied(c, pt, apply.Options{}) {
			// What apply-patch asks next: the change is not in the
			// file, and "already applied" would be a success that lies.
			return old, want, nil
		}
		return "", want, err
	}
	b, ok := c.out[ch.name]
	if !ok {
		return "", want, fmt.Errorf("nothing written to %s (wrote %d files)", ch.name, len(c.out))
	}
	return string(b), want, nil
}
