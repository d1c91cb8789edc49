package apply

import (
	"bytes"

	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// AlreadyApplied reports whether every change of p is in fsys already: each
// added file is there with the patch's content, each deleted file is gone,
// and the updates undone (patchparse.Reverse) apply — every chunk found as
// the patch leaves it. The caller asks only after p itself failed to apply,
// so its chunks were not found as the patch expects them: applying it again
// is a no-op, not an error. fsys is not written.
func AlreadyApplied(fsys workspace.FS, p *patchparse.Patch, opt Options) bool {
	var updates []*patchparse.FileOp
	var crlf func(string) bool // read once for every Add of the patch
	if p.Format == patchparse.Unified {
		crlf = crlfNew(fsys)
	}
	for _, f := range p.Files {
		n, err := fsys.Resolve(f.Path)
		if err != nil {
			return false
		}
		switch f.Kind {
		case patchparse.Add:
			if !addApplied(fsys, n, f, crlf, opt) {
				return false
			}
		case patchparse.Delete:
			if _, err := fsys.Lstat(n); err == nil {
				return false
			}
		case patchparse.Update:
			if f.Gitlink {
				continue
			}
			if f.Binary != nil {
				data, err := fsys.ReadFile(n)
				if err != nil || f.NewHash == "" || checkBlob(n, data, f.NewHash, "", opt) != nil {
					return false
				}
				continue
			}
			if len(f.Chunks) == 0 {
				return false // a move or a mode change: nothing to find
			}
			for _, c := range f.Chunks {
				if len(c.New()) == 0 {
					// Lines removed with no context: the new side is
					// nothing, "found" anywhere — the change cannot be
					// seen to stand, so it is the normal refusal.
					return false
				}
			}
			updates = append(updates, f)
		}
	}
	if len(updates) == 0 {
		return true
	}
	rp, err := patchparse.Reverse(&patchparse.Patch{Format: p.Format, Files: updates})
	if err != nil {
		return false
	}
	// The exact pass alone: a recovery (a misremembered context line, a
	// composed reading) would find the new side where the patch did not
	// put it — a twin of it elsewhere — and say a change stands that does
	// not.
	// And an end of the file holds a chunk held there: the new side of a
	// chunk that ends the file, followed by other lines, is a twin.
	strict := opt
	strict.Strict, strict.held = true, true
	res, err := Apply(workspace.DryRun(fsys), rp, strict)
	if err != nil {
		return false
	}
	// Only where the patch left them, byte for byte: a chunk found by a
	// lenient pass or a recovery is in the file in another form, and the
	// patch is not what made it so.
	for _, f := range res.Files {
		for _, r := range f.Matches {
			if r != "exact" && r != "addition" && r != "binary" {
				return false
			}
		}
	}
	for i, f := range updates {
		if oldSideNear(fsys, f, rp.Files[i], strict) {
			return false
		}
	}
	return true
}

// oldSideNear reports whether a chunk's old side stands in the file, away
// from where its new side was found, with one context line lost, changed
// or gained: the change's own place, drifted since — its new side found
// only at a twin elsewhere (the function as it will read, copied), which
// is not the change made.
func oldSideNear(fsys workspace.FS, f, rf *patchparse.FileOp, opt Options) bool {
	n, err := fsys.Resolve(f.Path)
	if err != nil {
		return false
	}
	data, err := fsys.ReadFile(n)
	if err != nil {
		return false
	}
	t := textfile.FileText(data)
	lc := &locator{name: n, opt: opt, file: t.Lines, eols: t.EOLs}
	cursor, budget := 0, 1<<24
	var taken []span
	for k, c := range f.Chunks {
		q := prepare(rf.Chunks[k], k+1)
		m, err := lc.locateStrict(q, cursor, taken)
		if err != nil || m == nil {
			return false
		}
		at := span{m.pos, m.pos + len(q.old)}
		taken, cursor = append(taken, at), at.end
		p := prepare(c, k+1)
		if budget -= len(p.old) * len(lc.file); len(p.old) == 0 || budget < 0 {
			continue // (nothing to find; or too large to look for near places: a bound for the whole patch)
		}
		ctx := p.contextMask()
		for w := max(1, len(p.old)-1); w <= len(p.old)+1; w++ {
			for i := 0; i+w <= len(lc.file); i++ {
				if i < at.end && at.start < i+w {
					continue // where the new side stands
				}
				if lc.file[i] != p.old[0] && lc.file[i+w-1] != p.old[len(p.old)-1] {
					continue // (one line may differ: an end matches)
				}
				if within2(p.old, ctx, lc.file[i:i+w]) <= 1 {
					return true
				}
			}
		}
	}
	return false
}

// addApplied reports whether the file an Add makes is there as the patch
// makes it (a link with its target, a submodule's directory, a binary or a
// copy's content, a text file — with CRLF where the work tree writes new
// files so).
func addApplied(fsys workspace.FS, n string, f *patchparse.FileOp, crlf func(string) bool, opt Options) bool {
	want := addContent(f)
	switch {
	case f.Gitlink:
		if fi, err := fsys.Lstat(n); err != nil || !fi.IsDir() {
			return false
		}
		return true
	case f.Link:
		if t, err := fsys.Readlink(n); err != nil || t != string(want) {
			return false
		}
		return true
	}
	data, err := fsys.ReadFile(n)
	if err != nil {
		return false
	}
	switch {
	case f.Binary != nil && f.CopyFrom == "":
		want, err = f.Binary.Forward.Apply(nil)
	case f.CopyFrom != "":
		var src []byte
		if src, err = fsys.ReadFile(f.CopyFrom); err == nil {
			want, _, err = changeContent(n, src, f, opt, nil)
		}
	}
	if err == nil && !bytes.Equal(data, want) && crlf != nil && f.CopyFrom == "" && f.Binary == nil && crlf(n) {
		want = toCRLF(want) // as the work tree writes new files (core.autocrlf, eol=crlf)
	}
	if err != nil || !bytes.Equal(data, want) {
		return false
	}
	return true
}
