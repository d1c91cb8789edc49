package workspace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A transaction's journal. A Txn keeps it beside itself, in the workspace
// root, from its first staged file until it has committed or rolled back, so
// that a hunk killed in the middle (kill -9, an OOM kill) leaves enough
// behind for the next transaction in the workspace to undo what it had done
// and remove its temporary files. Each line is one JSON entry, appended
// before the step it announces:
//
//	{"op":"stage","target":T,"tmp":P,"existed":true,"hash":H}  a staged file (H: its content's CRC-32C and length)
//	{"op":"remove","target":T}                                  a removal
//	{"op":"backup","target":T,"backup":B}                       T's old content goes to B
//	{"op":"committed"}                                          every step done; only clean-up left
//
// Recovery (recoverJournals, at Begin) reads the journal of every hunk
// process that is gone: before "committed" it rolls every change back — a
// target holding the staged content (by hash) gets its old content back from
// the temporary file it was exchanged with or from its backup, a created file
// is removed, a removed file comes back from its backup; after "committed" it
// only removes what is left of temporary files. Then the journal goes.
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
}

type journalEntry struct {
	Op         string `json:"op"`
	Target     string `json:"target,omitempty"`
	Tmp        string `json:"tmp,omitempty"`
	Backup     string `json:"backup,omitempty"`
	Existed    bool   `json:"existed,omitempty"`
	CreateOnly bool   `json:"createOnly,omitempty"`
	Hash       string `json:"hash,omitempty"`
}

// log appends e, creating the journal on first use. A journal that cannot
// be written does not stop the transaction (it is a recovery aid).
func (j *journal) log(e journalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		name := fmt.Sprintf("%s/%d-%s%s", journalDir, os.Getpid(), randHex(), TempSuffix)
		var f *os.File
		var err error
		for try := 0; try < 3; try++ { // another transaction may remove the directory meanwhile
			_ = j.w.mkdir(journalDir)
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

// contentHash identifies staged content cheaply (CRC-32C, in hardware, and
// the length): recovery only tells the staged content from the old one.
func contentHash(parts ...[]byte) string {
	var sum uint32
	n := 0
	for _, p := range parts {
		sum = crc32.Update(sum, castagnoli(), p)
		n += len(p)
	}
	return fmt.Sprintf("%08x-%d", sum, n)
}

// castagnoli is made on first use: making it costs 0.15 ms, which every
// hunk process would pay at start-up, journal or not.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// RecoverInterrupted undoes the transactions of hunk processes that died in
// the middle (see the top of this file), before anything reads the
// workspace. It costs one lstat when there is nothing to recover. It
// returns how many it found.
func (w *Workspace) RecoverInterrupted() int {
	if _, err := w.Lstat(journalDir); err != nil {
		return 0
	}
	ents, err := w.ReadDir(journalDir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pidText, _, _ := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		w.recoverJournal(journalDir + "/" + e.Name())
		n++
	}
	_ = w.Remove(journalDir) // only when empty
	return n
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false // kill(0) and kill(-n) would ask about process groups
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

func (w *Workspace) recoverJournal(name string) {
	data, err := w.ReadFile(name)
	if err != nil {
		return
	}
	var ops []journalEntry
	backups := map[string]string{}
	committed := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut by the kill: its step never started
		}
		// The workspace is writable by sandboxed commands, which could plant
		// a journal: only names local to the workspace are acted on (in host
		// mode too, where nothing else would confine them).
		if !localName(e.Target) || !localName(e.Tmp) || !localName(e.Backup) {
			continue
		}
		switch e.Op {
		case "stage", "remove":
			ops = append(ops, e)
		case "backup":
			backups[e.Target] = e.Backup
		case "committed":
			committed = true
		}
	}
	exists := func(p string) bool { _, err := w.Lstat(p); return err == nil }
	holds := func(p, hash string) bool {
		b, err := w.ReadFile(p)
		return err == nil && contentHash(b) == hash
	}
	for i := len(ops) - 1; i >= 0; i-- {
		e := ops[i]
		backup := backups[e.Target]
		if committed {
			for _, p := range []string{e.Tmp, backup} {
				if p != "" && exists(p) {
					_ = w.Remove(p)
				}
			}
			continue
		}
		switch {
		case e.Op == "remove":
			if backup != "" && exists(backup) && !exists(e.Target) {
				_ = w.Rename(backup, e.Target)
			}
		case e.Existed && backup != "" && exists(backup):
			// No exchange on this filesystem: the old content was kept aside.
			_ = w.Rename(backup, e.Target)
		case e.Existed && exists(e.Tmp) && holds(e.Target, e.Hash):
			// Exchanged: the temporary name holds the old content.
			_ = w.Rename(e.Tmp, e.Target)
		case !e.Existed && holds(e.Target, e.Hash):
			_ = w.Remove(e.Target) // created by this transaction
		}
		if e.Tmp != "" && exists(e.Tmp) {
			_ = w.Remove(e.Tmp)
		}
	}
	_ = w.Remove(name)
}

// localName reports whether p ("" allowed) names a path inside the
// workspace: relative, without "..".
func localName(p string) bool {
	return p == "" || filepath.IsLocal(p)
}
