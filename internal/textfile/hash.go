package textfile

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// Hash is the hex SHA-256 hunk names a file's content by: read reports it,
// write and edit check it with --if-match.
func Hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ParseIfMatch normalizes an --if-match value ("" stays ""): a SHA-256 in
// hex, 64 characters, any case.
func ParseIfMatch(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", nil
	}
	if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return "", result.Usagef("--if-match wants a sha256 in hex (64 characters), got %q", s)
	}
	return s, nil
}

// CheckHash is the one --if-match check: content (nil: the file does not
// exist) must have the hash want (normalized by ParseIfMatch; "" checks
// nothing), else STALE.
func CheckHash(name string, content []byte, exists bool, want string) error {
	if want == "" {
		return nil
	}
	if !exists {
		return result.Errorf(result.Stale, "%s: the file no longer exists (--if-match %s…)", name, want[:12]).
			WithHint("read the file again, then redo the change")
	}
	got := Hash(content)
	if got == want {
		return nil
	}
	return result.Errorf(result.Stale, "%s: changed since it was read (its sha256 is now %s…, not %s…); nothing was changed", name, got[:12], want[:12]).
		WithHint("read the file again, then redo the change against what it holds now").
		WithDetail("sha256", got)
}
