package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A change's check under way (package verify) leaves a journal in the
// history, checks/<pid>.<n>: the operations a failed check takes back and
// the process running it. The process removes it once the check passed or
// the change was taken back; a journal whose process is gone is a check
// hunk was killed in, and the next run takes those operations back
// (verify.Settle). A run that takes one over renames it to
// <pid>.<n>.settling.<its pid> first, so two runs never take it together,
// and one killed while settling leaves it to the next.

// Check is a journal of a check under way.
type Check struct {
	PID     int       `json:"pid"`
	Ops     []string  `json:"ops"`     // the change's operations, oldest first
	Command string    `json:"command"` // the check, for what the settling run says
	Time    time.Time `json:"time"`
	path    string
}

var checkSeq atomic.Int64

// BeginCheck journals a check of the operations ops about to run; end
// removes the journal.
func (s *Store) BeginCheck(ops []string, command string) (end func(), err error) {
	dir := filepath.Join(s.dir, "checks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	c := Check{PID: os.Getpid(), Ops: ops, Command: command, Time: s.now()}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, fmt.Sprintf("%d.%d", c.PID, checkSeq.Add(1)))
	if err := writeAtomic(p, b); err != nil {
		return nil, err
	}
	return func() { os.Remove(p) }, nil
}

// AbandonedChecks takes over the journals of checks whose process is gone
// (renamed to this process's; Settled removes each): none when there are
// none, at the cost of reading one directory.
func (s *Store) AbandonedChecks() []*Check {
	dir := filepath.Join(s.dir, "checks")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*Check
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		owner, ok := journalOwner(name)
		if !ok || alive(owner) {
			continue
		}
		base, _, _ := strings.Cut(name, ".settling.")
		mine := filepath.Join(dir, base+".settling."+strconv.Itoa(os.Getpid()))
		if os.Rename(filepath.Join(dir, name), mine) != nil {
			continue // another run took it
		}
		b, err := readFile(mine)
		var c Check
		if err != nil || json.Unmarshal(b, &c) != nil || !validIDs(c.Ops) {
			os.Remove(mine) // not one of hunk's journals: nothing to take back
			continue
		}
		c.path = mine
		out = append(out, &c)
	}
	return out
}

// Settled removes a journal AbandonedChecks took over.
func (s *Store) Settled(c *Check) {
	if c.path != "" {
		os.Remove(c.path)
	}
}

// journalOwner is the process a journal's name says holds it: the one
// settling it, else the one that ran the check.
func journalOwner(name string) (int, bool) {
	if _, by, ok := strings.Cut(name, ".settling."); ok {
		pid, err := strconv.Atoi(by)
		return pid, err == nil
	}
	pid, _, ok := strings.Cut(name, ".")
	n, err := strconv.Atoi(pid)
	return n, ok && err == nil
}

// validIDs reports whether every id is an operation id's shape.
func validIDs(ids []string) bool {
	for _, id := range ids {
		if len(id) != 12 || strings.Trim(id, "0123456789abcdef") != "" {
			return false
		}
	}
	return len(ids) > 0
}
