package execrun

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/hunk-dev/hunk/internal/read"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// A model's view of a run: the exit status first and last, each stream cut
// to its head and tail within a budget that survives the harnesses whole
// (docs/exec.md, "What a model gets"), and where something was left out, a
// marker saying how much and how to read the rest — the streams as hunk
// captured them, kept in hunk's own state (SaveOutput) and paged with the
// read tool (OpenOutput).

// DefaultShown is the most bytes of each stream a model's result shows.
const DefaultShown = 8 << 10

// Streams are the two streams by name, in the order a result shows them.
var Streams = []string{"stdout", "stderr"}

// Refer says how to read a stored stream from line offset on, in the
// words of the surface that shows the result (a tool call, a command);
// id is "" when nothing was stored ("": nothing to say).
type Refer func(id, stream string, offset int) string

// Shown is a stream as a model's result shows it.
type Shown struct {
	Head, Tail string // what is shown: the whole stream in Head when nothing is left out
	Omitted    int64  // bytes left out (0: the whole stream is shown)
	Lines      int    // lines left out
	TailLine   int    // line number of the first line of the tail
	HeadLines  int    // lines of the head (the omitted part starts at HeadLines+1)
}

// Shorten cuts b to at most n bytes (n > 0), half from its head and half
// from its tail, each cut at a line break where one is near; the middle is
// left out.
func Shorten(b []byte, n int) Shown {
	if n <= 0 || len(b) <= n {
		return Shown{Head: string(b)}
	}
	head := b[:n/2]
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	tail := b[len(b)-n/2:]
	// A tail that does not start a line starts at the next one.
	if i := bytes.IndexByte(tail, '\n'); b[len(b)-n/2-1] != '\n' && i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	mid := b[len(head) : len(b)-len(tail)]
	hl := bytes.Count(head, []byte{'\n'})
	ml := bytes.Count(mid, []byte{'\n'})
	return Shown{Head: string(head), Tail: string(tail), Omitted: int64(len(mid)), Lines: ml, HeadLines: hl, TailLine: hl + ml + 1}
}

// ModelText is the text of a run's result for a model: "Exit code: N"
// first (when there is output) and last, the streams (StreamsText), the
// note and the hint.
func ModelText(r Reported, shown int, id string, refer Refer) string {
	var b strings.Builder
	code := fmt.Sprintf("Exit code: %d", r.Details.ExitCode)
	if out := StreamsText(r.Details, shown, id, refer); out != "" {
		b.WriteString(code + "\n" + out)
	}
	for _, l := range r.Network {
		b.WriteString(l + "\n")
	}
	if r.Note != "" {
		b.WriteString(r.Note + "\n")
	}
	if r.Hint != "" {
		b.WriteString("hint: " + r.Hint + "\n")
	}
	b.WriteString(code)
	return b.String()
}

// Budget is the most bytes of a stream a result shows for the setting
// shown: 0 is DefaultShown, negative no bound (-1).
func Budget(shown int64) int64 {
	switch {
	case shown == 0:
		return DefaultShown
	case shown < 0:
		return -1
	}
	return shown
}

// StreamsText is stdout then stderr, each as StreamText shows it.
func StreamsText(d *Details, shown int, id string, refer Refer) string {
	return StreamText(d.Stdout, "stdout", shown, id, refer) + StreamText(d.Stderr, "stderr", shown, id, refer)
}

// StreamText is a stream (named stream) ending in a line break, cut to
// shown bytes (Budget) with a marker where part was left out: how much,
// which lines, and how to see them (refer, given id: the stored streams'
// id, "" none). An empty stream is "".
func StreamText(s, stream string, shown int, id string, refer Refer) string {
	if s == "" {
		return ""
	}
	sh := Shorten([]byte(s), int(Budget(int64(shown))))
	text := sh.Head
	if sh.Omitted > 0 {
		where := fmt.Sprintf("lines %d-%d", sh.HeadLines+1, sh.TailLine-1)
		if sh.TailLine-1 <= sh.HeadLines+1 {
			where = fmt.Sprintf("in line %d", sh.HeadLines+1)
		}
		m := fmt.Sprintf("\n[... %s of %s left out, %s", size(sh.Omitted), stream, where)
		if refer != nil {
			if how := refer(id, stream, sh.HeadLines+1); how != "" {
				m += "; " + how
			}
		}
		text += m + " ...]\n" + sh.Tail
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text
}

// ShellRefer is how a model with a shell and no read of hunk's sees what a
// result left out: by running the command again, narrowed.
func ShellRefer(string, string, int) string {
	return "to see them, run the command again piped through head, tail or grep"
}

// ForModel is r's text for a model (ModelText) showing shown bytes of
// each stream; when it leaves part of them out, the captured streams are
// kept in the workspace's outputs (Details.OutputID names them) and the
// text says how to read them, in the surface's words. A store that fails
// only loses the reference.
func ForModel(ws *workspace.Workspace, r Reported, shown int64, sf Surface) string {
	refer := sf.read()
	var id string
	if Cut(r.Details, int(shown)) {
		if dir, err := ws.StateDir("output"); err == nil {
			id, _ = SaveOutput(dir, []byte(r.Details.Stdout), []byte(r.Details.Stderr))
		}
	}
	r.Details.OutputID = id
	return ModelText(r, int(shown), id, refer)
}

// ReadFlags is how hunk read reads a stored stream.
func ReadFlags(id, stream string, offset int) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf("read them: hunk read --exec-output %s/%s --offset %d", id, stream, offset)
}

// Cut reports whether showing shown bytes of each stream (Budget) leaves
// part of d's output out.
func Cut(d *Details, shown int) bool {
	b := Budget(int64(shown))
	return b >= 0 && (int64(len(d.Stdout)) > b || int64(len(d.Stderr)) > b)
}

// Prepend puts line before a result's text, after its first line when
// that is the exit status (which stays first, for a harness that keeps only
// the start).
func Prepend(text, line string) string {
	if first, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(first, "Exit code: ") {
		return first + "\n" + line + "\n" + rest
	}
	return line + "\n" + text
}

// size says n bytes as a person reads it: "812 bytes", "41.3 KB", "2.0 MB".
func size(n int64) string {
	switch {
	case n < 1000:
		return plural(int(n), "byte")
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
	}
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// Retention of stored outputs, per workspace: the newest runs, within a
// total size.
const (
	keepOutputs     = 32
	keepOutputBytes = 64 << 20
)

// outputID is a stored output's id: 8 lowercase hex digits.
var outputID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{8}$`) })

// SaveOutput stores a run's captured streams in dir (the workspace's
// outputs, in hunk's own state) under a new id, then drops the oldest
// stored outputs beyond the retention.
func SaveOutput(dir string, stdout, stderr []byte) (string, error) {
	var raw [4]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw[:])
	if err := unix.Mkdir(filepath.Join(dir, id), 0o700); err != nil {
		return "", err
	}
	// Written through the run's directory as made (no link followed on
	// the way), each file new.
	run, err := openRun(dir, id)
	if err == nil {
		defer unix.Close(run)
		for i, s := range [][]byte{stdout, stderr} {
			if err = writeNew(run, Streams[i], s); err != nil {
				break
			}
		}
	}
	if err != nil {
		os.RemoveAll(filepath.Join(dir, id))
		return "", err
	}
	pruneOutputs(dir, id)
	return id, nil
}

// openRun opens a stored run's directory in dir, never through a link.
func openRun(dir, id string) (int, error) {
	return unix.Open(filepath.Join(dir, id), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// writeNew creates name in the directory run (it must not exist) holding b.
func writeNew(run int, name string, b []byte) error {
	fd, err := unix.Openat(run, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pruneOutputs removes the oldest stored outputs of dir beyond the
// retention (keep: the one just stored).
func pruneOutputs(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type run struct {
		name  string
		mtime int64
		size  int64
	}
	var runs []run
	for _, e := range ents {
		if !e.IsDir() || !outputID().MatchString(e.Name()) {
			continue
		}
		r := run{name: e.Name()}
		if fi, err := e.Info(); err == nil {
			r.mtime = fi.ModTime().UnixNano()
		}
		for _, s := range Streams {
			if fi, err := os.Lstat(filepath.Join(dir, e.Name(), s)); err == nil {
				r.size += fi.Size()
			}
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].mtime > runs[j].mtime })
	var total int64
	for i, r := range runs {
		total += r.size
		if r.name != keep && (i >= keepOutputs || total > keepOutputBytes) {
			os.RemoveAll(filepath.Join(dir, r.name))
		}
	}
}

// OpenOutput opens a stored stream, named as an exec result names it:
// "ID/stdout" or "ID/stderr". A name of any other form, or an output
// no longer kept, is an error saying so.
func OpenOutput(dir, name string) (*os.File, int64, error) {
	id, stream, ok := strings.Cut(name, "/")
	if !ok || !outputID().MatchString(id) || (stream != "stdout" && stream != "stderr") {
		return nil, 0, result.Usagef("%q is not an exec output: give it as the exec result names it, ID/stdout or ID/stderr", name)
	}
	// The run's directory and its file, each opened without following a
	// link: decided on what is opened.
	fd, err := openRun(dir, id)
	if err == nil {
		run := fd
		fd, err = unix.Openat(run, stream, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		unix.Close(run)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, result.Errorf(result.NotFound, "exec output %s is not kept (hunk keeps the output of the newest %d runs of a workspace whose output a result cut)", name, keepOutputs).
				WithHint("run the command again")
		}
		return nil, 0, result.Wrap(result.IOError, err, "exec output "+name)
	}
	f := os.NewFile(uintptr(fd), name)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, result.Errorf(result.IOError, "exec output %s is not a regular file", name)
	}
	return f, fi.Size(), nil
}

// ReadOutput pages through a stored stream (name: "ID/stdout" or
// "ID/stderr") as read pages a file.
func ReadOutput(ws *workspace.Workspace, name string, o read.Options) (*read.Result, error) {
	dir, err := ws.StateDir("output")
	if err != nil {
		return nil, result.Errorf(result.NotFound, "exec output %s: %v", name, err)
	}
	f, size, err := OpenOutput(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	disp := "exec output " + name
	return read.ReadText(disp, f, size, o, func(err error) error { return result.Wrap(result.IOError, err, disp) })
}
