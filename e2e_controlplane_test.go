//go:build linux

// The real control plane, offline (a long test: HUNK_LONG_TESTS=1):
// kube-apiserver v1.36.3 on Debian's etcd, kwok v0.8.0 as the kubelet and
// agent-sandbox v0.5.6's controller, all built from the Go module proxy by
// testdata/k8s/controlplane; deploy/agent-sandbox/ applied to it, a claim
// taken from the warm pool, and a hunk serve standing in for the claimed
// pod's process reached through agent-sandbox's router by the claim's
// sandbox name.
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// controlPlaneTools builds kube-apiserver, kwok and agent-sandbox's
// controller (testdata/k8s/controlplane) into dir.
func controlPlaneTools(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, pkg := range map[string]string{
		"kube-apiserver":           "k8s.io/kubernetes/cmd/kube-apiserver",
		"kwok":                     "sigs.k8s.io/kwok/cmd/kwok",
		"agent-sandbox-controller": "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller",
	} {
		bin := filepath.Join(dir, name)
		c := exec.Command("go", "build", "-o", bin, pkg)
		c.Dir = "testdata/k8s/controlplane"
		c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		if b, err := c.CombinedOutput(); err != nil {
			if os.Getenv("HUNK_REQUIRE_K8S_TOOLS") != "" {
				t.Fatalf("go build %s: %v\n%s", pkg, err, b)
			}
			sandboxtest.Skip(t, "the control plane: go build %s: %v", pkg, err)
		}
		out[name] = bin
	}
	return out
}

// kube is a client of the test's API server: a static token, its
// self-signed certificate taken as it is.
type kube struct {
	t      *testing.T
	server string
	token  string
	http   *http.Client
}

// do sends one request; body is YAML or JSON (nil: none). It returns the
// status and the answer.
func (k *kube) do(method, path string, body any) (int, map[string]any) {
	k.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			k.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, k.server+path, r)
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.http.Do(req)
	if err != nil {
		return 0, map[string]any{"error": err.Error()}
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// create POSTs obj, failing the test unless it is created.
func (k *kube) create(path string, obj any) {
	k.t.Helper()
	if status, out := k.do("POST", path, obj); status != http.StatusCreated {
		k.t.Fatalf("POST %s: %d %v", path, status, out)
	}
}

// wait polls path until ok says so, or fails after limit (a control plane
// that never gets there; not a measure of its speed).
func (k *kube) wait(path string, limit time.Duration, ok func(map[string]any) bool) map[string]any {
	k.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		status, out := k.do("GET", path, nil)
		if status == 200 && ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("GET %s never got there: %d status %v", path, status, at(out, "status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// yamlObjects reads a manifest file's objects.
func yamlObjects(t *testing.T, file string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var o map[string]any
		if err := dec.Decode(&o); err == io.EOF {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
}

// at walks a decoded object by keys.
func at(o any, keys ...string) any {
	for _, k := range keys {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[k]
	}
	return o
}

// startProc starts a control-plane process, logged to a file of dir,
// killed at the test's end.
func startProc(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("%s's log (its end):\n%s", name, b)
		}
	})
}

// TestControlPlane: deploy/agent-sandbox/ on the real API server and
// controller, a claim served from the warm pool, and the agent's flow
// through the router by the claim's sandbox name.
func TestControlPlane(t *testing.T) {
	if !longTests() {
		t.Skip("a long test (it builds kube-apiserver): HUNK_LONG_TESTS=1")
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("HUNK_REQUIRE_K8S_TOOLS") != "" {
			t.Fatal("etcd is required (apt-get install etcd-server)")
		}
		sandboxtest.Skip(t, "etcd is not installed (apt-get install etcd-server)")
	}
	dir := t.TempDir()
	tools := controlPlaneTools(t, filepath.Dir(buildHunk(t)))
	router := k8sTool(t, "sandbox-router")

	// etcd and the API server on loopback ports.
	etcdClient, etcdPeer, apiPort := freePort(t), freePort(t), freePort(t)
	startProc(t, dir, "etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClient),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClient),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeer))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	keyFile := filepath.Join(dir, "sa.key")
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	token := "cp-" + fmt.Sprint(time.Now().UnixNano())
	os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600)
	startProc(t, dir, "kube-apiserver", tools["kube-apiserver"],
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdClient),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(apiPort),
		"--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "RBAC", "--service-cluster-ip-range", "10.96.0.0/16",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", keyFile,
		"--service-account-signing-key-file", keyFile, "--enable-priority-and-fairness=false")
	k := &kube{t: t, server: fmt.Sprintf("https://127.0.0.1:%d", apiPort), token: token,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	start := time.Now()
	k.wait("/readyz", 3*time.Minute, func(map[string]any) bool { return true })
	t.Logf("kube-apiserver ready in %v", time.Since(start).Round(time.Millisecond))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: offline
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: offline
  context: {cluster: offline, user: admin}
current-context: offline
`, k.server, token)), 0o600)

	// What kube-controller-manager would have made: the default service
	// account. The kwok node, and its kubelet.
	k.wait("/api/v1/namespaces/default", time.Minute, func(map[string]any) bool { return true })
	k.create("/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "default"}})
	k.create("/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "kwok-node", "labels": map[string]any{"type": "kwok"}},
		"status": map[string]any{"allocatable": map[string]any{"cpu": "32", "memory": "256Gi", "pods": "110"},
			"capacity": map[string]any{"cpu": "32", "memory": "256Gi", "pods": "110"}}})
	kwokArgs := []string{tools["kwok"], "--kubeconfig", kubeconfig, "--manage-all-nodes", "--node-ip", "127.0.0.1",
		"--server-address", fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	for _, stage := range []string{"node/fast/node-initialize.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"} {
		kwokArgs = append(kwokArgs, "--config", filepath.Join(moduleDir(t, "testdata/k8s/controlplane", "sigs.k8s.io/kwok"), "kustomize", "stage", stage))
	}
	startProc(t, dir, "kwok", kwokArgs...)

	// agent-sandbox's CRDs, at their storage version only and without the
	// conversion webhook that does not exist here; then its controller.
	for _, f := range mustGlob(t, filepath.Join(agentSandboxCRDs(t), "*.yaml")) {
		for _, crd := range yamlObjects(t, f) {
			spec := crd["spec"].(map[string]any)
			delete(spec, "conversion")
			var served []any
			for _, v := range spec["versions"].([]any) {
				if at(v, "storage") == true {
					served = append(served, v)
				}
			}
			spec["versions"] = served
			k.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
			name := at(crd, "metadata", "name").(string)
			k.wait("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, time.Minute, func(o map[string]any) bool {
				return condition(o, "Established")
			})
		}
	}
	startProc(t, dir, "controller", tools["agent-sandbox-controller"], "--kubeconfig", kubeconfig,
		"--extensions=true", "--enable-webhook=false", "--leader-elect=false",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)))

	// deploy/agent-sandbox/, the template pinned to the kwok node (no
	// scheduler) on the host's network (so that kwok gives the pod the
	// node's address, 127.0.0.1, where the stand-in listens).
	ws := t.TempDir()
	s := serveWithToken(t, ws, "cp-hunk-token-0123456789")
	for _, o := range yamlObjects(t, "deploy/agent-sandbox/token-secret.yaml") {
		o["stringData"] = map[string]any{"token": "cp-hunk-token-0123456789"}
		k.create("/api/v1/namespaces/default/secrets", o)
	}
	for _, o := range yamlObjects(t, "deploy/agent-sandbox/sandboxtemplate.yaml") {
		pod := at(o, "spec", "podTemplate", "spec").(map[string]any)
		pod["nodeName"], pod["hostNetwork"] = "kwok-node", true
		k.create("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxtemplates", o)
	}
	for _, o := range yamlObjects(t, "deploy/agent-sandbox/sandboxwarmpool.yaml") {
		o["spec"].(map[string]any)["replicas"] = 1
		k.create("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxwarmpools", o)
	}
	start = time.Now()
	k.wait("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxwarmpools/hunk", 3*time.Minute, func(o map[string]any) bool {
		return fmt.Sprint(at(o, "status", "readyReplicas")) == "1"
	})
	t.Logf("the warm pool was ready in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	for _, o := range yamlObjects(t, "deploy/agent-sandbox/sandboxclaim.yaml") {
		k.create("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims", o)
	}
	claim := k.wait("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims/task-1", 3*time.Minute, func(o map[string]any) bool {
		return condition(o, "Ready") && at(o, "status", "sandbox", "name") != nil
	})
	sandbox := at(claim, "status", "sandbox", "name").(string)
	t.Logf("claim task-1 -> sandbox %s Ready in %v (from the warm pool)", sandbox, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		// No garbage collector here: the sandbox goes explicitly.
		k.do("DELETE", "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims/task-1", nil)
		k.do("DELETE", "/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/"+sandbox, nil)
	})

	// The router finds the claimed pod by its name (its pod cache), and
	// the stand-in answers on the pod's address.
	proxy, health := freePort(t), freePort(t)
	startProc(t, dir, "router", router, "--http-bind-address", fmt.Sprintf("127.0.0.1:%d", proxy),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--allow-loopback-pod-ip", "--cache-enabled=true", "--cache-namespace", "default", "--kubeconfig", kubeconfig)
	_, port := splitURLPort(t, s.url)
	headers := map[string]string{"X-Sandbox-ID": sandbox, "X-Sandbox-Namespace": "default", "X-Sandbox-Port": port, "X-Hunk-Token": "cp-hunk-token-0123456789"}
	routerURL := fmt.Sprintf("http://127.0.0.1:%d", proxy)
	deadline := time.Now().Add(time.Minute)
	for {
		status, _, _, _ := post(routerURL, `{"tool":"read","arguments":{"path":"."}}`, headers)
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the router never reached sandbox %s by its name: last status %d", sandbox, status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cs := connectHTTP(t, routerURL+"/mcp", "2025-11-25", headers)
	defer cs.Close()
	agentFlow(t, cs, ws)
	if !strings.Contains(s.stderr.String(), `"sandbox":"`+sandbox+`"`) {
		t.Errorf("hunk serve's log names no call for sandbox %s:\n%s", sandbox, s.stderr)
	}
}

// moduleDir is where a module required by the module in dir lies in the
// module cache.
func moduleDir(t *testing.T, dir, module string) string {
	t.Helper()
	c := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	c.Dir = dir
	c.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}

// condition reports whether an object's status condition typ is True.
func condition(o map[string]any, typ string) bool {
	list, _ := at(o, "status", "conditions").([]any)
	for _, c := range list {
		if at(c, "type") == typ && at(c, "status") == "True" {
			return true
		}
	}
	return false
}

func mustGlob(t *testing.T, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: nothing (%v)", pattern, err)
	}
	return m
}

// splitURLPort is an http://HOST:PORT URL's host and port.
func splitURLPort(t *testing.T, url string) (string, string) {
	host, port, ok := strings.Cut(strings.TrimPrefix(url, "http://"), ":")
	if !ok {
		t.Fatal(url)
	}
	return host, port
}
