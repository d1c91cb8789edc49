//go:build linux

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hunk-dev/hunk/internal/sandbox/egress/egresstest"
	"github.com/hunk-dev/hunk/internal/sandbox/sandboxtest"
)

// internet is the test's "internet": servers on loopback addresses other
// than 127.0.0.1, named by the test's DNS, which hunk's egress proxy asks
// (--dns). No other address is ever contacted.
type internet struct {
	dns        string
	http, tls  string       // ports of registry.test on 127.0.0.2: plain and TLS
	trap       string       // port of the trap, listening on every address: must never be reached
	trap6      string       // port of the trap on the host's ::1 ("" no IPv6 loopback here)
	trapHits   atomic.Int32 // requests the trap got
	rebindHits atomic.Int32 // requests 127.0.0.3 got (the rebound address)
	nobody     bool         // run hunk as uid 65534
	unixSock   string       // a unix socket of the host's, listening: no command may reach it
}

// hostAddr is an address of this host other than loopback ("" none).
func hostAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

func startInternet(t *testing.T) *internet {
	t.Helper()
	in := &internet{}
	files := registryFiles(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/npm/") && !strings.HasSuffix(r.URL.Path, ".tgz") {
			self := "http://registry.test:" + in.http
			if r.TLS != nil {
				self = "https://registry.test:" + in.tls
			}
			b = bytes.ReplaceAll(b, []byte("REGISTRY"), []byte(self))
		}
		w.Write(b)
	})
	listen := func(addr string) net.Listener {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen %s: %v", addr, err)
		}
		return ln
	}
	// The ports are known before any server starts: the handler reads
	// them (set after Start, the race detector saw the write race a read).
	plain := &httptest.Server{Listener: listen("127.0.0.2:0"), Config: &http.Server{Handler: mux}}
	secure := &httptest.Server{Listener: listen("127.0.0.2:0"), Config: &http.Server{Handler: mux}}
	_, in.http, _ = net.SplitHostPort(plain.Listener.Addr().String())
	_, in.tls, _ = net.SplitHostPort(secure.Listener.Addr().String())
	plain.Start()
	t.Cleanup(plain.Close)
	secure.StartTLS()
	t.Cleanup(secure.Close)
	trap := &httptest.Server{Listener: listen("0.0.0.0:0"), Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.trapHits.Add(1)
	})}}
	trap.Start()
	t.Cleanup(trap.Close)
	_, in.trap, _ = net.SplitHostPort(trap.Listener.Addr().String())
	if ln6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		trap6 := &httptest.Server{Listener: ln6, Config: trap.Config}
		trap6.Start()
		t.Cleanup(trap6.Close)
		_, in.trap6, _ = net.SplitHostPort(ln6.Addr().String())
	}
	rebound := &httptest.Server{Listener: listen("127.0.0.3:" + in.http), Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.rebindHits.Add(1)
		fmt.Fprint(w, "rebound")
	})}}
	rebound.Start()
	t.Cleanup(rebound.Close)

	in.unixSock = filepath.Join(os.TempDir(), fmt.Sprintf("hunk-egress-test-%d.sock", os.Getpid()))
	os.Remove(in.unixSock)
	uln, err := net.Listen("unix", in.unixSock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uln.Close(); os.Remove(in.unixSock) })
	go acceptAndClose(uln)
	table := map[string]string{"registry.test": "127.0.0.2", "evil.test": "127.0.0.2", "loop.test": "127.0.0.1", "meta.test": "169.254.169.254"}
	if a := hostAddr(); a != "" {
		table["self.test"] = a
	}
	fixed := egresstest.Table(table)
	in.dns = egresstest.DNS(t, func(name string, n int) []netip.Addr {
		if name == "rebind.test" { // DNS rebinding: the allowed address, then a loopback one
			if n%2 == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.3")}
		}
		return fixed(name, n)
	})
	return in
}

// registryFiles are what registry.test serves: a file, a git repository
// (git's dumb HTTP), an npm package and a Python wheel with their indexes.
func registryFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{"/f.txt": []byte("hello from the registry\n")}
	// git: a bare repository with one commit, served as files.
	dir := t.TempDir()
	for _, c := range [][]string{
		{"init", "-q", "-b", "main", "src"},
		{"-C", "src", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", "src", "repo.git"},
		{"-C", "repo.git", "update-server-info"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", c, err, out)
		}
	}
	root := filepath.Join(dir, "repo.git")
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			files["/repo.git/"+filepath.ToSlash(rel)] = b
		}
		return nil
	})
	// npm: a package "tiny" 1.0.0.
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	pkg := []byte(`{"name":"tiny","version":"1.0.0","main":"index.js"}`)
	for name, b := range map[string][]byte{"package/package.json": pkg, "package/index.js": []byte("module.exports = 'tiny';\n")} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(1700000000, 0)})
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	sha := sha1.Sum(tgz.Bytes())
	s512 := sha512.Sum512(tgz.Bytes())
	files["/npm/tiny/-/tiny-1.0.0.tgz"] = tgz.Bytes()
	meta, _ := json.Marshal(map[string]any{"name": "tiny", "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{"name": "tiny", "version": "1.0.0",
			"dist": map[string]string{"tarball": "REGISTRY/npm/tiny/-/tiny-1.0.0.tgz", "shasum": hex.EncodeToString(sha[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:])}}}})
	files["/npm/tiny"] = meta
	// pip: a wheel "tiny" 1.0 and its simple index.
	var whl bytes.Buffer
	w := zip.NewWriter(&whl)
	for name, body := range map[string]string{
		"tiny/__init__.py":             "",
		"tiny-1.0.dist-info/METADATA":  "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
		"tiny-1.0.dist-info/WHEEL":     "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"tiny-1.0.dist-info/RECORD":    "",
		"tiny-1.0.dist-info/top_level": "tiny\n",
	} {
		f, _ := w.Create(name)
		f.Write([]byte(body))
	}
	w.Close()
	wsum := sha256.Sum256(whl.Bytes())
	files["/files/tiny-1.0-py3-none-any.whl"] = whl.Bytes()
	files["/simple/tiny/"] = []byte(fmt.Sprintf(`<html><body><a href="/files/tiny-1.0-py3-none-any.whl#sha256=%x">tiny-1.0-py3-none-any.whl</a></body></html>`, wsum))
	return files
}

// egressRun is one hunk exec --json run: its exit code, the model's text
// and details.network.
type egressRun struct {
	code    int
	text    string
	stdout  string
	network struct {
		Connections int
		Reached     []struct{ Host string }
		Denied      []struct{ Host, Reason, AllowHost string }
	}
}

func (in *internet) exec(t *testing.T, bin, ws, driver string, args ...string) egressRun {
	t.Helper()
	c := exec.Command(bin, append([]string{"exec", "--json", "--driver", driver, "--dns", in.dns, "--timeout", "60"}, args...)...)
	c.Dir = ws
	c.Env = append(os.Environ(), "HUNK_EXEC_IMAGE="+imageFor(driver), "XDG_RUNTIME_DIR="+filepath.Join(filepath.Dir(ws), "run"))
	if in.nobody {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		c.Env = append(c.Env, "HOME="+filepath.Join(filepath.Dir(ws), "home"), "XDG_CACHE_HOME="+filepath.Join(filepath.Dir(ws), "home", "cache"),
			"XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "home", "state"), "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(ws), "home", "config"))
	}
	out, _ := c.Output()
	var doc struct {
		Content []struct{ Text string }
		Details struct {
			ExitCode int
			Stdout   string
			Network  json.RawMessage
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("hunk exec %v: not JSON: %v\n%s", args, err, out)
	}
	r := egressRun{code: doc.Details.ExitCode, stdout: doc.Details.Stdout}
	if len(doc.Content) > 0 {
		r.text = doc.Content[0].Text
	}
	if len(doc.Details.Network) > 0 {
		json.Unmarshal(doc.Details.Network, &r.network)
	}
	return r
}

func imageFor(driver string) string {
	if driver == "docker" {
		return sandboxtest.ImageName()
	}
	return ""
}

// TestExecEgress: under bwrap and docker, a command with --allow-host
// reaches the allowed hosts through hunk's proxy and nothing else — not a
// denied host, not a name leading to the host's own services or the cloud
// metadata, not an address a second lookup gives, not a socket it opens
// itself — and the result says what was blocked and how to allow it.
func TestExecEgress(t *testing.T) {
	bin := buildHunk(t)
	in := startInternet(t)
	for _, driver := range []string{"bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws, _ := egressDirs(t)
			allow := []string{"--allow-host", "registry.test:" + in.http, "--allow-host", "registry.test:" + in.tls, "--allow-host", "127.0.0.2"}
			run := func(sh string, extra ...string) egressRun {
				t.Helper()
				return in.exec(t, bin, ws, driver, append(append(append([]string{}, allow...), extra...), "--sh", sh)...)
			}
			if driver == "docker" {
				egressBusybox(t, in, run)
				// The host's tools in the test image: its /usr shown read-only.
				host := []string{"--ro", "/usr", "--ro", "/lib", "--ro", "/lib64", "--ro", "/etc/ssl", "--env", "PATH=/usr/bin:/bin"}
				toolsRun := run
				run = func(sh string, extra ...string) egressRun { return toolsRun(sh, append(host, extra...)...) }
			}
			egressTools(t, in, driver, run)
			egressDenied(t, in, driver, run)
			if in.trapHits.Load() != 0 || in.rebindHits.Load() != 0 {
				t.Errorf("a denied address was reached: trap %d, rebound %d", in.trapHits.Load(), in.rebindHits.Load())
			}
		})
	}
}

// TestExecEgressDoor: bwrap without root, where hunk cannot place the
// proxy's listener in the sandbox's namespace itself: the door (hunk's
// binary bound in) offers it, through the run's socket. Run as nobody
// when the tests run as root (the other tests then cover the listener
// hunk places).
func TestExecEgressDoor(t *testing.T) {
	needDriver(t, "bwrap")
	bin := buildHunk(t)
	in := startInternet(t)
	top, err := os.MkdirTemp("", "hunk-egress-door-") // t.TempDir's parent is private to root
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	ws := filepath.Join(top, "ws")
	for _, d := range []string{ws, filepath.Join(top, "run"), filepath.Join(top, "home")} {
		must(t, os.MkdirAll(d, 0o700))
	}
	if os.Geteuid() == 0 {
		in.nobody = true
		for _, d := range []string{top, ws, filepath.Join(top, "run"), filepath.Join(top, "home")} {
			must(t, os.Chown(d, 65534, 65534))
		}
	}
	reg := "registry.test:" + in.http
	r := in.exec(t, bin, ws, "bwrap", "--allow-host", reg, "--allow-host", "registry.test:"+in.tls, "--allow-host", "127.0.0.2",
		"--sh", "curl -sS http://"+reg+"/f.txt; curl -sSk https://registry.test:"+in.tls+"/f.txt; curl -sS http://evil.test/; ls /run/hunk-egress")
	if strings.Count(r.stdout, "hello from the registry") != 2 || !strings.Contains(r.text, "blocked: evil.test:80 (not in --allow-host)") ||
		!strings.Contains(r.stdout, "hunk-egress\nproxy.sock") {
		t.Errorf("through the door: exit %d\n%s", r.code, r.text)
	}
}

// egressTools: the host's curl, wget, git, npm and pip through the proxy,
// over HTTP and HTTPS (CONNECT).
func egressTools(t *testing.T, in *internet, driver string, run func(string, ...string) egressRun) {
	reg, regTLS := "registry.test:"+in.http, "registry.test:"+in.tls
	pip := "pip"
	if driver == "docker" {
		pip = "python3 -m pip" // the host's python3 under /usr
	}
	for _, c := range []struct {
		name, sh, want string
	}{
		{"curl http", "curl -sS http://" + reg + "/f.txt", "hello from the registry"},
		{"curl https", "curl -sSk https://" + regTLS + "/f.txt", "hello from the registry"},
		{"wget http", "/usr/bin/wget -qO- http://" + reg + "/f.txt", "hello from the registry"},
		{"wget https", "/usr/bin/wget -qO- --no-check-certificate https://" + regTLS + "/f.txt", "hello from the registry"},
		{"git http", "git clone -q http://" + reg + "/repo.git g1 && git -C g1 log --format=%s", "first"},
		{"git https", "GIT_SSL_NO_VERIFY=1 git clone -q https://" + regTLS + "/repo.git g2 && git -C g2 log --format=%s", "first"},
		{"npm http", "npm install --no-audit --no-fund --registry http://" + reg + "/npm/ tiny >/dev/null && cat node_modules/tiny/index.js", "module.exports = 'tiny';"},
		{"npm https", "rm -rf node_modules; npm install --no-audit --no-fund --strict-ssl=false --registry https://" + regTLS + "/npm/ tiny >/dev/null && cat node_modules/tiny/index.js", "module.exports = 'tiny';"},
		{"pip http", pip + " download -q --disable-pip-version-check --no-deps --index-url http://" + reg + "/simple/ --trusted-host registry.test -d wheels tiny && ls wheels", "tiny-1.0-py3-none-any.whl"},
		{"pip https", "rm -rf wheels; " + pip + " download -q --disable-pip-version-check --no-deps --index-url https://" + regTLS + "/simple/ --trusted-host registry.test -d wheels tiny && ls wheels", "tiny-1.0-py3-none-any.whl"},
	} {
		tool, _, _ := strings.Cut(c.name, " ")
		_, err := exec.LookPath(tool)
		if err == nil && tool == "pip" && driver == "docker" {
			err = exec.Command("/usr/bin/python3", "-m", "pip", "--version").Run() // the host's /usr, shown in the image
		}
		if err != nil {
			if sandboxtest.Required("HUNK_REQUIRE_TOOLS", tool) {
				t.Errorf("%s: HUNK_REQUIRE_TOOLS names it, and it is not installed here: %v", c.name, err)
			} else {
				t.Logf("%s: not installed here, not tried", c.name)
			}
			continue
		}
		r := run(c.sh)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s: exit %d, want %q in the output:\n%s", c.name, r.code, c.want, r.text)
			continue
		}
		if len(r.network.Reached) == 0 || !strings.HasPrefix(r.network.Reached[0].Host, "registry.test:") || !strings.Contains(r.text, "reached: registry.test:") {
			t.Errorf("%s: reached %+v; text:\n%s", c.name, r.network.Reached, r.text)
		}
	}
	// Nothing but the proxy: a socket the command opens itself reaches
	// nothing (no address but its own loopback, no DNS), and the other
	// unix sockets of the host are not there.
	r := run(`curl -sS --noproxy '*' --max-time 5 http://127.0.0.2:` + in.http + `/f.txt; echo "direct=$?"; ` +
		`curl -sS --noproxy '*' --max-time 5 http://registry.test:` + in.http + `/f.txt; echo "dns=$?"; ` +
		`python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2); s.sendto(b"x", ("127.0.0.2", 53)); s.recv(10)'; echo "udp=$?"; ` +
		`python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'; echo "raw=$?"; ` +
		`python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("` + in.unixSock + `")'; echo "unix=$?"; ` +
		`ls /run /var/run`)
	for _, want := range []string{"direct=7", "dns=6", "udp=1", "raw=1", "unix=1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("a socket of the command's own reached something (want %s):\n%s", want, r.text)
		}
	}
	if strings.Contains(r.stdout, "docker.sock") {
		t.Errorf("the host's Docker socket is visible:\n%s", r.text)
	}
}

// egressBusybox: busybox's wget (HTTP) and a CONNECT by hand in the
// docker driver's test image.
func egressBusybox(t *testing.T, in *internet, run func(string, ...string) egressRun) {
	r := run("wget -qO- http://registry.test:" + in.http + "/f.txt")
	if r.code != 0 || !strings.Contains(r.stdout, "hello from the registry") || !strings.Contains(r.text, "reached: registry.test:"+in.http) {
		t.Errorf("wget through the proxy: exit %d\n%s", r.code, r.text)
	}
	r = run(`printf 'CONNECT registry.test:` + in.tls + ` HTTP/1.1\r\nHost: registry.test:` + in.tls + `\r\n\r\n' | nc 127.0.0.1 3128 | head -1`)
	if !strings.Contains(r.stdout, "HTTP/1.1 200 Connection established") {
		t.Errorf("CONNECT through the proxy: exit %d\n%s", r.code, r.text)
	}
	r = run("nc -w 3 127.0.0.2 " + in.http + " </dev/null; echo direct=$?")
	if !strings.Contains(r.stdout, "direct=1") {
		t.Errorf("a socket of the command's own reached something:\n%s", r.text)
	}
}

// egressDenied: what is refused, and what the model is told.
func egressDenied(t *testing.T, in *internet, driver string, run func(string, ...string) egressRun) {
	get := "curl -sS --fail-with-body --max-time 10 "
	if driver == "docker" {
		// busybox's wget crashes on a proxy's 403: a request by hand.
		get = `get() { printf 'GET %s HTTP/1.0\r\n\r\n' "$1" | nc 127.0.0.1 3128; }; get `
	}
	r := run(get + "http://evil.test/")
	if (driver == "bwrap" && r.code != 22) || len(r.network.Denied) != 1 || r.network.Denied[0].Host != "evil.test:80" || r.network.Denied[0].AllowHost != "evil.test" ||
		!strings.Contains(r.text, "blocked: evil.test:80 (not in --allow-host); add --allow-host evil.test") {
		t.Errorf("a host not allowed: exit %d, denied %+v\n%s", r.code, r.network.Denied, r.text)
	}
	if driver == "bwrap" && !strings.Contains(r.stdout, "hunk egress: blocked evil.test:80 (not in --allow-host); add --allow-host evil.test") {
		t.Errorf("the proxy's answer does not say why:\n%s", r.text)
	}
	ssrf := []struct{ url, rule, want string }{
		{"http://loop.test:" + in.trap + "/", "loop.test:" + in.trap, "resolves to 127.0.0.1, a loopback address"},
		{"http://meta.test/latest/meta-data/", "meta.test", "resolves to 169.254.169.254, a link-local address (cloud metadata)"},
		{"http://[::ffff:127.0.0.1]:" + in.trap + "/", "", "blocked: 127.0.0.1:" + in.trap + " (not in --allow-host)"},
		{"http://evil.test:" + in.http + "/", "*", "blocked: evil.test:" + in.http + " (port " + in.http + " not in --allow-host); add --allow-host evil.test:" + in.http},
	}
	if a := hostAddr(); a != "" {
		ssrf = append(ssrf, struct{ url, rule, want string }{"http://self.test:" + in.trap + "/", "self.test:" + in.trap, "resolves to " + a + ", an address of this host"})
	}
	if in.trap6 != "" { // the zone picks the host's interface; no prefix of the deny set holds a zoned address
		zget := get // curl drops the zone: the request by hand, as an attacker writes it
		if driver == "bwrap" {
			zget = `python3 -c 'import socket, sys; s = socket.create_connection(("127.0.0.1", 3128)); s.sendall(("GET %s HTTP/1.0\r\n\r\n" % sys.argv[1]).encode()); print(s.recv(4096).decode())' `
		}
		r := run(zget+"http://[::1%25lo]:"+in.trap6+"/secret.txt", "--allow-host", "*:"+in.trap6)
		if !strings.Contains(r.text, "an IPv6 address with a zone (%lo) is not accepted") || strings.Contains(r.text, "reached:") {
			t.Errorf("the host's ::1 written with a zone: exit %d\n%s", r.code, r.text)
		}
	}
	for _, c := range ssrf {
		var extra []string
		if c.rule != "" {
			extra = []string{"--allow-host", c.rule}
		}
		r := run(get+c.url, extra...)
		if !strings.Contains(r.text, c.want) {
			t.Errorf("%s (allowed by name: %q): exit %d, want %q:\n%s", c.url, c.rule, r.code, c.want, r.text)
		}
	}
	// DNS rebinding: the first lookup gives the allowed address, the
	// second a loopback one; each connection goes where its own lookup,
	// checked, said.
	r = run(get+"http://rebind.test:"+in.http+"/f.txt; echo; "+get+"http://rebind.test:"+in.http+"/f.txt", "--allow-host", "rebind.test:"+in.http)
	if !strings.Contains(r.stdout, "hello from the registry") || !strings.Contains(r.text, "resolves to 127.0.0.3, a loopback address") {
		t.Errorf("rebinding: exit %d\n%s", r.code, r.text)
	}
	if driver == "bwrap" {
		egressCall(t, in, get)
	}
	egressSmallRecords(t, in, run)
	// --deny-host wins over --allow-host.
	r = run(get+"http://registry.test:"+in.http+"/f.txt", "--deny-host", "registry.test")
	if !strings.Contains(r.text, "denied by --deny-host registry.test") {
		t.Errorf("--deny-host: exit %d\n%s", r.code, r.text)
	}
}

// smallRecords is a Python script that tunnels to the host of argv[1]
// through the proxy and sends a ClientHello for the server name argv[2],
// ALPN-padded and cut into 2-byte TLS records (over 80 KB on the wire),
// then prints how many bytes the server answered.
const smallRecords = `import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["%03d" % i + "p" * 247 for i in range(100)] + ["http/1.1"])
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, out, server_hostname=sys.argv[2])
try: tls.do_handshake()
except ssl.SSLWantReadError: pass
rec, msg = out.read(), b""
while rec:
    n = int.from_bytes(rec[3:5], "big"); msg += rec[5:5+n]; rec = rec[5+n:]
wire = b"".join(b"\x16\x03\x01\x00" + bytes([len(msg[i:i+2])]) + msg[i:i+2] for i in range(0, len(msg), 2))
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (sys.argv[1], sys.argv[1])).encode())
head = s.recv(4096)
s.sendall(wire)
s.settimeout(10)
try: got = s.recv(65536)
except Exception: got = b""
print("wire=%d answered=%d" % (len(wire), len(got)))
`

// egressSmallRecords: a tunnel to an allowed name whose ClientHello asks
// for another, written in records too small for any bound on the wire
// bytes, is judged on the message and refused; the same hello for the
// allowed name goes through.
func egressSmallRecords(t *testing.T, in *internet, run func(string, ...string) egressRun) {
	reg := "registry.test:" + in.tls
	sh := "cat > /tmp/hello.py <<'EOF'\n" + smallRecords + "EOF\npython3 /tmp/hello.py " + reg + " "
	r := run(sh + "secret.test")
	if !strings.Contains(r.stdout, "answered=0") || !strings.Contains(r.text, "the TLS server name in a tunnel to registry.test") ||
		strings.Contains(r.text, "reached: registry.test") {
		t.Errorf("a hello for secret.test in 2-byte records through a tunnel to %s: exit %d\n%s", reg, r.code, r.text)
	}
	r = run(sh + "registry.test")
	if strings.Contains(r.stdout, "answered=0") || !strings.Contains(r.stdout, "wire=") || !strings.Contains(r.text, "reached: "+reg) {
		t.Errorf("a hello for registry.test in 2-byte records: exit %d\n%s", r.code, r.text)
	}
}

// egressDirs are a test's workspace and, beside it, the runtime directory
// where a run's proxy socket is made (in.exec's XDG_RUNTIME_DIR).
func egressDirs(t *testing.T) (ws, rundir string) {
	base := t.TempDir()
	ws, rundir = filepath.Join(base, "ws"), filepath.Join(base, "run")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(rundir, 0o700))
	return ws, rundir
}

// TestExecEgressRunsApart: a run's proxy serves that run alone — another
// run's command, sandboxed at the same time with other rules, can neither
// see the first run's socket nor get through its own proxy to the first
// run's hosts — and it ends with its run.
func TestExecEgressRunsApart(t *testing.T) {
	bin := buildHunk(t)
	in := startInternet(t)
	for _, driver := range []string{"bwrap", "docker"} {
		t.Run(driver, func(t *testing.T) {
			needDriver(t, driver)
			ws, rundir := egressDirs(t)
			a := exec.Command(bin, "exec", "--driver", driver, "--dns", in.dns, "--allow-host", "registry.test:"+in.http, "--allow-host", "127.0.0.2",
				"--sh", "touch started; sleep 30")
			a.Dir, a.Env = ws, append(os.Environ(), "HUNK_EXEC_IMAGE="+imageFor(driver), "XDG_RUNTIME_DIR="+rundir)
			must(t, a.Start())
			defer a.Process.Kill()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
					break
				}
			}
			// bwrap as root: hunk put the proxy's listener in the first run's
			// own network namespace, no socket on the host; else the
			// door's socket, which the second run must not reach.
			socks, _ := filepath.Glob(filepath.Join(rundir, "hunk-egress-*", "run-*", "proxy.sock"))
			inside := driver == "bwrap" && os.Geteuid() == 0
			if inside != (len(socks) == 0) {
				t.Fatalf("the first run's proxy sockets: %v (bwrap as root: none expected)", socks)
			}
			get := "curl -sS --max-time 5 http://registry.test:" + in.http + "/f.txt; echo own=$?"
			if len(socks) == 1 {
				get = "curl -sS --max-time 5 --unix-socket " + socks[0] + " http://registry.test:" + in.http + "/f.txt; echo sock=$?; " + get
			}
			if driver == "docker" {
				get = "ls " + filepath.Dir(socks[0]) + "; echo sock=$?; " +
					`printf 'GET http://registry.test:` + in.http + `/f.txt HTTP/1.0\r\n\r\n' | nc 127.0.0.1 3128; echo own=$?`
			}
			r := in.exec(t, bin, ws, driver, "--allow-host", "other.test", "--sh", get)
			if strings.Contains(r.stdout, "hello from the registry") {
				t.Errorf("the second run reached the first run's host:\n%s", r.text)
			}
			if !strings.Contains(r.text, "blocked: registry.test:"+in.http+" (not in --allow-host)") {
				t.Errorf("the second run's own proxy did not refuse the first run's host:\n%s", r.text)
			}
			if ok, _ := driverCondition("driver:bwrap"); len(socks) == 1 && ok {
				// A run shown the place of the first run's socket (--rw of
				// its directory, as a --rw /tmp would be) cannot name it:
				// the runs' parent is hidden as hunk's own state.
				r := in.exec(t, bin, ws, "bwrap", "--allow-host", "other.test", "--rw", rundir, "--sh",
					"curl -sS --max-time 5 --unix-socket "+socks[0]+" http://registry.test:"+in.http+"/f.txt; echo sock=$?; ls -a "+filepath.Dir(filepath.Dir(socks[0])))
				if strings.Contains(r.stdout, "hello from the registry") || strings.Contains(r.stdout, "run-") {
					t.Errorf("a run given --rw of the first run's socket place reached it:\n%s", r.text)
				}
			}
			a.Process.Signal(os.Interrupt)
			a.Wait()
			if m, _ := filepath.Glob(filepath.Join(rundir, "hunk-egress-*")); len(m) != 0 {
				t.Errorf("the first run's proxy outlived it: %v", m)
			}
		})
	}
}

// egressCall: an exec call of hunk call's, under its --allow-host: the
// model reads the blocked host and the rule to add, a harness finds them
// in the result's network details.
func egressCall(t *testing.T, in *internet, get string) {
	t.Helper()
	ws := t.TempDir()
	c := exec.Command(buildHunk(t), "call", "--driver", "bwrap", "--dns", in.dns, "--allow-host", "registry.test:"+in.http, "--allow-host", "127.0.0.2")
	c.Dir, c.Stdin = ws, strings.NewReader(`{"tool":"exec","arguments":{"command":"`+get+`http://evil.test/x; `+get+`http://registry.test:`+in.http+`/f.txt"}}`)
	out, err := c.Output()
	for _, want := range []string{
		`blocked: evil.test:80 (not in --allow-host); add --allow-host evil.test\nreached: registry.test:` + in.http + `\nExit code: 0`,
		`"network":{"connections":1,`, `"denied":[{"host":"evil.test:80","reason":"not in --allow-host","allowHost":"evil.test","count":1}]`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("hunk call's exec result lacks %s (%v):\n%s", want, err, out)
		}
	}
}
