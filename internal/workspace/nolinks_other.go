//go:build !linux

package workspace

// rootFD is unused where there is no openat2.
type rootFD struct{}

// noLinks is false where there is no openat2: the policy walks the name.
func (w *Workspace) noLinks(name string) bool { return false }

func (w *Workspace) closeRootFD() {}

// privateDirFast is PrivateDir's quick check where there is no openat2:
// none (PrivateDir walks).
func privateDirFast(base string, rel []string) (string, bool) { return "", false }
