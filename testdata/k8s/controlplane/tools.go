//go:build tools

// The control plane of the long Kubernetes test, built from the Go module
// proxy and never linked into hunk: kube-apiserver (k8s.io/kubernetes as a
// module, its staging modules at their published versions), kwok (the
// kubelet side) and agent-sandbox's controller.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
