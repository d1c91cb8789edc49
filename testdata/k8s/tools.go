//go:build tools

// The test-only tools of hunk's Kubernetes tests, each a published Go
// module built here, never linked into hunk: agent-sandbox's router (and,
// for the long tests, its controller).
package tools

import (
	_ "sigs.k8s.io/agent-sandbox/sandbox-router/cmd"
)
