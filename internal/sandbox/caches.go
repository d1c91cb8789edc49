package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Build caches. A command's HOME is read-only, so the caches builds write —
// Go's build and module caches, npm's, pip's, cargo's, Maven's and Gradle's —
// would fail to write, and pointing them at the run's private TMPDIR makes
// every run cold. Instead each workspace gets caches of its own, kept by hunk
// outside the workspace and writable by the command, under every driver:
//
//	$XDG_CACHE_HOME/hunk/exec/<sha256 of the workspace path, 16 hex digits>/
//
// Of a workspace, not shared with the user's own caches: a hostile command
// could plant a poisoned entry in a cache the user's unsandboxed builds then
// trust; here it can only poison its own workspace's later runs, which it
// could do through the workspace anyway.
//
// What the caches cannot hold yet, they read from the user's own: Go modules
// come from the user's module cache (read-only, as a file:// GOPROXY) before
// the network, so `go test` of a module built once on the host works without
// --network.

// CacheDir returns the cache directory of workspace (not created), or ""
// when there is no absolute place for it. home and xdgCache are hunk's own
// HOME and XDG_CACHE_HOME.
func CacheDir(workspace, home, xdgCache string) string {
	base := xdgCache
	if base == "" || !filepath.IsAbs(base) {
		if !filepath.IsAbs(home) {
			return "" // no HOME: no caches, rather than some in the current directory
		}
		base = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(base, "hunk", "exec", hex.EncodeToString(sum[:8]))
}

// cacheVars are the variables pointing each tool at its part of a cache dir.
var cacheVars = []struct{ key, sub string }{
	{"XDG_CACHE_HOME", "xdg"}, // pip, go-build's default, and the tools that follow XDG
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"PIP_CACHE_DIR", "pip"},
	{"CARGO_HOME", "cargo"},
	{"GRADLE_USER_HOME", "gradle"},
}

// CacheState says whether a cache directory has seen a slow run yet.
type CacheState struct {
	Dir string
	New bool // no run over it has been said to be slow (warmMarker)
}

// warmMarker, in a cache directory, records that a run over it was once
// slow and hunk said why: the note is given once per cache.
const warmMarker = ".hunk-warmed"

// Warmed records that the first slow run over c has been explained.
func (c CacheState) Warmed() {
	if c.Dir != "" {
		_ = os.WriteFile(filepath.Join(c.Dir, warmMarker), nil, 0o600)
	}
}

// CacheEnv makes the cache directory dir (0700) and returns the variables
// that point the build tools at it, leaving out those the command's
// environment env (K=V, as given) already sets, and the cache's state.
// hostEnv reads hunk's own environment (for the user's Go module cache).
// With network, Go may also download modules.
func CacheEnv(dir string, env []string, network bool, hostEnv func(string) string) ([]string, CacheState, error) {
	dir, err := makeCacheDir(dir)
	if err != nil {
		return nil, CacheState{}, err
	}
	st := CacheState{Dir: dir}
	if _, err := os.Lstat(filepath.Join(dir, warmMarker)); err != nil {
		st.New = true
	}
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	add := func(k, v string) {
		if !set[k] {
			out = append(out, k+"="+v)
		}
	}
	for _, c := range cacheVars {
		add(c.key, filepath.Join(dir, c.sub))
	}
	add("MAVEN_OPTS", "-Dmaven.repo.local="+filepath.Join(dir, "m2"))
	proxy := []string{}
	if mc := userModCache(hostEnv); mc != "" {
		if fi, err := os.Stat(filepath.Join(mc, "cache", "download")); err == nil && fi.IsDir() {
			proxy = append(proxy, "file://"+filepath.Join(mc, "cache", "download"))
		}
	}
	if network {
		p := hostEnv("GOPROXY")
		if p == "" {
			p = "https://proxy.golang.org,direct"
		}
		proxy = append(proxy, p)
	} else {
		proxy = append(proxy, "off")
	}
	add("GOPROXY", strings.Join(proxy, ","))
	return out, st, nil
}

// userModCache is the user's Go module cache: GOMODCACHE, else the first
// GOPATH entry's pkg/mod, else ~/go/pkg/mod.
func userModCache(hostEnv func(string) string) string {
	if mc := hostEnv("GOMODCACHE"); mc != "" {
		return mc
	}
	if gp := filepath.SplitList(hostEnv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home := hostEnv("HOME"); home != "" {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// makeCacheDir makes (or opens) a workspace's cache directory
// BASE/hunk/exec/HASH (CacheDir) and returns its real path. BASE, the
// user's cache directory, is taken as it is (it may be a link the user
// made); below it, each of hunk's components is made and opened without
// following a symbolic link, and must be a real directory of hunk's user,
// the last one with mode 0700 — else the caches are refused with an error
// saying what is wrong, rather than bound where a link points (a command
// whose workspace holds the cache root could have planted one). Once made,
// hunk's cache root is read-only to every command that could reach it
// (ProtectOwnState), so the path checked is the path bound.
func makeCacheDir(dir string) (string, error) {
	rel := []string{}
	base := dir
	for i := 0; i < 3; i++ {
		rel = append([]string{filepath.Base(base)}, rel...)
		base = filepath.Dir(base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		return "", err
	}
	fd, err := unix.Open(realBase, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	path := realBase
	for i, c := range rel {
		path = filepath.Join(path, c)
		if err := unix.Mkdirat(fd, c, 0o700); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return "", fmt.Errorf("%s: %w", path, err)
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return "", fmt.Errorf("%s is not a directory of hunk's (a symbolic link or a file): remove it", path)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return "", err
		}
		if int(st.Uid) != os.Geteuid() {
			unix.Close(fd)
			return "", fmt.Errorf("%s belongs to uid %d, not to hunk's user: remove it", path, st.Uid)
		}
		if i == len(rel)-1 && st.Mode&0o777 != 0o700 {
			unix.Close(fd)
			return "", fmt.Errorf("%s has mode %04o, not 0700: chmod 700 it", path, st.Mode&0o777)
		}
	}
	unix.Close(fd)
	return path, nil
}
