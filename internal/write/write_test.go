package write

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

func TestWrite(t *testing.T) {
	type want struct {
		code    result.Code
		created bool
		noop    bool
		content string // expected file content afterwards
	}
	old := "old\n"
	cases := map[string]struct {
		opt    Options
		dryRun bool
		want   want
	}{
		"create":                 {Options{Path: "new.txt", Content: []byte("x")}, false, want{created: true, content: "x"}},
		"create parents":         {Options{Path: "a/b/c.txt", Content: []byte("x")}, false, want{created: true, content: "x"}},
		"replace":                {Options{Path: "f.txt", Content: []byte("y")}, false, want{content: "y"}},
		"identical is no-op":     {Options{Path: "f.txt", Content: []byte(old)}, false, want{noop: true, content: old}},
		"create-only refuses":    {Options{Path: "f.txt", Content: []byte("y"), CreateOnly: true}, false, want{code: result.AlreadyExists, content: old}},
		"if-match current":       {Options{Path: "f.txt", Content: []byte("y"), IfMatch: Hash([]byte(old))}, false, want{content: "y"}},
		"if-match upper case":    {Options{Path: "f.txt", Content: []byte("y"), IfMatch: "  " + upper(Hash([]byte(old)))}, false, want{content: "y"}},
		"if-match stale":         {Options{Path: "f.txt", Content: []byte("y"), IfMatch: Hash([]byte("other"))}, false, want{code: result.Stale, content: old}},
		"if-match malformed":     {Options{Path: "f.txt", Content: []byte("y"), IfMatch: "abc"}, false, want{code: result.InvalidArgument, content: old}},
		"too large":              {Options{Path: "f.txt", Content: []byte("123456"), MaxBytes: 5}, false, want{code: result.TooLarge, content: old}},
		"directory":              {Options{Path: "dir", Content: []byte("x")}, false, want{code: result.IsDirectory}},
		"trailing slash":         {Options{Path: "f.txt/", Content: []byte("x")}, false, want{code: result.IsDirectory, content: old}},
		"outside":                {Options{Path: "../x", Content: []byte("x")}, false, want{code: result.OutsideWorkspace}},
		"dry run writes nothing": {Options{Path: "f.txt", Content: []byte("y")}, true, want{content: old}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			ws, err := workspace.Open(dir, workspace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			fsys := workspace.Disk(ws)
			if c.dryRun {
				fsys = workspace.DryRun(fsys)
			}
			res, err := Write(fsys, c.opt)
			if got := result.As(err); (got == nil) != (c.want.code == "") || (got != nil && got.Code != c.want.code) {
				t.Fatalf("error %v, want code %q", err, c.want.code)
			}
			if err == nil && (res.Created != c.want.created || res.NoOp != c.want.noop) {
				t.Fatalf("created=%v noop=%v, want %v %v", res.Created, res.NoOp, c.want.created, c.want.noop)
			}
			if c.want.content != "" {
				p := c.opt.Path
				if c.want.code != "" || c.dryRun {
					p = "f.txt"
				}
				b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(trimSlash(p))))
				if string(b) != c.want.content {
					t.Fatalf("file holds %q, want %q", b, c.want.content)
				}
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
