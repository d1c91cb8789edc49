package docker

import (
	"bytes"
	"io"
	"strings"
)

// A command the container cannot start is said as the other drivers say it
// ("NAME: command not found" or, for a path, "PATH: No such file or
// directory", exit 127; "NAME: Permission denied", 126),
// not in the words of whatever stands between the engine and the command:
// the engine's init (tini: "[FATAL tini (7)] exec NAME failed: No such file
// or directory") in cold mode, hunk's own wrapper script in warm mode. Both
// write one line to stderr before anything of the command could, so
// startFailure looks at the first line of stderr only, holding back no more
// than that line, and only while it can still be one of those messages.

// The two lines, without a regular expression (compiling one at start-up
// would cost every hunk run a fifth of a millisecond):
//
//	[FATAL tini (N)] exec NAME failed: WHY
//	hunk-run: NAME: command not found | No such file or directory | Permission denied

// tiniFailure parses tini's line: the command's name and why it failed.
func tiniFailure(line string) (name, why string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "[FATAL tini (")
	if !ok {
		return "", "", false
	}
	if _, rest, ok = strings.Cut(rest, ")] exec "); !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, " failed: ")
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+len(" failed: "):], true
}

// wrapperFailure parses the warm wrapper's line.
func wrapperFailure(line string) (name, why string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "hunk-run: ")
	if !ok {
		return "", "", false
	}
	for _, w := range []string{"command not found", "No such file or directory", "Permission denied"} {
		if n, ok := strings.CutSuffix(rest, ": "+w); ok && n != "" {
			return n, w, true
		}
	}
	return "", "", false
}

// startFailure passes stderr through to w, except a first line that says
// the command could not be started, which it keeps as msg (with the exit
// code a shell would give: 127 or 126).
type startFailure struct {
	w    io.Writer
	buf  []byte
	done bool // the first line is past
	msg  string
	code int
}

func (f *startFailure) Write(p []byte) (int, error) {
	if f.done {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
		line := f.buf[:i+1]
		if f.match(line) {
			f.buf = f.buf[i+1:]
		}
		return len(p), f.flush()
	}
	if !couldBe(f.buf) {
		return len(p), f.flush()
	}
	return len(p), nil
}

// flush writes what is held back and passes the rest through.
func (f *startFailure) flush() error {
	f.done = true
	b := f.buf
	f.buf = nil
	if len(b) == 0 {
		return nil
	}
	_, err := f.w.Write(b)
	return err
}

// couldBe reports whether b is the start of one of the messages.
func couldBe(b []byte) bool {
	for _, prefix := range []string{"[FATAL tini (", "hunk-run: "} {
		n := min(len(b), len(prefix))
		if string(b[:n]) == prefix[:n] {
			return len(b) < 4096
		}
	}
	return false
}

func (f *startFailure) match(line []byte) bool {
	if name, why, ok := tiniFailure(string(line)); ok {
		switch {
		case strings.Contains(why, "No such file") && strings.Contains(name, "/"):
			f.msg, f.code = name+": No such file or directory", 127
		case strings.Contains(why, "No such file"):
			f.msg, f.code = name+": command not found", 127
		case strings.Contains(why, "Permission denied"):
			f.msg, f.code = name+": Permission denied", 126
		default:
			f.msg, f.code = name+": "+why, 126
		}
		return true
	}
	if name, why, ok := wrapperFailure(string(line)); ok {
		f.msg, f.code = name+": "+why, 127
		if why == "Permission denied" {
			f.code = 126
		}
		return true
	}
	return false
}
