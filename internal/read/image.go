package read

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// ImageDetails describe an image file.
type ImageDetails struct {
	Path     string `json:"path"`
	Type     string `json:"type"`                                       // "image"
	Format   string `json:"format" jsonschema:"png, jpeg, gif or webp"` // png, jpeg, gif, webp
	MimeType string `json:"mimeType" jsonschema:"the image's MIME type"`
	Width    int    `json:"width" jsonschema:"width in pixels"`
	Height   int    `json:"height" jsonschema:"height in pixels"`
	Size     int64  `json:"size"`
	Sha256   string `json:"sha256"`
	// Scale is the factor the image sent was scaled by (1: as it is); with
	// SentWidth and SentHeight, the size of the image in the content block
	// and SentMimeType its encoding. Only set when the data was asked for.
	Scale        float64 `json:"scale,omitempty" jsonschema:"the factor the image sent was scaled by"`
	SentWidth    int     `json:"sentWidth,omitempty" jsonschema:"width of the image sent"`
	SentHeight   int     `json:"sentHeight,omitempty" jsonschema:"height of the image sent"`
	SentMimeType string  `json:"sentMimeType,omitempty" jsonschema:"MIME type of the image sent"`
}

// imageFormat is an image encoding hunk recognises by its magic bytes.
type imageFormat struct {
	name, mime string
	config     func(io.Reader) (image.Config, error)
	decode     func(io.Reader) (image.Image, error)
}

// sniffImage recognises PNG, JPEG, GIF and WebP by their first bytes (never
// by the file's extension).
func sniffImage(head []byte) *imageFormat {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return &imageFormat{"png", "image/png", png.DecodeConfig, png.Decode}
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return &imageFormat{"jpeg", "image/jpeg", jpeg.DecodeConfig, jpeg.Decode}
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return &imageFormat{"gif", "image/gif", gif.DecodeConfig, gif.Decode}
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return &imageFormat{"webp", "image/webp", webp.DecodeConfig, webp.Decode}
	}
	return nil
}

// Limits on images returned as data: the file read into memory, and the
// pixels decoded to scale it.
const (
	maxImageBytes  = 64 << 20
	maxImagePixels = 64 << 20
)

func readImage(ws *workspace.Workspace, name string, format *imageFormat, r io.Reader, opt Options) (*Result, error) {
	disp := ws.Display(name)
	h := sha256.New()
	var data bytes.Buffer
	cr := &countingReader{r: io.TeeReader(r, h)}
	var src io.Reader = cr
	if opt.ImageData {
		src = io.TeeReader(io.LimitReader(cr, maxImageBytes+1), &data)
	}
	cfg, err := format.config(src)
	if err != nil {
		return nil, result.Errorf(result.BinaryFile, "%s: looks like a %s image but cannot be read: %v", disp, upper(format.name), err).
			At(disp)
	}
	// Hash (and keep) the rest of the file too.
	if _, err := io.Copy(io.Discard, src); err != nil {
		return nil, ws.Error(name, err)
	}
	_, _ = io.Copy(io.Discard, cr)
	d := &ImageDetails{
		Path: disp, Type: "image", Format: format.name, MimeType: format.mime,
		Width: cfg.Width, Height: cfg.Height, Size: cr.n, Sha256: hex.EncodeToString(h.Sum(nil)),
	}
	text := fmt.Sprintf("%s: %s image, %dx%d pixels, %s", disp, upper(format.name), cfg.Width, cfg.Height, plural(int(cr.n), "byte", "bytes"))
	if !opt.ImageData {
		return &Result{Text: text + "\n", Details: d}, nil
	}
	if cr.n > maxImageBytes {
		return nil, result.Errorf(result.TooLarge, "%s: image of %d bytes is too large to return (at most %d)", disp, cr.n, maxImageBytes).
			At(disp)
	}
	img := &Image{MimeType: format.mime, Data: data.Bytes()}
	d.Scale, d.SentWidth, d.SentHeight, d.SentMimeType = 1, cfg.Width, cfg.Height, format.mime
	if int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return nil, result.Errorf(result.TooLarge, "%s: image of %dx%d pixels is too large to scale (at most %d pixels)", disp, cfg.Width, cfg.Height, maxImagePixels).
			At(disp)
	}
	// Decoded whole before it is sent, scaled or not: a truncated or
	// corrupt image is refused rather than sent as a block the model's
	// client cannot show.
	decoded, err := format.decode(bytes.NewReader(data.Bytes()))
	if err != nil {
		return nil, result.Errorf(result.BinaryFile, "%s: looks like a %s image but cannot be decoded (truncated or corrupt?): %v", disp, upper(format.name), err).
			At(disp)
	}
	if side := max(cfg.Width, cfg.Height); side > MaxImageSide {
		scale := float64(MaxImageSide) / float64(side)
		w := max(1, int(float64(cfg.Width)*scale+0.5))
		hgt := max(1, int(float64(cfg.Height)*scale+0.5))
		dst := image.NewRGBA(image.Rect(0, 0, w, hgt))
		draw.CatmullRom.Scale(dst, dst.Bounds(), decoded, decoded.Bounds(), draw.Src, nil)
		var out bytes.Buffer
		// A photograph stays a JPEG; everything else becomes a PNG.
		if format.name == "jpeg" {
			err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 90})
			img.MimeType = "image/jpeg"
		} else {
			err = png.Encode(&out, dst)
			img.MimeType = "image/png"
		}
		if err != nil {
			return nil, result.Wrap(result.IOError, err, disp+": encoding the scaled image")
		}
		img.Data = out.Bytes()
		d.Scale, d.SentWidth, d.SentHeight, d.SentMimeType = scale, w, hgt, img.MimeType
		text += fmt.Sprintf("; scaled to %dx%d (%.1f%%) to fit %d px a side", w, hgt, scale*100, MaxImageSide)
	}
	return &Result{Text: text + "\n", Details: d, Image: img}, nil
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
