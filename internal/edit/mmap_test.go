//go:build unix

package edit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// TestTruncatedMapping: a big file truncated while it is mapped gives an
// IO_ERROR, not a crash.
func TestTruncatedMapping(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.txt")
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 2*mapMin/17)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	content, release, err := readContent(workspace.Disk(ws), "big.txt", int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !bytes.Equal(content, data) {
		t.Fatal("mapped content differs")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err = func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var res *Result
		defer recoverFault("big.txt", &res, &err)
		_ = bytes.Count(content, []byte{'\n'})
		return nil
	}()
	var re *result.Error
	if !errors.As(err, &re) || re.Code != result.IOError {
		t.Fatalf("got %v, want IO_ERROR", err)
	}
}

// TestRunBigFile edits a mapped file through Run and checks the result.
func TestRunBigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.txt")
	data := bytes.Repeat([]byte("0123456789abcdef\r\n"), 2*mapMin/18)
	data = append(data, "the end\r\n"...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(workspace.Disk(ws), "big.txt", []Edit{{OldText: "the end\n", NewText: "the\nreal end\n"}}, Options{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := append(bytes.Repeat([]byte("0123456789abcdef\r\n"), 2*mapMin/18), "the\r\nreal end\r\n"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("content differs (len %d, want %d)", len(got), len(want))
	}
	if res.Match[0] != LineEndings || res.FirstChangedLine != 2*mapMin/18+1 || len(res.SHA256) != 64 {
		t.Fatalf("result %+v", res)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
