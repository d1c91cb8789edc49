package workspace

import (
	"bytes"
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
	// Before and After are the file's content now and as the change
	// leaves it (nil: absent, a link or a directory), for the person to
	// see the diff; never recorded.
	Before, After []byte `json:"-"`
}

// Plan is a change as the gate decides it: its files, sorted by path, and
// the call it is made for (nil: the gate's own way).
type Plan struct {
	Files []PlanFile
	Call  *CallGate
}

// CallGate is what one tool call brings to the gate: Ask puts a plan, as
// text (and the digest a yes covers), to the person through the call's client (nil: it cannot; an error
// with the code CONFIRMATION_REQUIRED: it could not), and Decided is told
// each decision made (hunk serve's access log; nil: none).
type CallGate struct {
	Ask     func(text, digest string) (bool, error)
	Decided func(history.Decision)
}

// Asking is f with its gated changes decided for call (f itself when it is
// not gated, or call is nil).
func Asking(f FS, call *CallGate) FS {
	if g, ok := f.(*gated); ok && call != nil {
		return &gated{FS: g.FS, g: g.g, ask: call}
	}
	return f
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
	g   *Gate
	ask *CallGate
}

func (d *gated) Begin() Txn { return &gatedTxn{Txn: d.FS.Begin(), fs: d.FS, g: d.g, ask: d.ask} }

func (d *gated) WriteFile(name string, parts [][]byte, opt WriteOptions) error {
	if d.g.Wants(name) {
		if err := decide(d.FS, d.g, d.ask, []PlanFile{{Path: name, New: history.HashParts(parts), After: bytes.Join(parts, nil)}}); err != nil {
			return err
		}
	}
	return d.FS.WriteFile(name, parts, opt)
}

func (d *gated) Move(from, to string) error {
	if d.g.Wants(from) || d.g.Wants(to) {
		old, data, err := contentOf(d.FS, from)
		if err != nil {
			return err
		}
		if err := decide(d.FS, d.g, d.ask, []PlanFile{{Path: from}, {Path: to, New: old, After: data}}); err != nil {
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
	ask   *CallGate
	mu    sync.Mutex
	files []PlanFile
}

func (t *gatedTxn) want(name, hash string, data []byte) {
	if t.g.Wants(name) {
		t.mu.Lock()
		t.files = append(t.files, PlanFile{Path: name, New: hash, After: data})
		t.mu.Unlock()
	}
}

func (t *gatedTxn) Stage(name string, data []byte, opt WriteOptions) error {
	if err := t.Txn.Stage(name, data, opt); err != nil {
		return err
	}
	t.want(name, history.Hash(data), data)
	return nil
}

func (t *gatedTxn) StageParts(name string, parts [][]byte, opt WriteOptions) error {
	if err := t.Txn.StageParts(name, parts, opt); err != nil {
		return err
	}
	t.want(name, history.HashParts(parts), bytes.Join(parts, nil))
	return nil
}

func (t *gatedTxn) StageLink(name, target string) error {
	if err := t.Txn.StageLink(name, target); err != nil {
		return err
	}
	t.want(name, "link:"+target, nil)
	return nil
}

func (t *gatedTxn) Remove(name string) error {
	if err := t.Txn.Remove(name); err != nil {
		return err
	}
	t.want(name, "", nil)
	return nil
}

func (t *gatedTxn) Commit() error {
	if len(t.files) > 0 {
		if err := decide(t.fs, t.g, t.ask, t.files); err != nil {
			t.Txn.Abort()
			return err
		}
	}
	return t.Txn.Commit()
}

// decide completes the plan of files (their hashes now), asks the gate,
// and after its yes checks that every file still has the hash planned.
func decide(f FS, g *Gate, ask *CallGate, files []PlanFile) error {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := range files {
		h, data, err := contentOf(f, files[i].Path)
		if err != nil {
			return err
		}
		files[i].Old, files[i].Before = h, data
	}
	if err := g.Decide(Plan{Files: files, Call: ask}); err != nil {
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
	h, _, err := contentOf(f, name)
	return h, err
}

// contentOf is name's hash as a plan names it ("" absent) and, for a
// regular file, its content.
func contentOf(f FS, name string) (string, []byte, error) {
	fi, err := f.Lstat(name)
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || result.As(err).Code == result.NotFound):
		return "", nil, nil
	case err != nil:
		return "", nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := f.Readlink(name)
		return "link:" + t, nil, err
	case fi.IsDir():
		return "dir", nil, nil
	}
	b, err := f.ReadFile(name)
	if err != nil {
		return "", nil, err
	}
	return history.Hash(b), b, nil
}
