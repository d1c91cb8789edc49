package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script support for hunk exec: the [driver:NAME] condition and the listen
// and noproc commands.

func init() {
	extraConditions["driver"] = driverCondition
	extraCmds["listen"] = cmdListen
	extraCmds["noproc"] = cmdNoproc
}

var (
	driverMu    sync.Mutex
	driverWorks = map[string]error{}
)

// driverCondition answers [driver:NAME]: the exec driver NAME works here. A
// driver named in HUNK_REQUIRE_DRIVERS (comma-separated; CI sets it) that
// does not work is an error, which fails the script instead of skipping it.
func driverCondition(cond string) (bool, error) {
	_, name, _ := strings.Cut(cond, ":")
	driverMu.Lock()
	defer driverMu.Unlock()
	err, ok := driverWorks[name]
	if !ok {
		err = probeDriver(name)
		driverWorks[name] = err
	}
	if err == nil {
		return true, nil
	}
	for _, r := range strings.Split(os.Getenv("HUNK_REQUIRE_DRIVERS"), ",") {
		if strings.TrimSpace(r) == name {
			return false, fmt.Errorf("driver %s is required (HUNK_REQUIRE_DRIVERS) but does not work here: %v", name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "SKIPPING scripts that need driver %s: %v\n", name, err)
	return false, nil
}

// listen tcp VAR: listen on 127.0.0.1 (a free port, put in VAR), accepting
// and closing connections until the script ends.
// listen unix VAR: the same on a new unix socket under /run (root only), its
// path in VAR — a stand-in for the Docker socket.
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: listen tcp|unix VAR")
	}
	var ln net.Listener
	var err error
	switch args[0] {
	case "tcp":
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv(args[1], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	case "unix":
		p := fmt.Sprintf("/run/hunk-script-%d-%d.sock", os.Getpid(), time.Now().UnixNano()%1e9)
		ln, err = net.Listen("unix", p)
		ts.Check(err)
		ts.Setenv(args[1], p)
	default:
		ts.Fatalf("listen: network must be tcp or unix")
	}
	go acceptAndClose(ln)
	ts.Defer(func() { ln.Close() })
}

// noproc ARG: no live process has ARG as one of its arguments (waiting up
// to three seconds for processes already killed to go, on a busy machine).
func cmdNoproc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noproc ARG")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		found := procsMatching(args[0])
		if len(found) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("processes still running: %s", strings.Join(found, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func procsMatching(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(append([]byte{0}, b...), []byte("\x00"+s+"\x00")) {
			out = append(out, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// acceptAndClose accepts connections on ln and closes them, until ln is
// closed.
func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// probeDriver asks `hunk exec --drivers`, in a process of its own (a sandbox
// run owns the orphans of the process that runs it, so none may run inside
// this test process), whether driver name works here.
func probeDriver(name string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	c := exec.Command(exe)
	c.Args = []string{"hunk", "--json", "exec", "--drivers"}
	out, err := c.Output()
	if err != nil {
		return fmt.Errorf("hunk exec --drivers: %v", err)
	}
	var doc struct {
		Details struct {
			Drivers []struct {
				Name      string `json:"name"`
				Available bool   `json:"available"`
				Note      string `json:"note"`
			} `json:"drivers"`
		} `json:"details"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return fmt.Errorf("hunk exec --drivers: %v", err)
	}
	for _, d := range doc.Details.Drivers {
		if d.Name == name {
			if d.Available {
				return nil
			}
			return errors.New(d.Note)
		}
	}
	return fmt.Errorf("no driver %q", name)
}
