//go:build linux

package main

// Helpers the end-to-end tests share: the binary built once (TestMain), the
// test users, drivers and conditions, an MCP session, trees and processes.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/docker"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testUsers are root and nobody when the tests run as root, else the
// test's own user.
func testUsers() []testUser {
	if os.Geteuid() != 0 {
		return []testUser{{"user", nil}}
	}
	return []testUser{{"root", nil}, {"nobody", &syscall.Credential{Uid: 65534, Gid: 65534}}}
}

// buildHunk is the real binary TestMain built (and testdata/hostile beside
// it, in a directory every user can read), or HUNK_E2E_BINARY when set: an
// older build of hunk, to see a test fail.
func buildHunk(t testing.TB) string {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if b := os.Getenv("HUNK_E2E_BINARY"); b != "" {
		return b
	}
	return builtHunk
}

// buildOnce builds hunk and testdata/hostile into a new directory: once,
// in TestMain, so that no test's own time pays for it.
func buildOnce() (cleanup func()) {
	dir, err := os.MkdirTemp("", "hunk-e2e-")
	if err != nil {
		buildErr = err
		return func() {}
	}
	os.Chmod(dir, 0o755)
	builtHunk, built = filepath.Join(dir, "hunk"), filepath.Join(dir, "hostile")
	for _, b := range [][]string{{"-o", builtHunk, "."}, {"-o", built, "./testdata/hostile"}} {
		c := exec.Command("go", append([]string{"build"}, b...)...)
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build %v: %v\n%s", b, err, out)
			break
		}
	}
	return func() { os.RemoveAll(dir) }
}

// withBuild is the test run TestMain hands testscript: hunk built first
// (only in the top-level run; a script's hunk is this binary re-executed,
// which never gets here).
type withBuild struct{ m *testing.M }

func (w withBuild) Run() int {
	// hunk's state (histories, journals, kept outputs) of every run the
	// tests make, in a directory of their own: nothing is left under the
	// HOME of whoever runs them. A test that needs its own sets its own.
	if state, err := os.MkdirTemp("", "hunk-test-state-"); err == nil {
		os.Setenv("XDG_STATE_HOME", state)
		defer os.RemoveAll(state)
	}
	defer buildOnce()()
	return w.m.Run()
}

// longTests says whether long tests were asked for (HUNK_LONG_TESTS=1):
// a real cold build, minutes on a busy machine.
func longTests() bool {
	v, _ := strconv.ParseBool(os.Getenv("HUNK_LONG_TESTS"))
	return v
}

func buildHostile(t *testing.T) string {
	buildHunk(t)
	return built
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// killPatch fills ws with n files and writes a Codex patch that updates a
// third of them, deletes a third and adds as many: the large patch the
// kill tests interrupt. It returns the patch file's path.
func killPatch(t *testing.T, ws string, n int) string {
	t.Helper()
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f%03d.txt", i)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(fmt.Sprintf("old %d\nkeep\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&patch, "*** Update File: %s\n@@\n-old %d\n+new %d\n keep\n", name, i, i)
		case 1:
			fmt.Fprintf(&patch, "*** Delete File: %s\n", name)
		case 2:
			fmt.Fprintf(&patch, "*** Add File: added-%03d.txt\n+added %d\n", i, i)
		}
	}
	patch.WriteString("*** End Patch\n")
	pf := filepath.Join(t.TempDir(), "big.patch")
	if err := os.WriteFile(pf, []byte(patch.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return pf
}

// treeContents maps every file below dir to its content.
func treeContents(dir string) map[string]string {
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

// startReady starts cmd, a hunk exec whose command touches ready in the
// workspace ws once it runs, and waits for that.
func startReady(t *testing.T, cmd *exec.Cmd, ws string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// needDriver skips the test when the exec driver does not work here, and
// fails it when HUNK_REQUIRE_DRIVERS names the driver (see driverCondition).
func needDriver(t *testing.T, driver string) {
	t.Helper()
	ok, err := driverCondition("driver:" + driver)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		sandboxtest.Skip(t, "driver %s does not work here", driver)
	}
	if driver == "docker" {
		sandboxtest.DockerLock()
		sandboxtest.TestImage(t, &docker.Docker{})
	}
}

// marker is a sleep duration no other process uses: the test's own pid in it.
func marker(kind, i int) string {
	return fmt.Sprintf("737%d%d.%d", kind, os.Getpid(), i)
}

// noProcs fails unless no process has one of args as an argument (waiting a
// little for processes already killed to go).
func noProcs(t *testing.T, args ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var found []string
		for _, a := range args {
			found = append(found, procsMatching(a)...)
		}
		if len(found) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %s", strings.Join(found, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mcpSession starts the built hunk as `hunk mcp -C dir args...` and connects
// the Go SDK's own client to it.
func mcpSession(t *testing.T, dir string, roots []string, args ...string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionEnv(t, dir, roots, nil, args...)
}

// mcpSessionEnv is mcpSession with env added to hunk's environment.
func mcpSessionEnv(t *testing.T, dir string, roots []string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	bin := buildHunk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	for _, r := range roots {
		//lint:ignore SA1019 roots are what a client of protocol 2025-11-25 sends; hunk honours them
		client.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	cmd := exec.Command(bin, append([]string{"mcp", "-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "HUNK_CONFIG=/dev/null"), env...)
	cmd.Stderr = os.Stderr
	var opts *mcp.ClientSessionOptions
	if len(roots) > 0 {
		// Roots are a feature of the protocol up to 2025-11-25 (2026-07-28
		// deprecates them).
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return res, strings.Join(text, "\n"), sc
}

// mcpClientScript is the path of a script of testdata/mcpclient, its npm
// packages installed; a machine without node or npm skips the test, or
// fails it when HUNK_REQUIRE_MCP_CLIENT says the clients are required.
func mcpClientScript(t *testing.T, name string) string {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("testdata", "mcpclient", name))
	if err := installMCPClient(filepath.Dir(script)); err != nil {
		if os.Getenv("HUNK_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the TypeScript MCP client is required (HUNK_REQUIRE_MCP_CLIENT): %v", err)
		}
		sandboxtest.Skip(t, "the TypeScript MCP client: %v", err)
	}
	return script
}

// installMCPClient runs `npm ci` in dir unless its packages are there already.
func installMCPClient(dir string) error {
	missing := false
	for _, p := range mcpClientPackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	return npmCI(dir)
}

// npmCI installs dir's npm packages as its lock file pins them.
func npmCI(dir string) error {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("no %s here (apt-get install nodejs npm)", tool)
		}
	}
	c := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return nil
}

// snapshotTree describes every entry under dir: name, mode, size,
// modification time, link target.
func snapshotTree(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		target, _ := os.Readlink(p)
		fmt.Fprintf(&b, "%s %v %d %d %s\n", strings.TrimPrefix(p, dir), fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), target)
		return nil
	})
	return b.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// driverCondition answers [driver:NAME]: the exec driver NAME works here. A
// driver named in HUNK_REQUIRE_DRIVERS (comma-separated; CI sets it) that
// does not work is an error, which fails the script instead of skipping it.
func driverCondition(cond string) (bool, error) {
	_, name, _ := strings.Cut(cond, ":")
	driverMu.Lock()
	defer driverMu.Unlock()
	err, ok := driverWorks[name]
	if !ok {
		err = probeDriver(name)
		driverWorks[name] = err
	}
	if err == nil {
		return true, nil
	}
	for _, r := range strings.Split(os.Getenv("HUNK_REQUIRE_DRIVERS"), ",") {
		if strings.TrimSpace(r) == name {
			return false, fmt.Errorf("driver %s is required (HUNK_REQUIRE_DRIVERS) but does not work here: %v", name, err)
		}
	}
	sandboxtest.NoteSkip("scripts that need driver "+name, err.Error())
	return false, nil
}

func procsMatching(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(append([]byte{0}, b...), []byte("\x00"+s+"\x00")) {
			out = append(out, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// acceptAndClose accepts connections on ln and closes them, until ln is
// closed.
func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// testUser is a user an attack runs as: cred nil is the test's own.
type testUser struct {
	name string
	cred *syscall.Credential
}

var (
	builtHunk, built string // by TestMain (buildOnce)
	buildErr         error
)

// loneUID is a user id no account and no other process has, this run's
// own (from its pid): what a test runs under it shares no per-user limit
// with anything else on the machine.
func loneUID() uint32 {
	for uid := uint32(3_000_000 + os.Getpid()); ; uid++ {
		if _, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
			continue
		}
		if out, _ := exec.Command("pgrep", "-U", strconv.Itoa(int(uid))).Output(); len(out) > 0 {
			continue
		}
		return uid
	}
}
