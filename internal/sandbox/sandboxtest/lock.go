//go:build linux

// Package sandboxtest holds what the tests of several packages share: the
// lock the Docker tests take so that they do not run against the engine at
// once, the Docker test image (made offline when missing), a listener that
// serves a greeting, and skips that `make test` lists in its summary.
package sandboxtest

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// DockerLock takes, once per test process and until it exits, the lock every
// package's Docker tests share: `hunk exec --gc` in one package's scripts
// removes the warm containers another package's tests are using.
var DockerLock = sync.OnceFunc(func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "hunk-docker-tests.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX) // held until the process exits
		held = f                                        // (and never closed by a finalizer)
	}
})

var held *os.File
