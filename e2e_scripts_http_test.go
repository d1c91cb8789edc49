//go:build linux

// The script commands that drive `hunk serve`: serveaddr (wait for a
// server's address) and http (one request, its answer printed).
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// serveaddr FILE VAR: wait until FILE (a server's --addr-file) exists, then
// set VAR to http://ADDRESS. Fails if it has not appeared within a minute
// (a server that never starts; not a measure of its speed).
func cmdServeaddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serveaddr FILE VAR")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil {
			ts.Setenv(args[1], "http://"+strings.TrimSpace(string(b)))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear: the server did not start", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// httpShown are the response headers http prints (the others vary from
// run to run, or say nothing a user would check).
var httpShown = []string{"Allow", "Content-Type", "Retry-After", "Www-Authenticate", "X-Hunk-Failed"}

// http [-H 'Name: value']... [-save VAR=Header]... METHOD URL [BODYFILE]:
// send one request and print the status, the headers of httpShown (and
// Mcp-Session-Id as "<set>"), a blank line and the body. -save sets VAR to
// a response header's value. A body file's requests are sent as
// Content-Type: application/json unless -H says otherwise.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: http ... (no negation: check the status it prints)")
	}
	headers := http.Header{}
	saves := map[string]string{}
	for len(args) > 1 && (args[0] == "-H" || args[0] == "-save") {
		switch args[0] {
		case "-H":
			k, v, ok := strings.Cut(args[1], ":")
			if !ok {
				ts.Fatalf("http: -H 'Name: value'")
			}
			headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		case "-save":
			k, v, ok := strings.Cut(args[1], "=")
			if !ok {
				ts.Fatalf("http: -save VAR=Header")
			}
			saves[k] = v
		}
		args = args[2:]
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: http [-H 'Name: value']... [-save VAR=Header]... METHOD URL [BODYFILE]")
	}
	var body io.Reader
	if len(args) == 3 {
		f, err := os.Open(ts.MkAbs(args[2]))
		ts.Check(err)
		defer f.Close()
		body = f
		if headers.Get("Content-Type") == "" {
			headers.Set("Content-Type", "application/json")
		}
	}
	req, err := http.NewRequest(args[0], args[1], body)
	ts.Check(err)
	for k, v := range headers {
		req.Header[k] = v
	}
	if v := headers.Get("Host"); v != "" {
		req.Host = v
	}
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	var out strings.Builder
	fmt.Fprintf(&out, "%d\n", resp.StatusCode)
	shown := append([]string(nil), httpShown...)
	sort.Strings(shown)
	for _, k := range shown {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(&out, "%s: %s\n", k, v)
		}
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		out.WriteString("Mcp-Session-Id: <set>\n")
	}
	out.WriteString("\n")
	out.Write(b)
	ts.Stdout().Write([]byte(out.String()))
	for k, h := range saves {
		ts.Setenv(k, resp.Header.Get(h))
	}
}
