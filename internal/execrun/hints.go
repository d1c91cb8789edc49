package execrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// SandboxError maps the sandbox's errors to the contract's codes.
func SandboxError(err error) error {
	var ue *sandbox.UnavailableError
	var le *sandbox.LimitError
	var ge *sandbox.GuardError
	var de *sandbox.UnknownDriverError
	var re *result.Error
	switch {
	case errors.As(err, &re):
		return re // already typed by the driver (docker)
	case errors.As(err, &ue):
		e := result.Errorf(result.SandboxUnavailable, "%s", ue.Error())
		if ue.Hint != "" {
			e.WithHint(ue.Hint)
		}
		return e
	case errors.As(err, &le):
		return result.Errorf(result.LimitUnenforceable, "%s", le.Error()).
			WithHint("drop " + le.Limit + ", run hunk as root (cgroups), or pick a driver that enforces it (hunk exec --drivers)")
	case errors.As(err, &ge):
		return result.Errorf(result.LimitUnenforceable, "%s", ge.Error()).WithHint(ge.Hint)
	case errors.As(err, &de):
		return result.Usagef("%s", de.Error()).WithHint("hunk exec --drivers lists them")
	}
	return result.Wrap(result.SandboxUnavailable, err, "sandbox")
}

// hostBoundHint explains why a program bound from the host with --ro
// (name, as the command named it) cannot start in an image: what it needs
// to start — a dynamic ELF's loader and libraries, a script's interpreter —
// is the host's, not the image's. "" when name is not such a program.
func hostBoundHint(name string, ro []string) string {
	if !filepath.IsAbs(name) {
		return ""
	}
	bound := false
	for _, p := range ro {
		if a, err := filepath.Abs(p); err == nil && (name == a || strings.HasPrefix(name, strings.TrimSuffix(a, "/")+"/")) {
			bound = true
		}
	}
	if !bound {
		return ""
	}
	if interp, elf := sandbox.ELFInterp(name); elf {
		if interp == "" {
			return ""
		}
		return fmt.Sprintf("%s is bound from the host, but it is dynamically linked: its loader %s and the libraries it links are the host's, not the image's; bind them too (--ro /lib --ro /lib64 --ro /usr/lib), run in an image that has them, or use a statically linked build", name, interp)
	}
	if b, err := os.ReadFile(name); err == nil && strings.HasPrefix(string(b), "#!") {
		line, _, _ := strings.Cut(string(b[2:]), "\n")
		if fields := strings.Fields(line); len(fields) > 0 {
			return fmt.Sprintf("%s is bound from the host, but it is a script for %s, which the image does not have where it says; bind it too (--ro %s) or run in an image that has it", name, fields[0], fields[0])
		}
	}
	return ""
}

// readOnlyGit reports whether stderr says that a write into .git failed
// because it is read-only (git's "Unable to create '.../.git/index.lock':
// Read-only file system", a shell's "cannot create .git/...").
func readOnlyGit(stderr []byte) bool {
	for _, p := range readOnlyPaths(stderr) {
		if gitComponent().MatchString(p) {
			return true
		}
	}
	return false
}

// gitComponent matches a path with a .git component (not .github).
var gitComponent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)\.git(/|$)`) })

// readOnlyPath finds the path in a tool's "Read-only file system" error:
// quoted ('X', "X", ‘X’) or after "create", "remove" and the like.
// (Compiled when first needed: hunk starts once per call.)
var readOnlyPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`['"‘]([^'"’]+)['"’][^'"]*Read-only file system|(?:create|remove|touch|open|write|rename|mkdir)\s+([^\s:'"]+): Read-only file system`)
})

// readOnlyPaths are the paths a command's stderr says it could not change
// for a read-only file system.
func readOnlyPaths(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if m := readOnlyPath().FindStringSubmatch(l); m != nil {
			out = append(out, m[1]+m[2])
		}
	}
	return out
}

// PolicyReadOnly is the hint for a command refused a change by the path
// policy's read-only mounts: the rule it met and where it comes from.
func PolicyReadOnly(ws *workspace.Workspace, workdir string, stderr []byte) string {
	if ws.Policy().Empty() {
		return ""
	}
	for _, p := range readOnlyPaths(stderr) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workdir, p)
		}
		name, err := ws.Resolve(p)
		if err != nil {
			continue
		}
		if d, by := ws.Decide(name, true); !d.Allowed {
			return fmt.Sprintf("%s: writing is %s%s, so the sandbox keeps it read-only (the person running hunk sets the policy; hunk policy check %s shows the rule)",
				workspace.Quote(name), d.Reason(), workspace.Via(name, by), name)
		}
	}
	return ""
}

// Hint is what to tell the user of a run that failed for a reason the
// sandbox made: a program that is not there, a .git kept read-only, no
// network. "" when the run succeeded or none applies.
func Hint(l Limits, r sandbox.Result, gitProtected bool, path string, sf Surface) string {
	switch {
	case r.ExitCode == 0 && !r.TimedOut, r.Interrupted:
		return ""
	case r.TimedOut:
		return sf.longer(l.Timeout)
	case r.ExitCode == 127 && strings.Contains(r.NotStarted, "in the sandbox"):
		return "" // the message says why and what to do
	case r.ExitCode == 127 && r.NotStarted != "":
		name, _, _ := strings.Cut(r.NotStarted, ": ")
		if h := hostBoundHint(name, l.RO); r.Driver == "docker" && h != "" {
			return h
		}
		if r.Driver == "docker" {
			return fmt.Sprintf("the image %s has no %s: run in an image that has it (--image), or show the host's toolchain read-only (for Go: --ro /usr/local/go --env PATH=/usr/local/go/bin:/bin --env CGO_ENABLED=0); docs/exec.md has a recipe", l.Image, name)
		}
		if strings.Contains(name, "/") {
			return fmt.Sprintf("%s does not exist in the workspace", name)
		}
		return fmt.Sprintf("%s is not on the command's PATH (%s); install it, give its full path, or set --env PATH=…", name, path)
	case gitProtected && readOnlyGit(r.Stderr):
		return "the workspace's .git is read-only in the sandbox (git runs its hooks and config outside it); to let the command change it, " + sf.setting("--git-write", "exec.git-write")
	case !l.Network.Any() && l.Driver != "none" && r.Driver != "none" && sandbox.TriedNetwork(r.Stdout, r.Stderr):
		if r.Driver == "landlock" && socketRefused(r.Stdout, r.Stderr) {
			return "under landlock the command gets no socket at all, loopback included (a test's own server too): the bwrap driver gives it a loopback of its own without the network, " +
				sf.setting("--driver bwrap", "exec.driver") + "; for the network itself, --network"
		}
		if host := namedHost(r.Stdout, r.Stderr); host != "" && sf.Setting != nil {
			return "the sandbox has no network; " + sf.setting("--allow-host "+host+" to let it reach "+host+" alone, or --network", "exec.network.allow")
		} else if host != "" {
			return fmt.Sprintf("the sandbox has no network; to let it reach %s alone (through hunk's proxy), add --allow-host %s; for every host, add --network", host, host)
		}
		return "the sandbox has no network; " + sf.setting("--network", "")
	}
	return ""
}

// socketRefused reports whether a command's output shows a socket refused
// (landlock's EAFNOSUPPORT, in C's words or Go's).
func socketRefused(out ...[]byte) bool {
	for _, b := range out {
		if bytes.Contains(b, []byte("ddress family not supported")) || bytes.Contains(b, []byte("EAFNOSUPPORT")) {
			return true
		}
	}
	return false
}

// hostInOutput are the ways commands name the host they could not reach.
var hostInOutput = regexp.MustCompile(`(?:Could not resolve host:? '?|lookup |getaddrinfo (?:ENOTFOUND|EAI_AGAIN) |Failed to resolve '|unable to access 'https?://|Cannot connect to |resolve host )([A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,})`)

// namedHost is the one host a command's output names as unreachable (""
// none, or more than one): what --allow-host would let it reach.
func namedHost(out ...[]byte) string {
	host := ""
	for _, b := range out {
		for _, m := range hostInOutput.FindAllSubmatch(b, 20) {
			h := strings.TrimSuffix(string(m[1]), ".")
			switch {
			case host == "":
				host = h
			case host != h:
				return ""
			}
		}
	}
	return host
}
