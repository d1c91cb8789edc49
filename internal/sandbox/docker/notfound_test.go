package docker

import (
	"bytes"
	"strings"
	"testing"
)

// startFailure turns the engine's or the wrapper's first stderr line into
// hunk's message, and passes everything else through untouched, however
// the stream is cut into writes.
func TestStartFailure(t *testing.T) {
	cases := map[string]struct {
		in, out, msg string
		code         int
	}{
		"tini not found":      {"[FATAL tini (7)] exec go failed: No such file or directory\n", "", "go: command not found", 127},
		"tini path":           {"[FATAL tini (7)] exec ./x.sh failed: No such file or directory\n", "", "./x.sh: No such file or directory", 127},
		"tini not executable": {"[FATAL tini (7)] exec ./x failed: Permission denied\n", "", "./x: Permission denied", 126},
		"wrapper":             {"hunk-run: go: command not found\n", "", "go: command not found", 127},
		"wrapper path":        {"hunk-run: ./a b: No such file or directory\n", "", "./a b: No such file or directory", 127},
		"the command's own":   {"hunk-run: go: something else\nmore\n", "hunk-run: go: something else\nmore\n", "", 0},
		"ordinary output":     {"error: [FATAL tini (7)] exec x failed: y\n", "error: [FATAL tini (7)] exec x failed: y\n", "", 0},
		"a prefix and no end": {"[FATAL tin", "[FATAL tin", "", 0},
		"second line":         {"ok\n[FATAL tini (7)] exec go failed: No such file or directory\n", "ok\n[FATAL tini (7)] exec go failed: No such file or directory\n", "", 0},
	}
	for name, c := range cases {
		for _, size := range []int{1, 3, 1 << 10} {
			var out bytes.Buffer
			f := &startFailure{w: &out}
			for in := c.in; in != ""; {
				n := min(size, len(in))
				f.Write([]byte(in[:n]))
				in = in[n:]
			}
			f.flush()
			if out.String() != c.out || f.msg != c.msg || f.code != c.code {
				t.Errorf("%s (writes of %d): out %q msg %q code %d; want %q %q %d", name, size, out.String(), f.msg, f.code, c.out, c.msg, c.code)
			}
		}
	}
}

// FuzzStartFailure: whatever the stream, nothing panics, and what is not
// taken as the start failure comes through unchanged.
func FuzzStartFailure(f *testing.F) {
	f.Add("[FATAL tini (7)] exec go failed: No such file or directory\n", 3)
	f.Add("hunk-run: x: command not found\nrest", 1)
	f.Add("plain", 2)
	f.Fuzz(func(t *testing.T, in string, size int) {
		if size <= 0 {
			size = 1
		}
		var out bytes.Buffer
		s := &startFailure{w: &out}
		for rest := in; rest != ""; {
			n := min(size, len(rest))
			s.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		s.flush()
		if s.msg == "" && out.String() != in {
			t.Fatalf("passed %q, want %q", out.String(), in)
		}
		if s.msg != "" && !strings.HasSuffix(in, out.String()) {
			t.Fatalf("kept %q of %q", out.String(), in)
		}
	})
}
