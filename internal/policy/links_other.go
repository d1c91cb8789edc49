//go:build !unix

package policy

import "os"

// links is the number of names of the file fi describes (1 where the
// system does not say).
func links(fi os.FileInfo) uint64 { return 1 }
