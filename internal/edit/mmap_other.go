//go:build !unix

package edit

import "github.com/hunk-dev/hunk/internal/workspace"

func readContent(files workspace.FS, name string, size int64) ([]byte, func(), error) {
	b, err := files.ReadFile(name)
	return b, func() {}, err
}
