package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestApplyPatchFlags checks how flags and configuration become options,
// without running anything.
func TestApplyPatchFlags(t *testing.T) {
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("apply-patch:\n  compat: codex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want applyPatchOptions
	}{
		{"defaults", []string{"apply-patch"}, nil, applyPatchOptions{Strip: -1, Format: "auto"}},
		{"file and flags", []string{"apply-patch", "--diff", "--check", "-p", "2", "x.patch"}, nil,
			applyPatchOptions{File: "x.patch", Diff: true, DryRun: true, Strip: 2, Format: "auto"}},
		{"dry-run", []string{"apply-patch", "--dry-run", "-"}, nil, applyPatchOptions{File: "-", DryRun: true, Strip: -1, Format: "auto"}},
		{"compat flag", []string{"apply-patch", "--compat", "codex"}, nil, applyPatchOptions{Compat: "codex", Strip: -1, Format: "auto"}},
		{"compat env", []string{"apply-patch"}, map[string]string{"HUNK_APPLY_PATCH_COMPAT": "codex"}, applyPatchOptions{Compat: "codex", Strip: -1, Format: "auto"}},
		{"compat config", []string{"--config", cfg, "apply-patch"}, nil, applyPatchOptions{Compat: "codex", Strip: -1, Format: "auto"}},
		{"format", []string{"apply-patch", "--format", "search-replace"}, nil, applyPatchOptions{Strip: -1, Format: "search-replace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HUNK_CONFIG", "")
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			t.Setenv("HUNK_APPLY_PATCH_COMPAT", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var got *applyPatchOptions
			var out bytes.Buffer
			app := &App{Stdin: &bytes.Buffer{}, Stdout: &out, Stderr: &out}
			root := rootWith(app, newApplyPatchCmd(app, func(_ *App, o *applyPatchOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			if err := root.Execute(); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			if got == nil || *got != tt.want {
				t.Errorf("options %+v, want %+v", got, tt.want)
			}
		})
	}
}
