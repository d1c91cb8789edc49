package approval

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestApproveThenTakeOnce(t *testing.T) {
	s := Open(t.TempDir())
	id, digest := Digest("ws", "exec", "git push")
	if _, ok := s.Take(digest); ok {
		t.Fatal("a plan never asked for was taken")
	}
	if _, err := s.Ask(Plan{ID: id, Digest: digest, Tool: "exec", Summary: "git push"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Take(digest); ok {
		t.Fatal("a plan asked for and not approved was taken")
	}
	if _, err := s.Approve(id, "alice"); err != nil {
		t.Fatal(err)
	}
	// Asked again before the call is made again: the yes stays.
	if _, err := s.Ask(Plan{ID: id, Digest: digest, Tool: "exec"}); err != nil {
		t.Fatal(err)
	}
	p, ok := s.Take(digest)
	if !ok || p.By != "alice" {
		t.Fatalf("the approved plan was not taken: %+v %v", p, ok)
	}
	if _, ok := s.Take(digest); ok {
		t.Fatal("one yes was taken twice")
	}
	if _, err := s.Approve(id, "alice"); err != ErrNotFound {
		t.Fatalf("a taken plan was approved again: %v", err)
	}
}

func TestOtherPlanSameID(t *testing.T) {
	s := Open(t.TempDir())
	id, digest := Digest("a")
	if _, err := s.Ask(Plan{ID: id, Digest: digest}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(id, "p"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Take(id + "0000"); ok {
		t.Fatal("a yes was taken by a digest that only shares the id")
	}
}

func TestExpiry(t *testing.T) {
	s := Open(t.TempDir())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	id, digest := Digest("x")
	if _, err := s.Ask(Plan{ID: id, Digest: digest}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(TTL)
	if _, err := s.Approve(id, "p"); err != ErrNotFound {
		t.Fatalf("an expired plan was approved: %v", err)
	}
	if _, err := s.Ask(Plan{ID: id, Digest: digest}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(id, "p"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(TTL + time.Second)
	if _, ok := s.Take(digest); ok {
		t.Fatal("an expired yes was taken")
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("expired plans listed: %+v", l)
	}
}

func TestNoLinkFollowed(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	id, digest := Digest("x")
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, []byte(`{"id":"`+id+`","digest":"`+digest+`","approved":"2999-01-01T00:00:00Z","expires":"2999-01-01T00:00:00Z"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(forged, filepath.Join(dir, id+".json")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Take(digest); ok {
		t.Fatal("a yes was read through a link")
	}
	if _, err := s.Approve("not-an-id", "p"); err == nil {
		t.Fatal("a malformed id was accepted")
	}
}
