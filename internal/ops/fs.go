package ops

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// The filesystem operations below serve the reference MCP filesystem
// server's tools (hunk mcp --tools filesystem) with hunk's guarantees: every
// path confined to the workspace, text refused when it is binary, writes
// atomic. Their result text follows the reference server's wording, which
// models know.

// maxTextRead bounds a whole-file text read.
const maxTextRead = 64 << 20

// ReadText returns a text file whole, or its first head or last tail lines.
func ReadText(env *Env, p string, head, tail int) (*Output, error) {
	if head > 0 && tail > 0 {
		return nil, result.Usagef("give head or tail, not both")
	}
	if head < 0 || tail < 0 {
		return nil, result.Usagef("head and tail must not be negative")
	}
	ws := env.Workspace
	name, data, err := readText(ws, p)
	if err != nil {
		return nil, err
	}
	text := string(data)
	if head > 0 || tail > 0 {
		t := workspace.FileText(data)
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
	}
	return &Output{Text: text, Message: text, Data: true,
		Details: &FSText{Path: name, Content: text}}, nil
}

func readText(ws *workspace.Workspace, p string) (string, []byte, error) {
	name, fi, err := stat(ws, p)
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
	if workspace.IsBinary(data) {
		return "", nil, result.Errorf(result.BinaryFile, "%s: binary file (it contains NUL bytes)", name).
			WithHint("read an image or audio file with read_media_file")
	}
	return name, data, nil
}

// stat resolves p and stats it, suggesting near names when it is missing.
func stat(ws *workspace.Workspace, p string) (string, fs.FileInfo, error) {
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

// ReadMany reads several text files; one that fails is reported in its
// place without failing the others.
func ReadMany(env *Env, paths []string) (*Output, error) {
	if len(paths) == 0 {
		return nil, result.Usagef("no paths given")
	}
	parts := make([]string, len(paths))
	for i, p := range paths {
		_, data, err := readText(env.Workspace, p)
		if err != nil {
			parts[i] = fmt.Sprintf("%s: Error - %s", p, result.As(err).Msg)
			continue
		}
		parts[i] = fmt.Sprintf("%s:\n%s\n", p, data)
	}
	text := strings.Join(parts, "\n---\n")
	return &Output{Text: text, Message: text, Data: true, Details: &FSText{Content: text}}, nil
}

// mediaTypes maps extensions to the MIME types read_media_file serves.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".bmp": "image/bmp", ".svg": "image/svg+xml", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".flac": "audio/flac",
}

// ReadMedia returns an image or audio file as a base64 content block.
func ReadMedia(env *Env, p string) (*Output, error) {
	ws := env.Workspace
	name, fi, err := stat(ws, p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, result.Errorf(result.IsDirectory, "%s: is a directory", name)
	}
	if fi.Size() > maxTextRead {
		return nil, result.Errorf(result.TooLarge, "%s: %d bytes is over the limit of %d", name, fi.Size(), maxTextRead)
	}
	mime := mediaTypes[strings.ToLower(path.Ext(name))]
	if mime == "" {
		mime = "application/octet-stream"
	}
	data, err := ws.ReadFile(name)
	if err != nil {
		return nil, err
	}
	kind := "image"
	if strings.HasPrefix(mime, "audio/") {
		kind = "audio"
	}
	text := fmt.Sprintf("%s: %s, %d bytes", name, mime, len(data))
	return &Output{Text: text, Message: text,
		Images:  []result.Content{{Type: kind, MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}},
		Details: &FSMedia{Path: name, MimeType: mime, Bytes: len(data)}}, nil
}

// Mkdir creates a directory and its parents; an existing one is fine.
func Mkdir(env *Env, p string) (*Output, error) {
	ws := env.Workspace
	name, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	if err := ws.MkdirAll(name); err != nil {
		return nil, err
	}
	text := "Successfully created directory " + p
	return &Output{Text: text, Message: text, Details: &FSText{Path: name, Content: text}}, nil
}

func listDir(ws *workspace.Workspace, p string) (string, []FSEntry, error) {
	name, err := ws.Resolve(p)
	if err != nil {
		return "", nil, err
	}
	ents, err := ws.ReadDir(name)
	if err != nil {
		return "", nil, ws.DidYouMean(name, err)
	}
	out := make([]FSEntry, 0, len(ents))
	for _, e := range ents {
		if name == "." && e.Name() == workspace.JournalDir {
			continue
		}
		en := FSEntry{Name: e.Name(), Type: "file"}
		fi, err := ws.Stat(path.Join(name, e.Name()))
		if err == nil && fi.IsDir() {
			en.Type = "directory"
		} else if err == nil {
			en.Size = fi.Size()
		}
		out = append(out, en)
	}
	return name, out, nil
}

// List lists a directory as "[DIR] name" and "[FILE] name" lines.
func List(env *Env, p string) (*Output, error) {
	name, ents, err := listDir(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(ents))
	for i, e := range ents {
		tag := "[FILE]"
		if e.Type == "directory" {
			tag = "[DIR]"
		}
		lines[i] = tag + " " + workspace.Quote(e.Name)
	}
	text := strings.Join(lines, "\n")
	return &Output{Text: text, Message: text, Data: true, Details: &FSList{Path: name, Entries: ents, Content: text}}, nil
}

// ListWithSizes lists a directory with file sizes, sorted by name or size.
func ListWithSizes(env *Env, p, sortBy string) (*Output, error) {
	if sortBy != "" && sortBy != "name" && sortBy != "size" {
		return nil, result.Usagef("sortBy must be name or size, not %q", sortBy)
	}
	name, ents, err := listDir(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	if sortBy == "size" {
		sort.SliceStable(ents, func(i, j int) bool { return ents[i].Size > ents[j].Size })
	}
	var b strings.Builder
	files, dirs, total := 0, 0, int64(0)
	for _, e := range ents {
		if e.Type == "directory" {
			dirs++
			fmt.Fprintf(&b, "[DIR]  %-30s\n", workspace.Quote(e.Name))
			continue
		}
		files++
		total += e.Size
		fmt.Fprintf(&b, "[FILE] %-30s %10s\n", workspace.Quote(e.Name), humanSize(e.Size))
	}
	fmt.Fprintf(&b, "\nTotal: %d files, %d directories\nCombined size: %s", files, dirs, humanSize(total))
	text := b.String()
	return &Output{Text: text, Message: text, Data: true, Details: &FSList{Path: name, Entries: ents, Content: text}}, nil
}

func humanSize(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	if n == 0 {
		return "0 B"
	}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", f, units[i])
}

// treeNode is one node of Tree's JSON.
type treeNode struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Children *[]treeNode `json:"children,omitempty"`
}

// maxTreeEntries bounds a tree, so that a huge directory cannot exhaust memory.
const maxTreeEntries = 20000

// Tree returns a directory's tree as JSON; entries matching an exclude
// pattern (a glob on the name or the path below p) are left out.
func Tree(env *Env, p string, exclude []string) (*Output, error) {
	ws := env.Workspace
	name, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	count := 0
	var walk func(dir, rel string) ([]treeNode, error)
	walk = func(dir, rel string) ([]treeNode, error) {
		_, ents, err := listDir(ws, dir)
		if err != nil {
			return nil, err
		}
		nodes := []treeNode{}
		for _, e := range ents {
			r := path.Join(rel, e.Name)
			if excluded(exclude, r) {
				continue
			}
			if count++; count > maxTreeEntries {
				return nil, result.Errorf(result.TooLarge, "%s: more than %d entries", p, maxTreeEntries).
					WithHint("list a smaller directory, or leave some out with excludePatterns")
			}
			n := treeNode{Name: e.Name, Type: e.Type}
			if e.Type == "directory" {
				fi, lerr := ws.Lstat(path.Join(dir, e.Name))
				kids := []treeNode{}
				if lerr == nil && fi.Mode()&fs.ModeSymlink == 0 { // never follow a link into a loop
					if kids, err = walk(path.Join(dir, e.Name), r); err != nil {
						return nil, err
					}
				}
				n.Children = &kids
			}
			nodes = append(nodes, n)
		}
		return nodes, nil
	}
	nodes, err := walk(name, "")
	if err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(nodes, "", "  ")
	text := string(b)
	return &Output{Text: text, Message: text, Data: true, Details: &FSText{Path: name, Content: text}}, nil
}

// excluded reports whether rel (a slash path) matches one of the patterns.
func excluded(patterns []string, rel string) bool {
	for _, p := range patterns {
		if Glob(p, rel) || Glob(p, path.Base(rel)) || Glob(strings.TrimSuffix(p, "/**"), rel) {
			return true
		}
	}
	return false
}

// Glob matches a slash path against a glob pattern: *, ? and [...] inside
// one segment (path.Match), ** for any number of segments. A pattern without
// a slash matches the path's last segment (as minimatch's matchBase).
func Glob(pattern, rel string) bool {
	if pattern == "" {
		return false
	}
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(rel))
		return ok
	}
	return globSegs(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(rel, "/"))
}

func globSegs(pat, segs []string) bool {
	// ok[j] reports whether pat[i:] matches segs[j:], for i from the end
	// back: polynomial however many ** the pattern holds.
	ok := make([]bool, len(segs)+1)
	ok[len(segs)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		next := make([]bool, len(segs)+1)
		for j := len(segs); j >= 0; j-- {
			switch {
			case pat[i] == "**":
				next[j] = ok[j] || (j < len(segs) && next[j+1])
			case j < len(segs):
				m, _ := path.Match(pat[i], segs[j])
				next[j] = m && ok[j+1]
			}
		}
		ok = next
	}
	return ok[0]
}

// maxSearchResults bounds a search.
const maxSearchResults = 10000

// Search finds the files and directories under p whose path (relative to
// p) matches a glob pattern, leaving out excluded ones; the matches are
// absolute paths, as the reference server returns them.
func Search(env *Env, p, pattern string, exclude []string) (*Output, error) {
	if pattern == "" {
		return nil, result.Usagef("empty pattern")
	}
	ws := env.Workspace
	name, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	var matches []string
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		_, ents, err := listDir(ws, dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			r := path.Join(rel, e.Name)
			if excluded(exclude, r) {
				continue
			}
			if Glob(pattern, r) || (!strings.ContainsAny(pattern, "*?[/") && strings.Contains(strings.ToLower(e.Name), strings.ToLower(pattern))) {
				if len(matches) >= maxSearchResults {
					return nil
				}
				matches = append(matches, ws.Abs(path.Join(dir, e.Name)))
			}
			if e.Type == "directory" {
				if fi, err := ws.Lstat(path.Join(dir, e.Name)); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
					if err := walk(path.Join(dir, e.Name), r); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(name, ""); err != nil {
		return nil, err
	}
	text := "No matches found"
	if len(matches) > 0 {
		text = strings.Join(matches, "\n")
	}
	if matches == nil {
		matches = []string{}
	}
	return &Output{Text: text, Message: text, Data: true, Details: &FSSearch{Matches: matches, Content: text}}, nil
}

// Info describes a file or directory: size, times, type and permissions.
func Info(env *Env, p string) (*Output, error) {
	ws := env.Workspace
	name, fi, err := stat(ws, p)
	if err != nil {
		return nil, err
	}
	created, accessed := fileTimes(fi)
	info := &FSInfo{
		Path:        name,
		Size:        fi.Size(),
		Created:     created.UTC().Format(time.RFC3339),
		Modified:    fi.ModTime().UTC().Format(time.RFC3339),
		Accessed:    accessed.UTC().Format(time.RFC3339),
		IsDirectory: fi.IsDir(),
		IsFile:      fi.Mode().IsRegular(),
		Permissions: fmt.Sprintf("%03o", fi.Mode().Perm()),
	}
	text := fmt.Sprintf("size: %d\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %t\nisFile: %t\npermissions: %s",
		info.Size, info.Created, info.Modified, info.Accessed, info.IsDirectory, info.IsFile, info.Permissions)
	info.Content = text
	return &Output{Text: text, Message: text, Data: true, Details: info}, nil
}

// Move renames a file or directory; the destination must not exist.
func Move(env *Env, source, destination string) (*Output, error) {
	ws := env.Workspace
	from, err := ws.Resolve(source)
	if err != nil {
		return nil, err
	}
	to, err := ws.Resolve(destination)
	if err != nil {
		return nil, err
	}
	if from == "." || to == "." {
		return nil, result.Errorf(result.InvalidArgument, "cannot move the workspace root")
	}
	if _, err := ws.Lstat(from); err != nil {
		return nil, ws.DidYouMean(from, err)
	}
	if _, err := ws.Lstat(to); err == nil {
		return nil, result.Errorf(result.AlreadyExists, "%s: destination already exists; nothing was moved", destination).
			WithHint("remove it first, or choose another destination")
	}
	if fi, err := ws.Stat(path.Dir(to)); err != nil || !fi.IsDir() {
		return nil, result.Errorf(result.NotFound, "%s: the destination's directory does not exist", destination).
			WithHint("create it with create_directory first")
	}
	unlock, err := ws.Lock(from, to)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := ws.Rename(from, to); err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Successfully moved %s to %s", source, destination)
	return &Output{Text: text, Message: text, Details: &FSMove{Source: from, Destination: to, Content: text}}, nil
}

// AllowedDirectories names the one directory the tools may touch.
func AllowedDirectories(env *Env) *Output {
	dir := filepath.ToSlash(env.Workspace.Dir())
	text := "Allowed directories:\n" + dir
	return &Output{Text: text, Message: text, Data: true, Details: &FSAllowed{Directories: []string{dir}, Content: text}}
}
