package read

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// tinyWebP is a 1x1 lossless WebP (Go has no WebP encoder).
const tinyWebP = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func encode(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, 0, color.RGBA{uint8(x), 0, 0, 255})
	}
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	case "webp":
		data, _ := base64.StdEncoding.DecodeString(tinyWebP)
		return data
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newWorkspace makes a workspace holding files (name -> content; a name
// ending in "/" is a directory).
func newWorkspace(t *testing.T, files map[string][]byte) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func TestRead(t *testing.T) {
	ws := newWorkspace(t, map[string][]byte{
		"a.txt":         []byte("one\ntwo\nthree\n"),
		"crlf.txt":      []byte("\ufeffone\r\ntwo\r\n"),
		"bin.dat":       []byte("\x7fELF\x00\x00"),
		"empty.txt":     nil,
		"img/p.png":     encode(t, "png", 30, 20),
		"img/j.jpg":     encode(t, "jpeg", 30, 20),
		"img/g.gif":     encode(t, "gif", 30, 20),
		"img/w.webp":    encode(t, "webp", 0, 0),
		"img/huge.png":  encode(t, "png", 5000, 40),
		"img/tall.jpg":  encode(t, "jpeg", 10, 3000),
		"img/named.txt": encode(t, "gif", 2, 2),
		"d/x":           []byte("12345"),
		"d/sub/":        nil,
	})
	tests := []struct {
		name string
		path string
		opt  Options
		text string // prefix of Result.Text
		want any    // fields of the details to check, as a details value with only those set
		code result.Code
	}{
		{name: "text", path: "a.txt", text: "one\ntwo\nthree\n",
			want: TextDetails{TotalLines: 3, StartLine: 1, EndLine: 3, EOL: "lf", UTF8: true}},
		{name: "text page", path: "a.txt", opt: Options{Offset: 2, Limit: 1, LineNumbers: true},
			text: "2\ttwo\n\n[1 more line in file. Use --offset 3 to continue.]\n",
			want: TextDetails{TotalLines: 3, StartLine: 2, EndLine: 2, NextOffset: 3, Truncated: true, EOL: "lf", UTF8: true}},
		{name: "crlf and bom", path: "crlf.txt", text: "one\ntwo\n",
			want: TextDetails{TotalLines: 2, StartLine: 1, EndLine: 2, EOL: "crlf", BOM: true, UTF8: true}},
		{name: "empty", path: "empty.txt", text: "[empty.txt is empty.]\n", want: TextDetails{EOL: "none", UTF8: true}},
		{name: "binary", path: "bin.dat", code: result.BinaryFile},
		{name: "missing", path: "b.txt", code: result.NotFound},
		{name: "outside", path: "../x", code: result.OutsideWorkspace},
		{name: "offset past end", path: "a.txt", opt: Options{Offset: 4}, code: result.InvalidArgument},
		{name: "bad max-bytes", path: "a.txt", opt: Options{MaxBytes: 2}, code: result.InvalidArgument},
		{name: "dir", path: "d", text: "sub/\nx  5\n",
			want: DirDetails{TotalEntries: 2, StartEntry: 1, EndEntry: 2, Entries: []Entry{{"sub", "dir", 0, ""}, {"x", "file", 5, ""}}}},
		{name: "dir page", path: "d", opt: Options{Limit: 1}, text: "sub/\n\n[1 more entry in directory. Use --offset 2 to continue.]\n",
			want: DirDetails{TotalEntries: 2, StartEntry: 1, EndEntry: 1, NextOffset: 2, Truncated: true, Entries: []Entry{{"sub", "dir", 0, ""}}}},
		{name: "png", path: "img/p.png", text: "img/p.png: PNG image, 30x20 pixels, ",
			want: ImageDetails{Format: "png", MimeType: "image/png", Width: 30, Height: 20}},
		{name: "jpeg", path: "img/j.jpg", text: "img/j.jpg: JPEG image, 30x20 pixels",
			want: ImageDetails{Format: "jpeg", MimeType: "image/jpeg", Width: 30, Height: 20}},
		{name: "gif", path: "img/g.gif", text: "img/g.gif: GIF image, 30x20 pixels",
			want: ImageDetails{Format: "gif", MimeType: "image/gif", Width: 30, Height: 20}},
		{name: "webp", path: "img/w.webp", text: "img/w.webp: WEBP image, 1x1 pixels, 34 bytes",
			want: ImageDetails{Format: "webp", MimeType: "image/webp", Width: 1, Height: 1}},
		{name: "by magic not extension", path: "img/named.txt", text: "img/named.txt: GIF image, 2x2",
			want: ImageDetails{Format: "gif", MimeType: "image/gif", Width: 2, Height: 2}},
		{name: "webp data", path: "img/w.webp", opt: Options{ImageData: true},
			want: ImageDetails{Format: "webp", MimeType: "image/webp", Width: 1, Height: 1, Scale: 1, SentWidth: 1, SentHeight: 1, SentMimeType: "image/webp"}},
		{name: "scaled png", path: "img/huge.png", opt: Options{ImageData: true},
			text: "img/huge.png: PNG image, 5000x40 pixels, ",
			want: ImageDetails{Format: "png", MimeType: "image/png", Width: 5000, Height: 40, Scale: 0.4, SentWidth: 2000, SentHeight: 16, SentMimeType: "image/png"}},
		{name: "scaled jpeg stays jpeg", path: "img/tall.jpg", opt: Options{ImageData: true},
			want: ImageDetails{Format: "jpeg", MimeType: "image/jpeg", Width: 10, Height: 3000, Scale: 2.0 / 3, SentWidth: 7, SentHeight: 2000, SentMimeType: "image/jpeg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Read(ws, tt.path, tt.opt)
			if tt.code != "" {
				var re *result.Error
				if !errors.As(err, &re) || re.Code != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, tt.text) {
				t.Errorf("text = %q, want prefix %q", res.Text, tt.text)
			}
			checkFields(t, res.Details, tt.want)
			if tt.opt.ImageData {
				if res.Image == nil {
					t.Fatal("no image data")
				}
				cfg, _, err := image.DecodeConfig(bytes.NewReader(res.Image.Data))
				d := res.Details.(*ImageDetails)
				if d.SentMimeType != "image/webp" && (err != nil || cfg.Width != d.SentWidth || cfg.Height != d.SentHeight) {
					t.Errorf("sent image %v %dx%d, details say %dx%d", err, cfg.Width, cfg.Height, d.SentWidth, d.SentHeight)
				}
			} else if res.Image != nil {
				t.Error("image data without ImageData")
			}
		})
	}
}

// checkFields compares the non-zero fields of want with got (a pointer to
// the same struct type).
func checkFields(t *testing.T, got, want any) {
	t.Helper()
	gv := reflect.ValueOf(got).Elem()
	wv := reflect.ValueOf(want)
	if gv.Type() != wv.Type() {
		t.Fatalf("details are %T, want %T", got, want)
	}
	for i := 0; i < wv.NumField(); i++ {
		f := wv.Type().Field(i)
		w, g := wv.Field(i), gv.Field(i)
		if f.Name == "Path" || f.Name == "Type" || f.Name == "Sha256" || f.Name == "Size" {
			continue
		}
		if f.Type.Kind() == reflect.Float64 {
			if d := w.Float() - g.Float(); d > 1e-9 || d < -1e-9 {
				t.Errorf("%s = %v, want %v", f.Name, g, w)
			}
			continue
		}
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			t.Errorf("%s = %v, want %v", f.Name, g, w)
		}
	}
}
