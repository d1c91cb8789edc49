//go:build !linux

package workspace

// privateDirFast is PrivateDir's quick check where there is no openat2:
// none (PrivateDir walks).
func privateDirFast(base string, rel []string) (string, bool) { return "", false }
