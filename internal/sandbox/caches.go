package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/hunk-dev/hunk/internal/workspace"
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

// Warmed records that the first slow run over c has been explained, and
// says whether this call was the one to record it: of runs started at once
// over a new cache, only one gives the note (the marker is made
// exclusively, never through a link).
func (c CacheState) Warmed() bool {
	if c.Dir == "" {
		return false
	}
	f, err := os.OpenFile(filepath.Join(c.Dir, warmMarker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	return f.Close() == nil
}

// CacheEnv makes the cache directory dir (0700) and returns the variables
// that point the build tools at it, leaving out those the command's
// environment env (K=V, as given) already sets, and the cache's state.
// hostEnv reads hunk's own environment (for the user's Go module cache).
// With network, Go may also download modules.
func CacheEnv(dir string, env []string, network bool, hostEnv func(string) string) ([]string, CacheState, error) {
	dir, err := workspace.PrivateDir(filepath.Dir(filepath.Dir(filepath.Dir(dir))), "hunk", "exec", filepath.Base(dir))
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
