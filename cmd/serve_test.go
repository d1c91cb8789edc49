package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHiddenTokenFile: exec's commands are kept from the token file, and
// from a Kubernetes Secret's whole directory (its next token lands in a new
// ..DATE directory when the Secret changes).
func TestHiddenTokenFile(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "token")
	os.WriteFile(plain, []byte("t\n"), 0o600)
	if got := hiddenTokenFile(plain); !slices.Equal(got, []string{plain}) {
		t.Errorf("a plain token file: %v", got)
	}
	secret := t.TempDir()
	os.Mkdir(filepath.Join(secret, "..2026_11_27_10_00_00.1"), 0o755)
	os.WriteFile(filepath.Join(secret, "..2026_11_27_10_00_00.1", "token"), []byte("t\n"), 0o600)
	os.Symlink("..2026_11_27_10_00_00.1", filepath.Join(secret, "..data"))
	os.Symlink("..data/token", filepath.Join(secret, "token"))
	real, _ := filepath.EvalSymlinks(secret)
	if got := hiddenTokenFile(filepath.Join(secret, "token")); !slices.Equal(got, []string{secret}) && !slices.Equal(got, []string{real}) {
		t.Errorf("a Kubernetes Secret's token: %v, want its directory %s", got, secret)
	}
	if got := hiddenTokenFile(""); got != nil {
		t.Errorf("no token file: %v", got)
	}
}
