package mcpserver

import (
	"strings"
	"testing"
	"time"
)

// TestSealedState: a requestState is good only as hunk sealed it, and only
// until it expires; a changed byte or a late retry is refused.
func TestSealedState(t *testing.T) {
	now := time.Now()
	s := sealed{Tool: "exec", Args: "a1", Plan: "p1", Expires: now.Add(stateTTL).Unix()}
	state := seal(s)
	if got, ok := unseal(state, now); !ok || got != s {
		t.Fatalf("unseal(seal(s)) = %+v, %v", got, ok)
	}
	if _, ok := unseal(state, now.Add(stateTTL+time.Second)); ok {
		t.Error("an expired state was taken")
	}
	for i := range state {
		b := []byte(state)
		b[i] ^= 1
		if _, ok := unseal(string(b), now); ok && string(b) != state {
			t.Errorf("a state changed at byte %d was taken", i)
		}
	}
	for _, bad := range []string{"", ".", "x", strings.Repeat("A", 40), state + "x"} {
		if _, ok := unseal(bad, now); ok {
			t.Errorf("%q was taken", bad)
		}
	}
}
