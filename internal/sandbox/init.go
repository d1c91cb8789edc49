package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The sandbox init: the none and landlock drivers (and bwrap, when a limit
// needs a cgroup) start hunk's own binary again (/proc/self/exe) with
// initEnv set to an initConfig. That process joins the run's cgroups,
// confines itself (Landlock, seccomp, a new session) and execs the command in
// its place, so the command starts already confined and no hunk process
// stays between it and the supervisor.
//
// The check is a package init function rather than a line in main so that
// every binary linking this package — hunk, and the test binaries whose
// scripts run hunk — answers it before doing anything else (cobra and viper
// are never set up). Outside a sandbox start it costs one getenv.
const initEnv = "HUNK_SANDBOX_INIT"

func init() {
	if cfg, ok := os.LookupEnv(initEnv); ok {
		os.Exit(initMain(cfg))
	}
}

// initConfig is what the supervisor hands the init.
type initConfig struct {
	Argv     []string        `json:"argv"`
	Env      []string        `json:"env"`
	Dir      string          `json:"dir"`
	Exact    bool            `json:"exact,omitempty"` // Argv[0] is a path to exec as is (bwrap)
	Cgroups  []string        `json:"cgroups,omitempty"`
	Setsid   bool            `json:"setsid,omitempty"`
	Landlock *landlockPolicy `json:"landlock,omitempty"`
	Seccomp  *seccompPolicy  `json:"seccomp,omitempty"`
}

// Exit codes of a command that could not be started, as shells use them.
const (
	exitNotExecutable = 126
	exitNotFound      = 127
	exitSandbox       = 125
)

// initMain runs in the re-executed process. It returns an exit code only
// when exec fails.
func initMain(raw string) int {
	// Every confinement below is per thread; the exec happens from this one.
	runtime.LockOSThread()
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "hunk: "+format+"\n", args...)
		return code
	}
	var cfg initConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil || len(cfg.Argv) == 0 {
		return fail(exitSandbox, "sandbox init: bad configuration: %v", err)
	}
	if cfg.Dir != "" {
		if err := os.Chdir(cfg.Dir); err != nil {
			return fail(exitSandbox, "sandbox init: %v", err)
		}
	}
	path := cfg.Argv[0]
	if !cfg.Exact {
		p, code, msg := lookPath(cfg.Argv[0], envValue(cfg.Env, "PATH"), cfg.Dir)
		if code != 0 {
			return fail(code, "%s", msg)
		}
		path = p
	}
	// Open the cgroup files now: once confined, they are out of reach.
	var cgFiles []*os.File
	for _, f := range cfg.Cgroups {
		fh, err := os.OpenFile(f, os.O_WRONLY, 0)
		if err != nil {
			return fail(exitSandbox, "sandbox init: joining cgroup: %v", err)
		}
		cgFiles = append(cgFiles, fh)
	}
	if cfg.Setsid {
		_, _ = unix.Setsid()
	}
	if cfg.Landlock != nil {
		if _, err := applyLandlock(*cfg.Landlock); err != nil {
			return fail(exitSandbox, "sandbox init: %v", err)
		}
	}
	if cfg.Seccomp != nil {
		if err := installSeccomp(*cfg.Seccomp); err != nil {
			return fail(exitSandbox, "sandbox init: %v", err)
		}
	}
	// Join the cgroups last: from here on the limits count, and a pids limit
	// must not be spent on this process's runtime threads (exec drops them).
	pid := []byte(fmt.Sprint(os.Getpid()))
	for _, fh := range cgFiles {
		if _, err := fh.Write(pid); err != nil {
			return fail(exitSandbox, "sandbox init: joining cgroup %s: %v", fh.Name(), err)
		}
		fh.Close()
	}
	err := syscall.Exec(path, cfg.Argv, cfg.Env)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return fail(exitNotFound, "%s: %v", cfg.Argv[0], err)
	default:
		return fail(exitNotExecutable, "%s: %v", cfg.Argv[0], err)
	}
}

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
