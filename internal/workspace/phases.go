package workspace

// A file and a directory trading places in one transaction (git's diff of
// a directory replaced by a file, or of a file replaced by a directory):
// the commit runs in two phases, the removals first and then the writes,
// so that
//   - a file staged under a path where a file stands that the transaction
//     removes (x/y where x is a file) waits in the nearest directory, and
//     its directories are made at commit once x is gone (later);
//   - a file staged over a directory (WriteOptions.ReplaceDir) finds it
//     holding only the backups of the files the transaction removed from
//     it, and puts it aside whole, as that target's backup.
// A rollback undoes the writes, removes the directories made at commit,
// then brings the removed files back: the reverse of the phases.

import (
	"io/fs"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// checkLater refuses a staged file whose directories wait for a file to
// go that no removal of the transaction removes (a component of the path
// is not a directory, as without the transaction).
func (t *diskTxn) checkLater() error {
	removed := map[string]bool{}
	for _, op := range t.ops {
		if op.remove && !op.removeDir {
			removed[op.target] = true
		}
	}
	for _, op := range t.ops {
		if len(op.later) > 0 && !removed[op.later[0]] {
			return result.Errorf(result.NotFound, "%s: a component of the path is not a directory (%s is a file)", op.name, op.later[0])
		}
	}
	return nil
}

// makeLater makes op's waiting directories (those another step made are
// there already), each announced in the journal first and kept for the
// rollback.
func (t *diskTxn) makeLater(op *txnOp) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range op.later {
		if fi, err := t.b.Lstat(d); err == nil && fi.IsDir() {
			continue
		}
		t.log(journalEntry{Op: "mkdir", Target: d})
		err := t.w.mkdirIn(t.b.c, d)
		t.b.forget(d)
		if err != nil {
			return t.w.Error(d, err)
		}
		t.laterDirs = append(t.laterDirs, d)
	}
	return nil
}

// putDirAside moves the directory op replaces to a backup name beside it,
// when all it holds (at any depth) is hunk's temporary files — the
// backups of the files this transaction removed from it — and empty
// directories; anything else refuses the step, nothing moved.
func (t *diskTxn) putDirAside(op *txnOp) error {
	budget := 4*len(t.ops) + 64 // every entry is one of the transaction's backups, or a directory of them
	if other := t.onlyTemps(op.target, &budget); other != "" {
		return result.Errorf(result.IsDirectory, "%s: is a directory that holds %s, which the change does not remove", op.name, other)
	}
	aside := TempName(op.target)
	t.log(journalEntry{Op: "backup", Target: op.target, Backup: aside})
	if err := t.b.Rename(op.target, aside); err != nil {
		return t.w.Error(op.name, unwrapPath(err))
	}
	t.b.forget(op.target)
	t.mu.Lock()
	op.backup, t.asides = aside, true
	t.mu.Unlock()
	return nil
}

// onlyTemps is the first entry under dir that is neither one of hunk's
// temporary files nor a directory of them ("" when there is none); budget
// bounds the entries looked at.
func (t *diskTxn) onlyTemps(dir string, budget *int) string {
	ents, err := t.w.ReadDir(dir)
	if err != nil {
		return dir
	}
	for _, e := range ents {
		if *budget--; *budget < 0 {
			return dir + "/" + e.Name()
		}
		name := dir + "/" + e.Name()
		switch {
		case e.Type()&fs.ModeType == fs.ModeDir:
			if other := t.onlyTemps(name, budget); other != "" {
				return other
			}
		case !IsTemp(e.Name()):
			return name
		}
	}
	return ""
}

// removeAside removes a directory put aside and what it holds: hunk's
// temporary files and directories of them (anything else stays, and with
// it the directories holding it).
func removeAside(w *Workspace, dir string, depth int) {
	if depth > 64 {
		return
	}
	ents, err := w.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := dir + "/" + e.Name()
		switch {
		case e.Type()&fs.ModeType == fs.ModeDir:
			removeAside(w, name, depth+1)
		case IsTemp(e.Name()):
			_ = w.Remove(name)
		}
	}
	_ = w.RemoveEmptyDir(dir)
}

// laterTemp is where a file staged under directories made at commit
// waits meanwhile: a temporary name for it in wait, the nearest directory
// that exists.
func laterTemp(wait, target string) string {
	_, base := splitName(target)
	return TempName(joinName(wait, base))
}

// underDir reports whether the local name p lies in the directory dir or
// below it ("." holds every local name).
func underDir(p, dir string) bool {
	return dir == "." || strings.HasPrefix(p, dir+"/")
}

// backupNow is where op's backup is once the commit's steps are done: one
// in a directory put aside went with it.
func (t *diskTxn) backupNow(op *txnOp) string {
	if !t.asides || op.backup == "" {
		return op.backup
	}
	for _, o := range t.ops {
		if o.replaceDir && o.backup != "" && strings.HasPrefix(op.backup, o.target+"/") {
			return o.backup + op.backup[len(o.target):]
		}
	}
	return op.backup
}
