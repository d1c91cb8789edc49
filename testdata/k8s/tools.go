//go:build tools

// The test-only tools of hunk's Kubernetes tests, built here and never
// linked into hunk: agent-sandbox's router from its published module, and
// crdcheck (this module's own), which validates manifests against
// agent-sandbox's CRDs. The long test's control plane is ./controlplane's.
package tools

import (
	_ "sigs.k8s.io/agent-sandbox/sandbox-router/cmd"
)
