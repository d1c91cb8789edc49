package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// Skip skips tb for a tool this machine lacks, and records why in the file
// named by $HUNK_SKIP_LOG (the Makefile's test target sets it and prints the
// file after the run), so that a skipped test is named in the summary and
// not only in verbose output, which `go test ./...` hides for a package that
// passes.
func Skip(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	NoteSkip(tb.Name(), msg)
	tb.Skip("SKIPPED: " + msg)
}

// NoteSkip records in $HUNK_SKIP_LOG that what (a test, or a group of
// scripts) is skipped, and why; and says so on stderr.
func NoteSkip(what, why string) {
	fmt.Fprintf(os.Stderr, "SKIPPED %s: %s\n", what, why)
	if p := os.Getenv("HUNK_SKIP_LOG"); p != "" {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "%s: %s\n", what, why)
			f.Close()
		}
	}
}

// Required reports whether the comma- or space-separated list in the
// environment variable env (HUNK_REQUIRE_DRIVERS) names name: CI sets it so
// that what would be a skip on a laptop is a failure there.
func Required(env, name string) bool {
	for _, f := range strings.FieldsFunc(os.Getenv(env), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == name {
			return true
		}
	}
	return false
}

// ImageMaker is what TestImage needs of the docker driver (an interface, so
// that the docker package's own tests can use this package).
type ImageMaker interface {
	HasImage(ctx context.Context, name string) (bool, error)
	MakeImage(ctx context.Context, name, busybox string, force bool) (string, error)
}

var (
	imageMu   sync.Mutex
	imageDone = map[string]error{}
)

// ImageName is the name of the Docker test image: $HUNK_TEST_IMAGE, or
// hunk-test:latest.
func ImageName() string {
	if s := os.Getenv("HUNK_TEST_IMAGE"); s != "" {
		return s
	}
	return "hunk-test:latest"
}

// EnsureImage makes the Docker test image (ImageName) offline from the
// host's static busybox (--make-image) when the engine lacks it, once per
// test process, so that `make test` needs no preparation step.
func EnsureImage(d ImageMaker) (string, error) {
	img := ImageName()
	imageMu.Lock()
	defer imageMu.Unlock()
	err, done := imageDone[img]
	if !done {
		if ok, _ := d.HasImage(context.Background(), img); !ok {
			if _, err = d.MakeImage(context.Background(), img, "", false); err != nil {
				err = fmt.Errorf("making the Docker test image %s (--make-image needs a static busybox: apt-get install busybox-static): %v", img, err)
			}
		}
		imageDone[img] = err
	}
	return img, err
}

// TestImage is EnsureImage for a test: an image that cannot be made fails it.
func TestImage(tb testing.TB, d ImageMaker) string {
	tb.Helper()
	img, err := EnsureImage(d)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}
