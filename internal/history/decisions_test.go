package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecisions: the audit trail keeps each decision as a line, reads back
// oldest first passing over a torn line, and stays bounded: past its size
// the file becomes decisions.1.jsonl and the one before it goes.
func TestDecisions(t *testing.T) {
	s, err := Open(t.TempDir(), DefaultLimits, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{Denied, Approved} {
		if err := s.Decided(Decision{Tool: "exec", Decision: d, By: `deny "git push" (--deny-cmd)`, Program: "git"}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(s.Dir(), decisionsFile)
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-`) // a line torn by a crash
	f.Close()
	got, err := s.Decisions()
	if err != nil || len(got) != 2 || got[0].Decision != Denied || got[1].Decision != Approved || got[0].Time.IsZero() {
		t.Fatalf("decisions %+v, %v", got, err)
	}
	big := strings.Repeat("x", 4096)
	for i := 0; i < 2*maxDecisions/4096+2; i++ {
		if err := s.Decided(Decision{Tool: "exec", Decision: Denied, By: big}); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	for _, name := range []string{decisionsFile, "decisions.1.jsonl"} {
		fi, err := os.Stat(filepath.Join(s.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if total > 2*maxDecisions+2*8192 {
		t.Errorf("the trail holds %d bytes, over its bound", total)
	}
}
