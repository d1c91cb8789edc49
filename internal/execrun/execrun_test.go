package execrun

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/policy"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/sandbox"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// state gives hunk a private state and config directory for the test.
func state(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	t.Setenv("HOME", base)
	t.Setenv("HUNK_CONFIG", "")
	return base
}

func open(t *testing.T, dir string, rules ...policy.Rule) *workspace.Workspace {
	t.Helper()
	opt := workspace.Options{}
	if len(rules) > 0 {
		opt.Rules = func(string) (*policy.Policy, error) { return policy.New(rules, false) }
	}
	ws, err := workspace.Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A write-denied path that does not exist yet gets a placeholder for the
// sandbox to mount read-only; the run's end removes it.
func TestPreparePlaceholders(t *testing.T) {
	state(t)
	dir := t.TempDir()
	ws := open(t, dir, policy.Rule{Kind: policy.WriteDeny, Pattern: "/ci/", Source: "test"})
	run, err := Prepare(ws, Command{Argv: []string{"true"}, Limits: Limits{Driver: "bwrap"}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	ci := filepath.Join(dir, "ci")
	if fi, err := os.Stat(ci); err != nil || !fi.IsDir() {
		t.Fatalf("no placeholder at %s: %v", ci, err)
	}
	found := false
	for _, m := range run.Spec.Policy {
		found = found || m.Path == ci && m.Mode == sandbox.MountReadOnly
	}
	if !found {
		t.Errorf("the spec does not mount %s read-only: %+v", ci, run.Spec.Policy)
	}
	// A second run over the workspace shares it: the first to end leaves
	// it, the last removes it.
	second, err := Prepare(ws, Command{Argv: []string{"true"}, Limits: Limits{Driver: "bwrap"}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	run.Release()
	if _, err := os.Stat(ci); err != nil {
		t.Fatalf("the placeholder went while a run still holds it: %v", err)
	}
	second.Release()
	if _, err := os.Stat(ci); !os.IsNotExist(err) {
		t.Errorf("the placeholder outlived every run: %v", err)
	}
}

// A keep-warm container cannot hold a placeholder: the run says so and
// uses a new one.
func TestPreparePlaceholderColdContainer(t *testing.T) {
	state(t)
	ws := open(t, t.TempDir(), policy.Rule{Kind: policy.WriteDeny, Pattern: "/ci/", Source: "test"})
	var warned []string
	run, err := Prepare(ws, Command{Argv: []string{"true"}, Limits: Limits{Driver: "docker", KeepWarm: true}}, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer run.Release()
	if run.Spec.KeepWarm || len(warned) != 1 || !strings.Contains(warned[0], "placeholder") {
		t.Errorf("keep-warm %v, warnings %q", run.Spec.KeepWarm, warned)
	}
}

// hunk's own state inside the workspace is hidden from the command (made
// first when it is missing, so the command cannot make it); a workspace
// inside hunk's own state is refused.
func TestPrepareOwnState(t *testing.T) {
	base := state(t)
	ws := open(t, base)
	run, err := Prepare(ws, Command{Argv: []string{"true"}, Limits: Limits{Driver: "bwrap"}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Release()
	for _, want := range []string{filepath.Join(base, "state", "hunk"), filepath.Join(base, "config", "hunk")} {
		found := false
		for _, o := range run.Spec.Own {
			found = found || o == want
		}
		if !found {
			t.Errorf("own state %s is not hidden: %q", want, run.Spec.Own)
		}
		if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s was not made 0700 before the run: %v", want, err)
		}
	}
	inside := filepath.Join(base, "state", "hunk", "history")
	if err := os.MkdirAll(inside, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(open(t, inside), Command{Argv: []string{"true"}, Limits: Limits{Driver: "bwrap"}}, func(string) {})
	if e := result.As(err); e == nil || e.Code != result.LimitUnenforceable {
		t.Errorf("a workspace inside hunk's state: %v, want LIMIT_UNENFORCEABLE", err)
	}
	// Driver none hides nothing: it holds nothing.
	run, err = Prepare(ws, Command{Argv: []string{"true"}, Limits: Limits{Driver: "none"}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	run.Release()
	if len(run.Spec.Own) != 0 {
		t.Errorf("driver none: own %q", run.Spec.Own)
	}
}

func TestPrepareEnvironmentAndPaths(t *testing.T) {
	state(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"sub/x": "x"})
	ro := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ro, link); err != nil {
		t.Fatal(err)
	}
	ws := open(t, dir)
	run, err := Prepare(ws, Command{Argv: []string{"true"}, Workdir: "sub", Env: []string{"A=1"},
		Limits: Limits{Driver: "bwrap", RO: []string{ro, link, ro}}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Release()
	if want, _ := filepath.EvalSymlinks(filepath.Join(dir, "sub")); run.Spec.Workdir != want {
		t.Errorf("workdir %s, want %s", run.Spec.Workdir, want)
	}
	realRO, _ := filepath.EvalSymlinks(ro)
	if !reflect.DeepEqual(run.Spec.RO, []string{realRO, realRO}) || run.Spec.ROAt[1] != link {
		t.Errorf("ro %q at %q: want the path once where it is and once where the link names it", run.Spec.RO, run.Spec.ROAt)
	}
	env := strings.Join(run.Spec.Env, "\n")
	for _, want := range []string{"A=1", "PATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "HUNK_CONFIG") || strings.Contains(env, "XDG_STATE_HOME") {
		t.Errorf("hunk's own variables reached the command:\n%s", env)
	}
	for _, c := range []Command{
		{Argv: []string{"true"}, Workdir: "sub/x", Limits: Limits{Driver: "bwrap"}},
		{Argv: []string{"true"}, Workdir: "../", Limits: Limits{Driver: "bwrap"}},
		{Argv: []string{"true"}, Limits: Limits{Driver: "bwrap", RW: []string{"/no/such/path"}}},
	} {
		if run, err := Prepare(ws, c, func(string) {}); err == nil {
			run.Release()
			t.Errorf("%+v was taken", c)
		}
	}
}

// A recorded command's changes become one operation: changed, made and
// removed files, a mode change; .git and what the policy keeps the command
// from writing are not scanned.
func TestRecord(t *testing.T) {
	state(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.txt": "a", "gone.txt": "g", "same.txt": "s", "run.sh": "x", ".git/config": "c", "locked/f": "l"})
	ws := open(t, dir, policy.Rule{Kind: policy.WriteDeny, Pattern: "/locked/", Source: "test"})
	scan, err := RecordBefore(ws)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "A", "new/b.txt": "b", ".git/config": "changed", "locked/f": "L"})
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	id, err := RecordAfter(ws, scan, []string{"sh", "-c", "work"}, &workspace.Recording{Command: "exec"})
	if err != nil || id == "" {
		t.Fatalf("recorded %q, %v", id, err)
	}
	store, _ := ws.History()
	e, err := store.Find(id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Command != "exec sh -c work" {
		t.Errorf("command %q", e.Command)
	}
	var got []string
	for _, f := range e.Files {
		kind := "M"
		switch {
		case f.Pre == nil:
			kind = "A"
		case f.Post == nil:
			kind = "D"
		}
		got = append(got, kind+" "+f.Path)
		if f.Path == "a.txt" {
			if data, err := store.Blob(f.Pre); err != nil || string(data) != "a" {
				t.Errorf("a.txt's old content: %q, %v", data, err)
			}
		}
	}
	sort.Strings(got)
	if want := []string{"A new", "A new/b.txt", "D gone.txt", "M a.txt", "M run.sh"}; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	// A run that changed nothing records nothing.
	scan, err = RecordBefore(ws)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := RecordAfter(ws, scan, []string{"true"}, &workspace.Recording{Command: "exec"}); id != "" || err != nil {
		t.Errorf("an idle run recorded %q, %v", id, err)
	}
}

func TestRecordBounded(t *testing.T) {
	state(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"big": strings.Repeat("x", 2000)})
	ws, err := workspace.Open(dir, workspace.Options{History: workspace.HistoryOptions{Limits: &history.Limits{Bytes: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RecordBefore(ws); result.As(err) == nil || result.As(err).Code != result.TooLarge {
		t.Errorf("a workspace over the history's size: %v, want TOO_LARGE", err)
	}
}

func TestHint(t *testing.T) {
	notFound := sandbox.Result{ExitCode: 127, NotStarted: "cargo: not found", Driver: "bwrap"}
	if h := Hint(Limits{Driver: "bwrap"}, notFound, false, "/usr/bin", Surface{}); !strings.Contains(h, "not on the command's PATH (/usr/bin)") {
		t.Errorf("missing program: %q", h)
	}
	git := sandbox.Result{ExitCode: 128, Stderr: []byte("fatal: Unable to create '/w/.git/index.lock': Read-only file system\n")}
	if h := Hint(Limits{Driver: "bwrap"}, git, true, "", Surface{}); !strings.Contains(h, "--git-write") {
		t.Errorf("read-only .git: %q", h)
	}
	if h := Hint(Limits{Driver: "bwrap"}, git, false, "", Surface{}); h != "" {
		t.Errorf("a .git not protected got %q", h)
	}
	if h := Hint(Limits{Driver: "bwrap"}, sandbox.Result{}, true, "", Surface{}); h != "" {
		t.Errorf("a run that succeeded got %q", h)
	}
}

// TestHintSurfaces: the same advice in each surface's words — flags on the
// command line, the exec tool's own argument or the person running hunk
// for a tool call, never a flag the model cannot pass.
func TestHintSurfaces(t *testing.T) {
	timedOut := sandbox.Result{ExitCode: 124, TimedOut: true, Driver: "bwrap"}
	l := Limits{Driver: "bwrap", Timeout: 30 * time.Second}
	noNet := sandbox.Result{ExitCode: 6, Stderr: []byte("curl: (6) Could not resolve host: example.com\n"), Driver: "bwrap"}
	read := func(id, stream string, offset int) string { return "read " + id }
	for _, c := range []struct {
		name    string
		sf      Surface
		r       sandbox.Result
		l       Limits
		want    string
		wantNot string
	}{
		{"cli timeout", Surface{}, timedOut, l, "give it more time with --timeout (exec.timeout), e.g. --timeout 5m;", "timeoutSeconds"},
		{"tool timeout below the most", ToolSurface(120*time.Second, read), timedOut, l, "ask for more time with the exec tool's timeoutSeconds, up to this server's 120", "--timeout"},
		{"tool timeout at the most", ToolSurface(30*time.Second, read), timedOut, l, "30 seconds is the most this server allows a command; the person running hunk sets it (hunk mcp --timeout", "timeoutSeconds,"},
		{"tool timeout, no most", ToolSurface(0, read), timedOut, l, "timeoutSeconds, e.g. 300", "--timeout"},
		{"cli network", Surface{}, noNet, l, "the sandbox has no network; to let it reach example.com alone (through hunk's proxy), add --allow-host example.com; for every host, add --network", "person"},
		{"tool network", ToolSurface(0, read), noNet, l, "a tool call cannot change that: the person running hunk sets it (hunk mcp --allow-host example.com to let it reach example.com alone, or --network, config exec.network.allow)", "add --"},
	} {
		h := Hint(c.l, c.r, false, "", c.sf)
		if !strings.Contains(h, c.want) || (c.wantNot != "" && strings.Contains(h, c.wantNot)) {
			t.Errorf("%s: %q", c.name, h)
		}
	}
}
