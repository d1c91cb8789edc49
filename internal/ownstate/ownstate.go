// Package ownstate names hunk's own state on this machine — its
// configuration, its caches and its state (crash journals, the history,
// session reads, placeholders' records) — which a later hunk run, outside
// any sandbox, reads and trusts, and finds where a directory holds it: by
// what the paths are (their device and inode), not by how they are spelled,
// so a home directory reached through a symbolic link (/home -> /var/home),
// an XDG directory through a link, or a bind mount of either is found the
// same.
package ownstate

import (
	"os"
	"path/filepath"
	"syscall"
)

// Paths are hunk's own paths as the environment names them, absolute and
// clean: $XDG_CONFIG_HOME/hunk, $XDG_CACHE_HOME/hunk, $XDG_STATE_HOME/hunk
// (each defaulting under $HOME) and the config file $HUNK_CONFIG names.
// getenv reads hunk's environment.
func Paths(getenv func(string) string) []string {
	home := getenv("HOME")
	xdg := func(env, def string) string {
		if d := getenv(env); filepath.IsAbs(d) {
			return filepath.Join(d, "hunk")
		}
		if !filepath.IsAbs(home) {
			return ""
		}
		return filepath.Join(home, def, "hunk")
	}
	var out []string
	for _, p := range []string{
		xdg("XDG_CONFIG_HOME", ".config"),
		xdg("XDG_CACHE_HOME", ".cache"),
		xdg("XDG_STATE_HOME", filepath.Join(".local", "state")),
		getenv("HUNK_CONFIG"),
	} {
		if filepath.IsAbs(p) && p != os.DevNull {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// StateBase is the directory hunk's state directory lies in —
// $XDG_STATE_HOME, else ~/.local/state — or "" when there is none (no HOME).
func StateBase(getenv func(string) string) string {
	if b := getenv("XDG_STATE_HOME"); filepath.IsAbs(b) {
		return b
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) || home == "/" {
		return ""
	}
	return filepath.Join(home, ".local", "state")
}

// Held is where the directory dir holds hunk's own paths owns: for each
// one it holds, its name relative to dir ("." when dir itself lies inside
// it). An own path that does not exist yet is placed by its deepest
// existing directory. Directories are compared by device and inode: dir
// holds own when dir is own or one of own's directories, however either
// is spelled. And dir holds own where a mount under it shows own, a
// directory above it or one inside it (a bind mount of ~/.local/state into
// the workspace): each such place is listed too, wherever it is mounted.
func Held(dir string, owns []string) []string {
	var ds syscall.Stat_t
	if len(owns) == 0 || syscall.Stat(dir, &ds) != nil {
		return nil
	}
	realDir := Real(dir)
	ms := mounts()
	var above map[[2]uint64]bool // dir and the directories above it, for "dir inside own"
	var out []string
	for _, own := range owns {
		real := Real(own)
		if real == "" {
			continue
		}
		for _, rel := range mountedHolds(ms, realDir, real) {
			if !contains(out, rel) {
				out = append(out, rel)
			}
		}
		if rel, ok := within(&ds, real); ok {
			if !contains(out, rel) {
				out = append(out, rel)
			}
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(own, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			continue
		}
		if above == nil {
			above = map[[2]uint64]bool{}
			for p := dir; ; p = filepath.Dir(p) {
				var a syscall.Stat_t
				if syscall.Stat(p, &a) == nil {
					above[[2]uint64{uint64(a.Dev), a.Ino}] = true
				}
				if p == filepath.Dir(p) {
					break
				}
			}
		}
		if above[[2]uint64{uint64(st.Dev), st.Ino}] {
			out = append(out, ".")
		}
	}
	return out
}

// within is own's name relative to the directory ds, when ds is own or a
// directory above it (own: a real path, its links resolved).
func within(ds *syscall.Stat_t, own string) (string, bool) {
	rest := ""
	for p := own; ; {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Dev == ds.Dev && st.Ino == ds.Ino {
			if rest == "" {
				return ".", true
			}
			return rest, true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// Real is where own is now: its real path (links resolved), or that of its
// deepest existing directory with the rest as named ("" when none exists).
func Real(own string) string {
	rest := ""
	for p := own; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
