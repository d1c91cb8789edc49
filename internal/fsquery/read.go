// Package fsquery answers the questions the filesystem tools (hunk mcp
// --tools filesystem) ask of a workspace: a text or media file whole or in
// part, a directory's entries, its tree, the paths a glob matches, a file's
// facts — each through the workspace's door (confined, the path policy
// decided on what is opened), worded as the reference MCP filesystem
// server words it, which models know. It writes nothing: ops renders.
package fsquery

import (
	"encoding/base64"
	"io/fs"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// maxTextRead bounds a whole-file text read.
const maxTextRead = 64 << 20

// HeadTail is data (a text file) whole, or its first head or last tail
// lines. The counts are taken as the reference server takes them: 0 is no
// count, a fraction of a line is a whole line more for head (it reads
// lines while it has fewer than head) and none for tail, a negative count
// reads nothing; head's last line comes without its "\n", as there. Tail's
// lines are exactly the file's last ones, ending included (the reference's
// tail counts the empty string after the last newline as a line).
func HeadTail(data []byte, headN, tailN float64) (string, error) {
	if headN != 0 && tailN != 0 {
		return "", result.Usagef("Cannot specify both head and tail parameters simultaneously")
	}
	head, tail := int(math.Min(math.Ceil(headN), 1<<31)), int(math.Min(math.Trunc(tailN), 1<<31))
	text := string(data)
	if headN < 0 || tailN < 0 || (tailN > 0 && tail == 0) {
		text = ""
	} else if head > 0 || tail > 0 {
		t := textfile.FileText(data)
		from, to := 0, len(t.Lines)
		if head > 0 && head < to {
			to = head
		}
		if tail > 0 && tail < to-from {
			from = to - tail
		}
		text = ""
		if from < to {
			text = t.Body[t.Start[from]:t.End(to-1)]
		}
		if head > 0 {
			// As the reference: the lines joined by "\n", the last one
			// without its "\n".
			text = strings.TrimSuffix(text, "\n")
		}
	}
	return text, nil
}

// Text reads a text file whole: not a directory, not over maxTextRead,
// not binary.
func Text(ws *workspace.Workspace, p string) (string, []byte, error) {
	name, fi, err := Stat(ws, p)
	if err != nil {
		return "", nil, err
	}
	if fi.IsDir() {
		return "", nil, result.Errorf(result.IsDirectory, "%s: is a directory", name).WithHint("list it with list_directory")
	}
	if fi.Size() > maxTextRead {
		return "", nil, result.Errorf(result.TooLarge, "%s: %d bytes is over the limit of %d for a whole-file read", name, fi.Size(), maxTextRead).
			WithHint("read part of it with head or tail")
	}
	data, err := ws.ReadFile(name)
	if err != nil {
		return "", nil, err
	}
	if textfile.IsBinary(data) {
		return "", nil, result.Errorf(result.BinaryFile, "%s: binary file (it contains NUL bytes)", name).
			WithHint("read an image or audio file with read_media_file")
	}
	return name, data, nil
}

// Stat resolves p and stats it, suggesting near names when it is missing.
func Stat(ws *workspace.Workspace, p string) (string, fs.FileInfo, error) {
	name, err := ws.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	fi, err := ws.Stat(name)
	if err != nil {
		return "", nil, ws.DidYouMean(name, err)
	}
	return name, fi, nil
}

// mediaTypes maps extensions to the MIME types read_media_file serves.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".bmp": "image/bmp", ".svg": "image/svg+xml", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".flac": "audio/flac",
}

// Media describes a file read_media_file sends as a content block.
type Media struct {
	Path     string `json:"path" jsonschema:"the file, relative to the workspace"`
	MimeType string `json:"mimeType" jsonschema:"its MIME type"`
	Bytes    int    `json:"bytes" jsonschema:"its size in bytes"`
	// Content is the content block, as the reference server's
	// structuredContent holds it.
	Content []MediaItem `json:"content" jsonschema:"the file as the one content block"`
}

// MediaItem is read_media_file's content block: an image or audio block,
// or any other file as an embedded resource.
type MediaItem struct {
	Type     string    `json:"type" jsonschema:"image, audio or resource"`
	Data     string    `json:"data,omitempty" jsonschema:"an image's or audio's bytes, base64"`
	MimeType string    `json:"mimeType,omitempty" jsonschema:"an image's or audio's MIME type"`
	Resource *Resource `json:"resource,omitempty" jsonschema:"any other file"`
}

// Resource is an embedded file.
type Resource struct {
	URI      string `json:"uri" jsonschema:"the file's file:// URI"`
	MimeType string `json:"mimeType,omitempty" jsonschema:"its MIME type"`
	Blob     string `json:"blob" jsonschema:"its bytes, base64"`
}

// ReadMedia reads an image, audio or other file for read_media_file: its
// description with the content block (by extension, an image or audio
// block, any other file an embedded resource, application/octet-stream
// where the extension says nothing), and its bytes.
func ReadMedia(ws *workspace.Workspace, p string) (*Media, []byte, error) {
	name, fi, err := Stat(ws, p)
	if err != nil {
		return nil, nil, err
	}
	if fi.IsDir() {
		return nil, nil, result.Errorf(result.IsDirectory, "%s: is a directory", name)
	}
	if fi.Size() > maxTextRead {
		return nil, nil, result.Errorf(result.TooLarge, "%s: %d bytes is over the limit of %d", name, fi.Size(), maxTextRead)
	}
	mime := mediaTypes[strings.ToLower(path.Ext(name))]
	if mime == "" {
		mime = "application/octet-stream"
	}
	data, err := ws.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	item := MediaItem{Type: "resource", Resource: &Resource{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(ws.Abs(name))}).String(), MimeType: mime, Blob: b64}}
	if strings.HasPrefix(mime, "image/") || strings.HasPrefix(mime, "audio/") {
		kind, _, _ := strings.Cut(mime, "/")
		item = MediaItem{Type: kind, Data: b64, MimeType: mime}
	}
	return &Media{Path: name, MimeType: mime, Bytes: len(data), Content: []MediaItem{item}}, data, nil
}
