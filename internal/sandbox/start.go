//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setupError is a failure to confine the command (nothing ran).
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// proc is the command a run starts: the program (path resolved), its
// argument vector, exactly its environment (never hunk's own), its working
// directory, and descriptors it gets as 3, 4, … (hunk's copies are closed
// once it has started).
type proc struct {
	path   string
	argv   []string
	env    []string
	dir    string
	setsid bool
	extra  []int
	// listener is the seccomp listener of a mediated filter, received by
	// start (-1: none); the supervisor serves and closes it.
	listener int
}

// command returns the proc for argv (path already resolved) with exactly env.
func command(path string, argv, env []string, dir string) *proc {
	if env == nil {
		env = []string{}
	}
	return &proc{path: path, argv: argv, env: env, dir: dir, listener: -1}
}

// Exit codes of a command that could not be started, as shells use them.
const (
	exitNotExecutable = 126
	exitNotFound      = 127
	exitSandbox       = 125
)

// startFailure maps an exec failure to 126/127 and a message.
func startFailure(name string, err error) (int, string) {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound, fmt.Sprintf("%s: %v", name, err)
	}
	return exitNotExecutable, fmt.Sprintf("%s: %v", name, err)
}

// tid is the calling thread's id, as a cgroup v1 tasks file takes it.
func tid() []byte { return []byte(strconv.Itoa(unix.Gettid())) }

// envValue returns the value of key in env (K=V entries), the last one winning.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			v = kv[len(key)+1:]
		}
	}
	return v
}

// lookPath finds file the way a shell does with the command's PATH (not
// hunk's), relative paths resolved from dir. It returns the path, or an exit
// code (126 not executable, 127 not found) and a message.
func lookPath(file, pathEnv, dir string) (string, int, string) {
	check := func(p string) (int, string) {
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, full)
		}
		st, err := os.Stat(full)
		if err != nil {
			return exitNotFound, fmt.Sprintf("%s: No such file or directory", file)
		}
		if st.IsDir() {
			return exitNotExecutable, fmt.Sprintf("%s: Is a directory", file)
		}
		if unix.Access(full, unix.X_OK) != nil || st.Mode().Perm()&0o111 == 0 {
			return exitNotExecutable, fmt.Sprintf("%s: Permission denied", file)
		}
		return 0, ""
	}
	if strings.Contains(file, "/") {
		code, msg := check(file)
		if code == 0 && !filepath.IsAbs(file) {
			return filepath.Join(dir, file), 0, ""
		}
		return file, code, msg
	}
	firstErr, firstMsg := 0, ""
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, file)
		code, msg := check(p)
		if code == 0 {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			return p, 0, ""
		}
		if code == exitNotExecutable && firstErr == 0 {
			firstErr, firstMsg = code, msg
		}
	}
	if firstErr != 0 {
		return "", firstErr, firstMsg
	}
	return "", exitNotFound, fmt.Sprintf("%s: command not found", file)
}
