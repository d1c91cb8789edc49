package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestAbandonedChecks: a journal whose process lives is left alone; one
// whose process is gone is taken over once (a second look finds none) and
// removed when settled; a file that is not a journal is dropped, naming no
// operation.
func TestAbandonedChecks(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	end, err := s.BeginCheck([]string{"0001a1b2c3d4"}, "go test ./...")
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	if got := s.AbandonedChecks(); len(got) != 0 {
		t.Fatalf("a live process's check taken over: %+v", got)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	pid := gone.ProcessState.Pid()
	os.WriteFile(filepath.Join(dir, "checks", itoa(pid)+".1"), []byte(`{"pid":1,"ops":["0002a1b2c3d4"],"command":"make"}`), 0o600)
	os.WriteFile(filepath.Join(dir, "checks", itoa(pid)+".2"), []byte(`{"ops":["../../etc"]}`), 0o600)
	got := s.AbandonedChecks()
	if len(got) != 1 || got[0].Ops[0] != "0002a1b2c3d4" || got[0].Command != "make" {
		t.Fatalf("abandoned: %+v, want the one journal of a gone process", got)
	}
	if again := s.AbandonedChecks(); len(again) != 0 {
		t.Fatalf("taken over twice: %+v", again)
	}
	s.Settled(got[0])
	ents, _ := os.ReadDir(filepath.Join(dir, "checks"))
	if len(ents) != 1 {
		t.Errorf("left in checks/: %v, want the live one alone", ents)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
