package workspace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hunk-dev/hunk/internal/ownstate"
)

// A transaction's journal. A Txn keeps it from its first staged file until
// it has committed or rolled back, so that a hunk killed in the middle
// (kill -9, an OOM kill) leaves enough behind for the next hunk run in the
// workspace to undo what it had done and remove its temporary files. It
// lives in hunk's state directory, not in the workspace, where a sandboxed
// command could write one:
//
//	$XDG_STATE_HOME/hunk/journal/<sha256 of the workspace path, 16 hex digits>/PID-RANDOM.tmp
//
// (~/.local/state/hunk/…; a private directory of hunk's user, out of every
// sandbox's reach: sandbox.OwnState). Only where there is no such directory
// (no HOME, or one hunk cannot write) does it fall back to .hunk-txn/ in the
// workspace root, read with the checks below. Each line is one JSON entry,
// appended before the step it announces:
//
//	{"op":"stage","target":T,"tmp":P,"existed":true,"hash":H}  a staged file (H: its content's SHA-256 and length)
//	{"op":"remove","target":T}                                  a removal
//	{"op":"backup","target":T,"backup":B}                       T's old content goes to B
//	{"op":"mkdir","target":D}                                   D is made at commit, where a removed file stood
//	{"op":"committed"}                                          every step done; only clean-up left
//
// (a stage with "dir":true replaces a directory, put aside as its backup;
// a new file's P may wait in a directory above T's while T's directories
// are to be made.) Recovery (recoverJournals, at Begin) reads the journal
// of every hunk process that is gone: before "committed" it rolls every
// change back as a commit's rollback does, the writes first — a target
// holding the staged content (by hash) gets its old content back from the
// temporary file it was exchanged with or from its backup, a created file
// is removed, a directory put aside comes back — then the directories made
// at commit go (when empty), then a removed file comes back from its
// backup; after "committed" it only removes what is left of temporary
// files. Then the journal goes.
// A kill before the commit leaves only temporary files, which go too.

// journalDir holds the journals of the transactions running in the
// workspace (named PID-RANDOM.tmp); it exists only while one does, so that
// opening a workspace costs one lstat to know that nothing is to recover.
const journalDir = JournalDir

// JournalDir is the directory of the workspace root that holds the journal
// of a commit in progress (listings leave it out).
const JournalDir = ".hunk-txn"

type journal struct {
	mu sync.Mutex
	w  *Workspace
	f  *os.File
	// inState: f is in the state directory (w.stateJournal), not in the
	// workspace's journalDir.
	inState bool
}

// stateJournalDir is where the journals of the workspace at dir live in
// hunk's state directory (not made), or "" when there is no state
// directory: $XDG_STATE_HOME, else ~/.local/state.
func stateJournalDir(dir string) (base string, rel []string) {
	base = ownstate.StateBase(os.Getenv)
	if base == "" {
		return "", nil
	}
	sum := sha256.Sum256([]byte(dir))
	return base, []string{"hunk", "journal", fmt.Sprintf("%x", sum[:8])}
}

type journalEntry struct {
	Op         string `json:"op"`
	Target     string `json:"target,omitempty"`
	Tmp        string `json:"tmp,omitempty"`
	Backup     string `json:"backup,omitempty"`
	Existed    bool   `json:"existed,omitempty"`
	CreateOnly bool   `json:"createOnly,omitempty"`
	Link       bool   `json:"link,omitempty"` // Tmp is a symbolic link; Hash is its target's
	Dir        bool   `json:"dir,omitempty"`  // the staged file replaces a directory, its backup (phases.go)

	Hash string `json:"hash,omitempty"`
}

// log appends e, creating the journal on first use. A journal that cannot
// be written does not stop the transaction (it is a recovery aid).
func (j *journal) log(e journalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil && j.w.stateBase != "" {
		base := fmt.Sprintf("%d-%s%s", os.Getpid(), randHex(), TempSuffix)
		for try := 0; try < 3 && j.f == nil; try++ { // another transaction may remove the directory meanwhile
			d, err := PrivateDir(j.w.stateBase, j.w.stateRel...)
			if err != nil {
				break
			}
			if f, err := os.OpenFile(filepath.Join(d, base), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600); err == nil {
				j.f, j.inState = f, true
			}
		}
	}
	if j.f == nil {
		name := fmt.Sprintf("%s/%d-%s%s", journalDir, os.Getpid(), randHex(), TempSuffix)
		var f *os.File
		var err error
		for try := 0; try < 3; try++ { // another transaction may remove the directory meanwhile
			_ = j.w.mkdirIn(nil, journalDir)
			if f, err = j.w.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600); err == nil {
				break
			}
		}
		if err != nil {
			return
		}
		j.f = f
	}
	b, _ := json.Marshal(e)
	_, _ = j.f.Write(append(b, '\n'))
}

// close removes the journal: the transaction is over.
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	if j.inState {
		_ = os.Remove(j.f.Name())
		_ = os.Remove(filepath.Dir(j.f.Name())) // only when no other transaction runs
		j.f.Close()
		j.f, j.inState = nil, false
		return
	}
	name := journalDir + "/" + baseOf(j.f.Name())
	j.f.Close()
	j.f = nil
	_ = j.w.Remove(name)
	_ = j.w.Remove(journalDir) // only when no other transaction runs
}

func baseOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func randHex() string {
	t := TempName("x")
	return strings.TrimSuffix(strings.TrimPrefix(t, TempPrefix+"x."), TempSuffix)
}

// contentHash identifies staged content: SHA-256 (in hardware here) and
// the length. Recovery acts on a target only when it holds exactly the
// content the transaction staged — a cryptographic hash, so that content a
// sandboxed command made up cannot pass for it.
func contentHash(parts ...[]byte) string {
	sum, n := hashParts(parts)
	return fmt.Sprintf("%s-%d", sum, n)
}

// hashParts is the SHA-256 (hex) and length of parts joined.
func hashParts(parts [][]byte) (string, int) {
	h := sha256.New()
	n := 0
	for _, p := range parts {
		h.Write(p)
		n += len(p)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

// A journal in the workspace (the fallback, or one a sandboxed command
// planted there) must not make a later, unconfined hunk do anything the
// command could not do itself. So recovery checks every entry of every
// journal (in the state directory too) before it acts on any, and leaves a
// journal that fails a check alone (reported in Workspace.Refused, never
// acted on):
//   - the journal is a regular file of hunk's user, at most maxJournal bytes
//     (a planted 200 MB journal is not read);
//   - every name is local to the workspace, has no ".git" component, and
//     has no symbolic link in any component (host mode included);
//   - a temporary or backup name is one hunk makes for its target
//     (TempName: ".hunk-BASE.HEX.tmp" beside it);
//   - a target is renamed over or removed only when it holds, by SHA-256,
//     the content the transaction staged.
// What a planted journal can still do is what the command could do itself:
// put a ".hunk-….tmp" file it wrote over a file beside it that it could write.

// maxJournal bounds a journal recovery reads: far more than the entries of
// the largest transaction (a few hundred bytes per file).
const maxJournal = 64 << 20

// RecoverInterrupted undoes the transactions of hunk processes that died in
// the middle (see the top of this file), before anything reads the
// workspace. It costs two lstats when there is nothing to recover. It
// returns how many it recovered; journals it refused are in w.Refused.
func (w *Workspace) RecoverInterrupted() int {
	n := 0
	if w.stateBase != "" {
		dir := filepath.Join(append([]string{w.stateBase}, w.stateRel...)...)
		if _, err := os.Lstat(dir); err == nil {
			if real, err := PrivateDir(w.stateBase, w.stateRel...); err != nil {
				w.Refused = append(w.Refused, fmt.Sprintf("%s: %v; left alone", dir, err))
			} else if ents, err := os.ReadDir(real); err == nil {
				n += w.recoverAll(ents, func(b string) string { return filepath.Join(real, b) }, os.Lstat, os.ReadFile)
				_ = os.Remove(real) // only when empty
			}
		}
	}
	if _, err := w.Lstat(journalDir); err != nil {
		return n
	}
	if w.hasLink(journalDir) {
		w.Refused = append(w.Refused, journalDir+" is not a directory hunk made (a symbolic link); left alone")
		return n
	}
	if ents, err := w.ReadDir(journalDir); err == nil {
		n += w.recoverAll(ents, func(b string) string { return journalDir + "/" + b }, w.Lstat, w.ReadFile)
		_ = w.Remove(journalDir) // only when empty
	}
	return n
}

// recoverAll recovers the journals among ents of hunk processes that are
// gone, each named name(its base name) and read through lstat and read.
func (w *Workspace) recoverAll(ents []fs.DirEntry, name func(string) string, lstat func(string) (fs.FileInfo, error), read func(string) ([]byte, error)) int {
	n := 0
	for _, e := range ents {
		pidText, _, _ := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if err := w.recoverJournal(name(e.Name()), lstat, read); err != nil {
			w.Refused = append(w.Refused, fmt.Sprintf("%s: %v; left alone (remove it if no hunk was killed here)", name(e.Name()), err))
			continue
		}
		n++
	}
	return n
}

// hasLink reports whether any component of the local name p is a symbolic
// link (or cannot be looked at).
func (w *Workspace) hasLink(p string) bool {
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		fi, err := w.Lstat(p[:i])
		if err != nil {
			return !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) // a missing component (or one past a file) holds no link
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// checkEntry is the rule every entry of a journal must meet (above).
func checkEntry(e journalEntry) error {
	for _, p := range []string{e.Target, e.Tmp, e.Backup} {
		if !localName(p) {
			return fmt.Errorf("names %q, outside the workspace", p)
		}
		for _, c := range strings.Split(filepath.ToSlash(p), "/") {
			if strings.EqualFold(c, ".git") {
				return fmt.Errorf("names %q, inside a repository's .git", p)
			}
		}
	}
	if e.Op != "committed" && e.Target == "" {
		return fmt.Errorf("a %q entry without a target", e.Op)
	}
	for _, p := range []string{e.Tmp, e.Backup} {
		if p != "" && !isTempOf(p, e.Target) && !(p == e.Tmp && e.Op == "stage" && !e.Existed && waitsFor(p, e.Target)) {
			return fmt.Errorf("%q is not a temporary name hunk makes for %q", p, e.Target)
		}
	}
	return nil
}

// waitsFor reports whether tmp is a name laterTemp makes for a new file
// target: a temporary name for its base in a directory above its own.
func waitsFor(tmp, target string) bool {
	tdir, _ := splitName(tmp)
	dir, base := splitName(target)
	return tdir != dir && underDir(dir, tdir) && isTempOf(tmp, joinName(tdir, base))
}

// isTempOf reports whether tmp is a name TempName makes for target.
func isTempOf(tmp, target string) bool {
	tdir, tbase := splitName(tmp)
	dir, base := splitName(target)
	if tdir != dir || !IsTemp(tbase) {
		return false
	}
	mid := strings.TrimSuffix(strings.TrimPrefix(tbase, TempPrefix), TempSuffix)
	if rest, ok := strings.CutPrefix(mid, base+"."); ok {
		mid = rest
	}
	if len(mid) != 12 {
		return false
	}
	for _, c := range mid {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false // kill(0) and kill(-n) would ask about process groups
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

func (w *Workspace) recoverJournal(name string, lstat func(string) (fs.FileInfo, error), read func(string) ([]byte, error)) error {
	fi, err := lstat(name)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > maxJournal:
		return fmt.Errorf("%d bytes, larger than any transaction's journal", fi.Size())
	case !ownedByUs(fi):
		return errors.New("not owned by hunk's user")
	}
	data, err := read(name)
	if err != nil {
		return err
	}
	ops, backups, committed, err := parseJournal(data)
	if err != nil {
		return err
	}
	if err := w.checkJournalPaths(ops, backups); err != nil {
		return err
	}
	w.recoverSteps(ops, backups, committed)
	if filepath.IsAbs(name) {
		_ = os.Remove(name)
	} else {
		_ = w.Remove(name)
	}
	return nil
}

// recoverSteps rolls a journal's steps back, or (committed) removes what is
// left of its temporary files.
func (w *Workspace) recoverSteps(ops []journalEntry, backups map[string]string, committed bool) {
	exists := func(p string) bool { _, err := w.Lstat(p); return err == nil }
	holds := func(p, hash string, link bool) bool {
		fi, err := w.Lstat(p)
		if err != nil {
			return false
		}
		if link {
			t, err := w.Readlink(p)
			return err == nil && fi.Mode()&fs.ModeSymlink != 0 && contentHash([]byte(t)) == hash
		}
		if !fi.Mode().IsRegular() {
			return false
		}
		b, err := w.ReadFile(p)
		return err == nil && contentHash(b) == hash
	}
	for i := len(ops) - 1; i >= 0 && committed; i-- {
		e := ops[i]
		for _, p := range []string{e.Tmp, backups[e.Target]} {
			if p == "" || !exists(p) {
				continue
			}
			if e.Dir && p != e.Tmp {
				removeAside(w, p, 0)
			} else {
				_ = w.Remove(p)
			}
		}
	}
	if committed {
		return
	}
	// The writes, the directories made at commit, the removals: the
	// reverse of the commit's phases.
	for i := len(ops) - 1; i >= 0; i-- {
		if e := ops[i]; e.Op == "stage" {
			w.recoverStage(e, backups[e.Target], exists, holds)
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		if e := ops[i]; e.Op == "mkdir" {
			_ = w.RemoveEmptyDir(e.Target)
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		e := ops[i]
		if backup := backups[e.Target]; e.Op == "remove" && backup != "" && exists(backup) && !exists(e.Target) {
			_ = w.Rename(backup, e.Target)
		}
	}
}

// recoverStage rolls one staged file back.
func (w *Workspace) recoverStage(e journalEntry, backup string, exists func(string) bool, holds func(string, string, bool) bool) {
	switch {
	case e.Dir:
		if holds(e.Target, e.Hash, e.Link) {
			_ = w.Remove(e.Target)
		}
		if backup != "" && exists(backup) && !exists(e.Target) {
			_ = w.Rename(backup, e.Target)
		}
	case e.Existed && backup != "" && exists(backup):
		// No exchange on this filesystem: the old content was kept aside.
		_ = w.Rename(backup, e.Target)
	case e.Existed && exists(e.Tmp) && holds(e.Target, e.Hash, e.Link):
		// Exchanged: the temporary name holds the old content.
		_ = w.Rename(e.Tmp, e.Target)
	case !e.Existed && holds(e.Target, e.Hash, e.Link):
		_ = w.Remove(e.Target) // created by this transaction
	}
	if e.Tmp != "" && exists(e.Tmp) {
		_ = w.Remove(e.Tmp)
	}
}

// parseJournal reads a journal's steps: the stages and removals in order,
// each target's backup, and whether the transaction committed. A line the
// kill cut is left out (its step never started); an entry naming a path
// outside the workspace refuses the journal.
func parseJournal(data []byte) (ops []journalEntry, backups map[string]string, committed bool, err error) {
	backups = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if err := checkEntry(e); err != nil {
			return nil, nil, false, err
		}
		switch e.Op {
		case "stage", "remove", "mkdir":
			ops = append(ops, e)
		case "backup":
			backups[e.Target] = e.Backup
		case "committed":
			committed = true
		}
	}
	return ops, backups, committed, nil
}

// checkJournalPaths refuses a journal whose paths have a link on the way,
// or that the path policy denies writing: recovery writes on behalf of the
// command that runs now, so the journal waits for a run whose policy
// allows it (the transaction was allowed when it ran).
func (w *Workspace) checkJournalPaths(ops []journalEntry, backups map[string]string) error {
	for _, e := range ops {
		for _, p := range []string{e.Target, e.Tmp, backups[e.Target]} {
			if p != "" && w.hasLink(p) {
				return fmt.Errorf("%q has a symbolic link in its path", p)
			}
		}
	}
	for _, e := range ops {
		for _, p := range []string{e.Target, e.Tmp, backups[e.Target]} {
			if p == "" {
				continue
			}
			if err := w.CheckWrite(filepath.ToSlash(p)); err != nil {
				return fmt.Errorf("recovering it would write where the path policy denies it (%v); a hunk run whose policy allows it recovers it", err)
			}
		}
	}
	return nil
}

// localName reports whether p ("" allowed) names a path inside the
// workspace: relative, without "..".
func localName(p string) bool {
	return p == "" || filepath.IsLocal(p)
}
