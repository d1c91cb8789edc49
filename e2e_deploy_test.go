//go:build linux

// deploy/agent-sandbox/ against agent-sandbox v0.5.6's CRD schemas, and
// its pod's hunk serve flags against hunk itself.
package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// agentSandboxCRDs is the directory of agent-sandbox v0.5.6's CRDs in the
// module cache (testdata/k8s requires the module).
func agentSandboxCRDs(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "testdata/k8s", "sigs.k8s.io/agent-sandbox"), "k8s", "crds")
}

// TestDeployManifests: every object of deploy/agent-sandbox/ is valid as
// agent-sandbox v0.5.6's CRDs (and the built-in kinds) define it — no
// missing required field, no field the API server would drop — and the
// checker refuses a misspelled pod field and a claim without its warm
// pool.
func TestDeployManifests(t *testing.T) {
	check := k8sTool(t, "crdcheck")
	crds := agentSandboxCRDs(t)
	files, _ := filepath.Glob("deploy/agent-sandbox/*.yaml")
	if len(files) < 4 {
		t.Fatalf("deploy/agent-sandbox/ holds %d manifests", len(files))
	}
	out, err := exec.Command(check, append([]string{crds}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("deploy/agent-sandbox/ is not valid: %v\n%s", err, out)
	}
	for _, kind := range []string{"SandboxTemplate/hunk", "SandboxWarmPool/hunk", "SandboxClaim/task-1", "Secret/hunk-serve-token"} {
		if !strings.Contains(string(out), ": "+kind+"\n") {
			t.Errorf("%s was not checked:\n%s", kind, out)
		}
	}
	bad := t.TempDir()
	tmpl, _ := os.ReadFile("deploy/agent-sandbox/sandboxtemplate.yaml")
	claim, _ := os.ReadFile("deploy/agent-sandbox/sandboxclaim.yaml")
	os.WriteFile(filepath.Join(bad, "t.yaml"), []byte(strings.Replace(string(tmpl), "readOnlyRootFilesystem:", "readOnlyRootFileSystem:", 1)), 0o644)
	os.WriteFile(filepath.Join(bad, "c.yaml"), []byte(strings.Replace(string(claim), "warmPoolRef:", "warmPool:", 1)), 0o644)
	out, err = exec.Command(check, crds, filepath.Join(bad, "t.yaml"), filepath.Join(bad, "c.yaml")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "readOnlyRootFileSystem: unknown field") || !strings.Contains(string(out), "spec.warmPoolRef: Required value") {
		t.Errorf("the checker passed broken manifests: %v\n%s", err, out)
	}
}

// templateServeArgs are the arguments deploy/agent-sandbox's template
// gives hunk in the pod (after the binary).
func templateServeArgs(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("deploy/agent-sandbox/sandboxtemplate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Spec struct {
			PodTemplate struct {
				Spec struct {
					Containers []struct {
						Command []string `yaml:"command"`
						Args    []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"podTemplate"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	for _, c := range tmpl.Spec.PodTemplate.Spec.Containers {
		if len(c.Command) == 1 && c.Command[0] == "/opt/hunk/hunk" {
			return c.Args
		}
	}
	t.Fatal("the template has no container running /opt/hunk/hunk")
	return nil
}
