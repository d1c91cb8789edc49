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
	// A bare descriptor: no finalizer closes it, so the lock is held until
	// the process exits.
	fd, err := syscall.Open(filepath.Join(os.TempDir(), "hunk-docker-tests.lock"), syscall.O_CREAT|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		_ = syscall.Flock(fd, syscall.LOCK_EX)
	}
})
