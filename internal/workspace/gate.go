package workspace

import (
	"errors"
	"io/fs"
	"sort"
	"sync"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// The pre-commit seam: a change is first a plan — every file it touches,
// with its content's hash before and after — and the gate decides the plan
// before anything of it becomes visible. A plan is named by those hashes:
// a yes for it is void once any file differs. The real change proceeds only
// if, after the gate said yes, every file still has its planned hash.
//
// The gate looks only at changes whose paths it Wants (the path policy's
// write.ask rules); a change touching none commits as it would without it,
// hashing nothing more.

// PlanFile is one file of a plan: its hash before ("" absent) and after
// ("" removed). A link's hash is "link:" and its target; a directory's "dir".
type PlanFile struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// Plan is a change as the gate decides it: its files, sorted by path.
type Plan struct {
	Files []PlanFile
}

// Change is the file's change as a letter: A, M or D.
func (f PlanFile) Change() string {
	switch {
	case f.Old == "":
		return "A"
	case f.New == "":
		return "D"
	}
	return "M"
}

// Gate decides plans: Wants says which paths need it, Decide says yes (nil)
// or why not (the change is then not made).
type Gate struct {
	Wants  func(name string) bool
	Decide func(Plan) error
}

// SetGate makes every change through Disk pass g first (nil: none).
func (w *Workspace) SetGate(g *Gate) { w.gate = g }

// gated is an FS whose transactions and single changes pass the gate.
type gated struct {
	FS
	g *Gate
}

func (d *gated) Begin() Txn { return &gatedTxn{Txn: d.FS.Begin(), fs: d.FS, g: d.g} }

func (d *gated) WriteFile(name string, parts [][]byte, opt WriteOptions) error {
	if d.g.Wants(name) {
		if err := decide(d.FS, d.g, []PlanFile{{Path: name, New: history.HashParts(parts)}}); err != nil {
			return err
		}
	}
	return d.FS.WriteFile(name, parts, opt)
}

func (d *gated) Move(from, to string) error {
	if d.g.Wants(from) || d.g.Wants(to) {
		old, err := hashOf(d.FS, from)
		if err != nil {
			return err
		}
		if err := decide(d.FS, d.g, []PlanFile{{Path: from}, {Path: to, New: old}}); err != nil {
			return err
		}
	}
	return d.FS.Move(from, to)
}

// gatedTxn keeps what its transaction stages that the gate wants.
type gatedTxn struct {
	Txn
	fs    FS
	g     *Gate
	mu    sync.Mutex
	files []PlanFile
}

func (t *gatedTxn) want(name, hash string) {
	if t.g.Wants(name) {
		t.mu.Lock()
		t.files = append(t.files, PlanFile{Path: name, New: hash})
		t.mu.Unlock()
	}
}

func (t *gatedTxn) Stage(name string, data []byte, opt WriteOptions) error {
	if err := t.Txn.Stage(name, data, opt); err != nil {
		return err
	}
	t.want(name, history.Hash(data))
	return nil
}

func (t *gatedTxn) StageParts(name string, parts [][]byte, opt WriteOptions) error {
	if err := t.Txn.StageParts(name, parts, opt); err != nil {
		return err
	}
	t.want(name, history.HashParts(parts))
	return nil
}

func (t *gatedTxn) StageLink(name, target string) error {
	if err := t.Txn.StageLink(name, target); err != nil {
		return err
	}
	t.want(name, "link:"+target)
	return nil
}

func (t *gatedTxn) Remove(name string) error {
	if err := t.Txn.Remove(name); err != nil {
		return err
	}
	t.want(name, "")
	return nil
}

func (t *gatedTxn) Commit() error {
	if len(t.files) > 0 {
		if err := decide(t.fs, t.g, t.files); err != nil {
			t.Txn.Abort()
			return err
		}
	}
	return t.Txn.Commit()
}

// decide completes the plan of files (their hashes now), asks the gate,
// and after its yes checks that every file still has the hash planned.
func decide(f FS, g *Gate, files []PlanFile) error {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := range files {
		h, err := hashOf(f, files[i].Path)
		if err != nil {
			return err
		}
		files[i].Old = h
	}
	if err := g.Decide(Plan{Files: files}); err != nil {
		return err
	}
	for _, pf := range files {
		if h, err := hashOf(f, pf.Path); err != nil || h != pf.Old {
			return result.Errorf(result.Stale, "%s changed while the change was waiting for a yes; nothing was written", pf.Path).At(pf.Path).
				WithHint("read it again and make the change again")
		}
	}
	return nil
}

// hashOf is name's hash as a plan names it ("" absent).
func hashOf(f FS, name string) (string, error) {
	fi, err := f.Lstat(name)
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || result.As(err).Code == result.NotFound):
		return "", nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := f.Readlink(name)
		return "link:" + t, err
	case fi.IsDir():
		return "dir", nil
	}
	b, err := f.ReadFile(name)
	if err != nil {
		return "", err
	}
	return history.Hash(b), nil
}
