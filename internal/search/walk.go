package search

import (
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/hunk-dev/hunk/internal/glob"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// maxFiles bounds the files one search lists.
const maxFiles = 1 << 20

// walker lists the files a search reads, through the workspace's door:
// ReadDir leaves out what the path policy denies reading and hunk's own
// state, so neither is ever opened nor named.
type walker struct {
	ws      *workspace.Workspace
	b       *workspace.Batch // directories listed and ignore files read through it
	o       *Options
	types   typeFilter
	globs   []ignoreRule      // -g, as override rules: the last that matches decides
	include bool              // some -g includes: a file must match one
	emit    func(name string) // each file found, as it is found
	found   int
	skipped []string
	limits  []string           // what a bound left out (an ignore file's rules past its bound)
	seen    map[[2]uint64]bool // directories entered (links followed)
	inRepo  bool

	// Directories are listed on goroutines of their own, at most slots
	// at once; mu guards seen, skipped, found and emit.
	mu    sync.Mutex
	slots chan struct{}
	wg    sync.WaitGroup
}

// list returns the files o searches, in path order, what it could not
// list, and what a bound left out.
func list(ws *workspace.Workspace, b *workspace.Batch, o *Options) (files, skipped, limits []string, err error) {
	skipped, limits, err = walk(ws, b, o, func(name string) { files = append(files, name) })
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(files)
	return dedup(files), skipped, limits, nil
}

// walk gives emit each file o searches, as it finds them (not in order,
// a file named twice twice), and returns what it could not list.
func walk(ws *workspace.Workspace, b *workspace.Batch, o *Options, emit func(string)) (skipped, limits []string, err error) {
	tf, err := newTypeFilter(o.Types, o.TypesNot)
	if err != nil {
		return nil, nil, err
	}
	w := &walker{ws: ws, b: b, o: o, types: tf, seen: map[[2]uint64]bool{}, emit: emit, slots: make(chan struct{}, 2*runtime.GOMAXPROCS(0))}
	for _, g := range o.Globs {
		neg := strings.HasPrefix(g, "!")
		rules := parseIgnore([]byte(strings.Join(glob.Braces(strings.TrimPrefix(g, "!")), "\n")))
		for i := range rules {
			// An override glob includes what it matches; "!" excludes.
			rules[i].negate = !neg
			w.include = w.include || !neg
		}
		w.globs = append(w.globs, rules...)
	}
	_, err = ws.Lstat(".git")
	w.inRepo = err == nil
	roots := o.Paths
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var base *ignoreSet
	if !o.NoIgnore && w.inRepo {
		rs, note := readIgnore(ws.Open, ".git/info/exclude")
		if len(rs) > 0 {
			base = &ignoreSet{rules: rs}
		}
		if note != "" {
			w.limits = append(w.limits, ".git/info/exclude: "+note)
		}
	}
	for _, r := range roots {
		name, err := ws.Resolve(r)
		if err != nil {
			return nil, nil, err
		}
		fi, err := ws.Stat(name)
		if err != nil {
			if derr := ws.CheckRead(name); derr != nil {
				return nil, nil, derr // DENIED whether it is there or not, as read says: a denied path's existence does not show
			}
			return nil, nil, err
		}
		if !fi.IsDir() {
			// Named: searched whatever the filters say, refused as any
			// read of it is (the path policy).
			f, err := ws.Open(name)
			if err != nil {
				return nil, nil, err
			}
			f.Close()
			w.add(name)
			continue
		}
		set := base
		if !o.NoIgnore {
			set = w.ignoresAbove(name, base)
		}
		w.dir(name, set, fi)
	}
	w.wg.Wait()
	sort.Strings(w.limits) // found by walkers at once: said in one order
	return w.skipped, w.limits, nil
}

func (w *walker) add(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.found++
	w.emit(name)
}

// ignoresAbove are the ignore files of the directories from the root down
// to (not including) dir.
func (w *walker) ignoresAbove(dir string, set *ignoreSet) *ignoreSet {
	if dir == "." {
		return set
	}
	parts := strings.Split(dir, "/")
	cur := "."
	for _, p := range parts[:len(parts)-1] {
		set = w.ignores(cur, set)
		cur = path.Join(cur, p)
	}
	return w.ignores(cur, set)
}

// ignores adds dir's own ignore files to set.
func (w *walker) ignores(dir string, set *ignoreSet) *ignoreSet {
	var rules []ignoreRule
	names := []string{".ignore"}
	if w.inRepo {
		names = []string{".gitignore", ".ignore"} // .ignore wins over .gitignore
	}
	for _, n := range names {
		name := path.Join(dir, n)
		rs, note := readIgnore(w.b.Open, name)
		rules = append(rules, rs...)
		if note != "" {
			w.mu.Lock()
			w.limits = append(w.limits, name+": "+note)
			w.mu.Unlock()
		}
	}
	if len(rules) == 0 {
		return set
	}
	rel := dir
	if rel == "." {
		rel = ""
	}
	return &ignoreSet{parent: set, dir: rel, rules: rules}
}

// dir lists one directory, then those below it.
func (w *walker) dir(name string, set *ignoreSet, fi fs.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		w.mu.Lock()
		loop := w.seen[id] // a link back up
		w.seen[id] = true
		w.mu.Unlock()
		if loop {
			return
		}
	}
	ents, err := w.b.ReadDir(name)
	if err != nil {
		w.mu.Lock()
		w.skipped = append(w.skipped, name+": "+err.Error())
		w.mu.Unlock()
		return
	}
	if !w.o.NoIgnore {
		set = w.ignores(name, set)
	}
	for _, e := range ents {
		if w.full() {
			return
		}
		child := path.Join(name, e.Name())
		if e.Name() == ".git" || (!w.o.Hidden && strings.HasPrefix(e.Name(), ".")) {
			continue
		}
		isDir := e.IsDir()
		var cfi fs.FileInfo
		if e.Type()&fs.ModeSymlink != 0 {
			if !w.o.Follow {
				continue
			}
			if cfi, err = w.ws.Stat(child); err != nil {
				continue // a link out of the workspace, or broken
			}
			isDir = cfi.IsDir()
		} else if !isDir && !e.Type().IsRegular() {
			continue
		}
		if set != nil {
			if ignored, _ := set.decide(strings.TrimPrefix(child, "./"), isDir); ignored {
				continue
			}
		}
		if !w.passGlobs(child, isDir) {
			continue
		}
		if isDir {
			if cfi == nil {
				if cfi, err = e.Info(); err != nil {
					continue
				}
			}
			w.subdir(child, set, cfi)
			continue
		}
		if w.types.pass(child) {
			w.add(child)
		}
	}
}

// subdir lists a directory on a goroutine of its own when a slot is free,
// else on this one.
func (w *walker) subdir(name string, set *ignoreSet, fi fs.FileInfo) {
	select {
	case w.slots <- struct{}{}:
		w.wg.Add(1)
		go func() {
			defer func() { <-w.slots; w.wg.Done() }()
			w.dir(name, set, fi)
		}()
	default:
		w.dir(name, set, fi)
	}
}

func (w *walker) full() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.found >= maxFiles
}

// passGlobs applies -g: a directory is left out only by an excluding
// glob; a file must match an including one when there is one.
func (w *walker) passGlobs(name string, isDir bool) bool {
	if len(w.globs) == 0 {
		return true
	}
	s := &ignoreSet{rules: w.globs}
	excluded, matched := s.decide(strings.TrimPrefix(name, "./"), isDir)
	if isDir {
		return !matched || !excluded
	}
	if matched {
		return !excluded
	}
	return !w.include
}

func dedup(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
