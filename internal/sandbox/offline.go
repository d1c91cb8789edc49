package sandbox

import (
	"bytes"
	"strings"
)

// Offline by default means failing fast. Without --network a package
// manager that does not know it is offline retries its registry until the
// timeout (npm, pip, cargo); told so through its own settings, it fails in
// seconds with its own message. OfflineEnv are those settings, each unless
// the command's environment sets it already.
var offlineVars = []string{
	"npm_config_offline=true", // npm: only the cache (ENOTCACHED at once)
	"npm_config_audit=false",  // npm: no audit request after an install
	"npm_config_fund=false",   //
	"npm_config_update_notifier=false",
	"NO_UPDATE_NOTIFIER=1",
	"YARN_ENABLE_OFFLINE_MODE=true", // yarn 2+
	"PIP_NO_INDEX=1",                // pip: no package index, only --find-links
	"PIP_DISABLE_PIP_VERSION_CHECK=1",
	"CARGO_NET_OFFLINE=true", // cargo --offline
	"GOPROXY=off",            // go: no module download (CacheEnv's own proxy list comes first)
	"UV_OFFLINE=1",           // uv
}

// OfflineEnv returns the variables that tell package managers they have no
// network, leaving out those env (K=V) already sets.
func OfflineEnv(env []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	for _, kv := range offlineVars {
		k, _, _ := strings.Cut(kv, "=")
		if !set[k] {
			out = append(out, kv)
		}
	}
	return out
}

// networkSigns are what commands print when they tried the network and
// could not have it: a refused socket (landlock: EAFNOSUPPORT), no route or
// no name resolution (bwrap's and docker's empty network), and the offline
// modes above refusing a download.
var networkSigns = []string{
	"Address family not supported", "address family not supported", "EAFNOSUPPORT", // C, Go
	"Network is unreachable", "network is unreachable", "ENETUNREACH",
	"Temporary failure in name resolution", "Name or service not known", "EAI_AGAIN", "ENOTFOUND",
	"Could not resolve host", "Could not resolve hostname", "getaddrinfo", "no such host",
	"ENOTCACHED", "only-if-cached", // npm offline
	"module lookup disabled by GOPROXY=off", "GOPROXY=off", // go
	"offline mode", "--offline", "You're offline", // cargo, yarn
	"No matching distribution found", // pip without an index
	"Failed to establish a new connection",
	"unable to access 'http", // git
	"dial tcp", "dial udp",
}

// TriedNetwork reports whether a command's output shows it tried to reach
// the network (which the sandbox did not give it).
func TriedNetwork(out ...[]byte) bool {
	for _, b := range out {
		for _, s := range networkSigns {
			if bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}
