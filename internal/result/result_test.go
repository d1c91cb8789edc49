package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestExitCode(t *testing.T) {
	cases := map[string]struct {
		err  error
		want int
	}{
		"nil":           {nil, 0},
		"refused":       {Errorf(NoMatch, "x"), 1},
		"usage":         {Usagef("bad flag"), 2},
		"timeout":       {Errorf(Timeout, "slow"), 124},
		"sandbox":       {Errorf(SandboxUnavailable, "no bwrap"), 125},
		"unenforceable": {Errorf(LimitUnenforceable, "no cgroups"), 125},
		"explicit exit": {&Error{Code: IOError, Exit: 42}, 42},
		"plain error":   {errors.New("boom"), 1},
		"wrapped typed": {fmt.Errorf("ctx: %w", Usagef("u")), 2},
		"not exist":     {fs.ErrNotExist, 1},
	}
	for name, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("%s: ExitCode = %d, want %d", name, got, c.want)
		}
	}
}

func TestAsMapsCauses(t *testing.T) {
	if c := As(fmt.Errorf("open x: %w", fs.ErrNotExist)).Code; c != NotFound {
		t.Errorf("ErrNotExist -> %s", c)
	}
	if c := As(fs.ErrExist).Code; c != AlreadyExists {
		t.Errorf("ErrExist -> %s", c)
	}
	if c := As(errors.New("x")).Code; c != IOError {
		t.Errorf("plain -> %s", c)
	}
}

func TestFailureDocument(t *testing.T) {
	err := Errorf(NoMatch, "a.go: no match").WithHint("closest match at line 4").WithDetail("candidates", []int{4})
	var b bytes.Buffer
	if e := Failure(err, map[string]any{"path": "a.go"}).Encode(&b); e != nil {
		t.Fatal(e)
	}
	var doc map[string]any
	if e := json.Unmarshal(b.Bytes(), &doc); e != nil {
		t.Fatalf("not JSON: %v\n%s", e, b.String())
	}
	if doc["isError"] != true || doc["code"] != "NO_MATCH" || doc["error"] != "a.go: no match" {
		t.Fatalf("document %v", doc)
	}
	text := doc["content"].([]any)[0].(map[string]any)["text"]
	if text != "a.go: no match\nhint: closest match at line 4" {
		t.Fatalf("content text %q", text)
	}
	det := doc["details"].(map[string]any)
	if det["path"] != "a.go" || det["candidates"] == nil {
		t.Fatalf("details %v", det)
	}
	if bytes.Count(b.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("want exactly one line: %q", b.String())
	}
}

func TestSuccessKeepsCodeReadable(t *testing.T) {
	var b bytes.Buffer
	_ = Success("if a < b && c > d {}", nil).Encode(&b)
	if !bytes.Contains(b.Bytes(), []byte("a < b && c > d")) {
		t.Fatalf("HTML-escaped: %s", b.String())
	}
}
