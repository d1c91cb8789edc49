package egress

import (
	"fmt"
	"strconv"
	"strings"
)

// The door: the proxy is offered to the command on its own loopback, at
// 127.0.0.1:Port — its network namespace has nothing else — by a helper
// inside the sandbox, hunk's own binary in that role (DoorName): it
// listens, starts a forwarder that carries each connection to the run's
// proxy socket (bound into the sandbox at Socket), and then becomes the
// command (execve: same pid, same exit status, same signals).

// DoorName is argv[0] of the door.
const DoorName = "hunk-egress"

// Port is the proxy's port on the command's 127.0.0.1.
const Port = 3128

// Inside the sandbox: where the door's binary and the proxy's socket are
// bound.
const (
	DoorPath = "/run/hunk-egress/" + DoorName
	Socket   = "/run/hunk-egress/proxy.sock"
)

// DoorArgv is the sandbox's command: the door (with the loopback rules it
// keeps, each --loopback ADDR:PORT=TARGET), then argv.
func DoorArgv(loops []Loopback, argv []string) []string {
	a := []string{DoorPath, Socket}
	for _, l := range loops {
		a = append(a, "--loopback", l.Listen.String()+"="+l.Target())
	}
	return append(append(a, "--"), argv...)
}

// ProxyURL is the proxy's address as the command's environment gives it.
var ProxyURL = "http://127.0.0.1:" + strconv.Itoa(Port)

// Env sets the command's proxy variables in env (K=V), in both spellings
// and in the package managers' own, replacing any the command was given;
// the JVM's proxy properties are added to the options Maven and Gradle
// pass it (javaOpts), after the command's own.
func Env(env []string) []string {
	set := map[string]string{
		"HTTP_PROXY": ProxyURL, "HTTPS_PROXY": ProxyURL, "ALL_PROXY": ProxyURL,
		"http_proxy": ProxyURL, "https_proxy": ProxyURL, "all_proxy": ProxyURL,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
		"npm_config_proxy": ProxyURL, "npm_config_https_proxy": ProxyURL, // npm's own settings win over the variables above
		"YARN_HTTP_PROXY": ProxyURL, "YARN_HTTPS_PROXY": ProxyURL, // yarn berry reads only its own
		"CARGO_HTTP_PROXY": ProxyURL,
		"MAVEN_OPTS":       javaOpts, "GRADLE_OPTS": javaOpts, // the JVM reads no variable
	}
	out := env[:0:0]
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch _, ours := set[k]; {
		case k == "MAVEN_OPTS" || k == "GRADLE_OPTS":
			set[k] = v + " " + javaOpts
		case !ours:
			out = append(out, kv)
		}
	}
	for _, k := range envOrder {
		out = append(out, k+"="+set[k])
	}
	return out
}

// javaOpts are the JVM's proxy properties (Maven's and Gradle's
// downloads), localhost left direct.
var javaOpts = fmt.Sprintf("-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=%d -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=%d -Dhttp.nonProxyHosts=localhost|127.0.0.1", Port, Port)

var envOrder = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY", "MAVEN_OPTS", "GRADLE_OPTS"}
