package ownstate

import (
	"path/filepath"
	"strings"
)

// A bind mount shows a directory at a second path: ~/.local/state bound
// into a workspace holds hunk's history there, though no path of the
// workspace leads to it and no directory above the workspace is it. So
// beside comparing directories, Held reads the mount table: a mount under
// dir whose source, on the filesystem own lies on, is own, a directory
// above own, or one inside it, holds own (or that part of it).

// mount is one line of the mount table: the filesystem (its device), the
// path within it that is mounted (root), and where (point).
type mount struct {
	dev, root, point string
}

// mountedHolds adds to out the names relative to dir (a real path) at
// which mounts under dir show own (a real path): own itself, at the
// mount's point joined with the rest of own's path; or the whole mount,
// when what it shows lies inside own.
func mountedHolds(ms []mount, dir, own string) []string {
	host, ok := hostOf(ms, own)
	if !ok {
		return nil
	}
	var out []string
	for _, m := range ms {
		if m.dev != host.dev || !strictlyUnder(m.point, dir) {
			continue
		}
		at := ""
		switch {
		case under(host.root, m.root): // the mount shows own, or a directory above it
			rel, _ := filepath.Rel(m.root, host.root)
			at = filepath.Join(m.point, rel)
		case under(m.root, host.root): // the mount shows a part of own
			at = m.point
		default:
			continue
		}
		rel, err := filepath.Rel(dir, at)
		if err == nil && !contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// hostOf is where own lies: the filesystem of the mount holding it (the
// deepest mount point above it; of stacked ones, the last) and own's path
// within that filesystem.
func hostOf(ms []mount, own string) (mount, bool) {
	best := -1
	for i, m := range ms {
		if under(own, m.point) && (best < 0 || len(m.point) >= len(ms[best].point)) {
			best = i
		}
	}
	if best < 0 {
		return mount{}, false
	}
	m := ms[best]
	rel, _ := filepath.Rel(m.point, own)
	return mount{dev: m.dev, root: filepath.Join(m.root, rel), point: own}, true
}

// under reports whether p is base or lies inside it (clean absolute paths).
func under(p, base string) bool {
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}

func strictlyUnder(p, base string) bool { return p != base && under(p, base) }

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// parseMountinfo reads /proc/self/mountinfo's lines: ID PARENT MAJ:MIN ROOT
// POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTS, its paths with
// space, tab, newline and backslash written in octal.
func parseMountinfo(text string) []mount {
	var ms []mount
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		root, point := unescape(f[3]), unescape(f[4])
		if !filepath.IsAbs(root) || !filepath.IsAbs(point) {
			continue
		}
		ms = append(ms, mount{dev: f[2], root: filepath.Clean(root), point: filepath.Clean(point)})
	}
	return ms
}

// unescape undoes mountinfo's octal escapes (\040 a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s[0] <= '3'
}
