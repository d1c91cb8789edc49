package ops

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/glob"
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
// The counts are taken as the reference server takes them: 0 is no count, a
// fraction of a line is a whole line more for head (it reads lines while it
// has fewer than head) and none for tail, a negative count reads nothing;
// head's last line comes without its "\n", as there. Tail's lines are
// exactly the file's last ones, ending included (the reference's tail
// counts the empty string after the last newline as a line).
func ReadText(env *Env, p string, headN, tailN float64) (*Output, error) {
	if headN != 0 && tailN != 0 {
		return nil, result.Usagef("Cannot specify both head and tail parameters simultaneously")
	}
	head, tail := int(math.Min(math.Ceil(headN), 1<<31)), int(math.Min(math.Trunc(tailN), 1<<31))
	ws := env.Workspace
	name, data, err := readText(ws, p)
	if err != nil {
		return nil, err
	}
	env.Reads.saw(name, data)
	text := string(data)
	if headN < 0 || tailN < 0 || (tailN > 0 && tail == 0) {
		text = ""
	} else if head > 0 || tail > 0 {
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
		if head > 0 {
			// As the reference: the lines joined by "\n", the last one
			// without its "\n".
			text = strings.TrimSuffix(text, "\n")
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
		name, data, err := readText(env.Workspace, p)
		if err != nil {
			parts[i] = fmt.Sprintf("%s: Error - %s", p, result.As(err).Msg)
			continue
		}
		env.Reads.saw(name, data)
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
	env.Reads.saw(name, data)
	b64 := base64.StdEncoding.EncodeToString(data)
	var item FSMediaItem
	var block result.Content
	switch {
	case strings.HasPrefix(mime, "image/"), strings.HasPrefix(mime, "audio/"):
		kind, _, _ := strings.Cut(mime, "/")
		item = FSMediaItem{Type: kind, Data: b64, MimeType: mime}
		block = result.Content{Type: kind, MimeType: mime, Data: b64}
	default:
		// As the reference: any other file is an embedded resource.
		uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(ws.Abs(name))}).String()
		item = FSMediaItem{Type: "resource", Resource: &FSResource{URI: uri, MimeType: mime, Blob: b64}}
		block = result.Content{Type: "resource", URI: uri, MimeType: mime, Data: b64}
	}
	text := fmt.Sprintf("%s: %s, %d bytes", name, mime, len(data))
	// The block alone is the result, as the reference sends it: Text is
	// for a person at the terminal.
	return &Output{Text: text, Message: text, Media: true,
		Images:  []result.Content{block},
		Details: &FSMedia{Path: name, MimeType: mime, Bytes: len(data), Content: []FSMediaItem{item}}}, nil
}

// EditFile is the reference server's edit_file: each edit applied to what
// the previous ones left, all or none, each old text matched once (or
// refused as AMBIGUOUS where the reference replaces the first); the result
// is the change as the reference writes it — a jsdiff patch of the file's
// absolute path ("Index:", "--- PATH\toriginal", "+++ PATH\tmodified", 4
// lines of context) in a fence of backticks longer than any run in it.
func EditFile(env *Env, p string, edits []EditSpec, dryRun bool) (*Output, error) {
	var es []edit.Edit
	if len(edits) > 0 {
		var err error
		if es, err = (EditRequest{Edits: edits}).edits(); err != nil {
			return nil, err
		}
	}
	files, rec, name, err := editTarget(env, p, dryRun, "edit_file")
	if err != nil {
		return nil, err
	}
	defer files.Done()
	opt := editOptions(env, false, "", true)
	opt.Sequential, opt.Keep = true, true
	var res *edit.Result
	if len(es) == 0 {
		// No edits: the file as it is, as the reference answers.
		_, data, err := readText(env.Workspace, name)
		if err == nil {
			err = workspace.CheckText(name, data)
		}
		if err != nil {
			return nil, err
		}
		res = &edit.Result{Path: name, Old: data, New: data, Match: []edit.Rule{}, Edits: []edit.EditResult{}}
	} else if res, err = edit.Run(files, name, es, opt); err != nil {
		return nil, err
	}
	abs := env.Workspace.Abs(name)
	d := diff.Write("Index: "+abs+"\n===================================================================\n--- "+abs+"\toriginal\n+++ "+abs+"\tmodified\n",
		res.Old, res.New, diff.Style{Context: 4, Counts: true})
	fence := "```"
	for strings.Contains(d, fence) {
		fence += "`"
	}
	text := fence + "diff\n" + d + fence + "\n\n"
	res.Old, res.New = nil, nil
	res.Diff = d
	return &Output{Text: text, Message: text, Diff: d, Details: &EditDetails{Result: *res, DryRun: dryRun, OpID: opID(rec)}}, nil
}

// Mkdir creates a directory and its parents; an existing one is fine.
func Mkdir(env *Env, p string) (*Output, error) {
	ws := env.Workspace
	name, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	fsys, _ := env.FS(false, "create_directory")
	defer fsys.Done()
	if err := fsys.MkdirAll(name); err != nil {
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
		if err == nil {
			en.statSize = fi.Size()
		}
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
	// As the reference: by name in a locale's order, or by the size stat
	// gives (a directory's too), largest first.
	sort.SliceStable(ents, func(i, j int) bool { return localeLess(ents[i].Name, ents[j].Name) })
	if sortBy == "size" {
		sort.SliceStable(ents, func(i, j int) bool { return ents[i].statSize > ents[j].statSize })
	}
	var b strings.Builder
	files, dirs, total := 0, 0, int64(0)
	for _, e := range ents {
		if e.Type == "directory" {
			dirs++
			fmt.Fprintf(&b, "[DIR] %-30s \n", workspace.Quote(e.Name))
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

// localeLess orders names as JavaScript's localeCompare does for the
// common cases: letters without regard to case, then lower case first.
func localeLess(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	return a > b
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
			if treeExcluded(exclude, r) {
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

// treeExcluded is directory_tree's excludePatterns, as the reference
// server applies them: a pattern with a * is matched against rel (the path
// below the tree's root); any other names a file or directory anywhere
// (rel itself, **/PATTERN or anything below **/PATTERN/).
func treeExcluded(patterns []string, rel string) bool {
	for _, p := range patterns {
		if strings.Contains(p, "*") {
			if Glob(p, rel) {
				return true
			}
			continue
		}
		if Glob(p, rel) || Glob("**/"+p, rel) || Glob("**/"+p+"/**", rel) {
			return true
		}
	}
	return false
}

// searchExcluded is search_files' excludePatterns: rel matches one.
func searchExcluded(patterns []string, rel string) bool {
	for _, p := range patterns {
		if Glob(p, rel) {
			return true
		}
	}
	return false
}

// maxBraceExpansions bounds what one pattern's braces expand to.
const maxBraceExpansions = 256

// Glob matches a slash path against a glob pattern as minimatch does with
// {dot: true} (the reference MCP filesystem server's matcher): the whole
// path, segment by segment — *, ? and [...] ([!...] and [^...] negated)
// inside one segment, a ** segment for any number of segments (none
// included), {a,b} alternatives, and a leading ! negating the pattern. So
// "*.go" matches x.go and not sub/x.go; "**/*.go" matches both.
func Glob(pattern, rel string) bool {
	negate := false
	for strings.HasPrefix(pattern, "!") {
		negate, pattern = !negate, pattern[1:]
	}
	if pattern == "" {
		return negate
	}
	segs := strings.Split(rel, "/")
	for _, alt := range expandBraces(pattern, maxBraceExpansions) {
		if glob.Segments(strings.Split(alt, "/"), segs, segMatch) {
			return !negate
		}
	}
	return negate
}

// expandBraces expands the first {a,b,...} group of p (recursively, nested
// groups too) into at most limit patterns; a brace without a matching close
// or comma is literal.
func expandBraces(p string, limit int) []string {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			alts := splitAlternatives(p[open+1 : i])
			if len(alts) < 2 {
				open = -1
				continue
			}
			var out []string
			for _, a := range alts {
				for _, e := range expandBraces(p[:open]+a+p[i+1:], limit) {
					if len(out) >= limit {
						return out
					}
					out = append(out, e)
				}
			}
			return out
		}
	}
	return []string{p}
}

// splitAlternatives splits a brace group's inside at its top-level commas.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// segMatch matches one path segment: path.Match with minimatch's [!...].
func segMatch(pat, seg string) bool {
	if strings.Contains(pat, "[!") {
		pat = strings.ReplaceAll(pat, "[!", "[^")
	}
	ok, _ := path.Match(pat, seg)
	return ok
}

// maxSearchResults bounds a search.
const maxSearchResults = 10000

// Search finds the files and directories under p whose path (relative to
// p) matches a glob pattern (Glob: "*.go" the ones directly in p, "**/*.go"
// at any depth), leaving out excluded ones and what is below them; the
// matches are absolute paths, as the reference server returns them.
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
			if searchExcluded(exclude, r) {
				continue
			}
			if Glob(pattern, r) {
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
		Created:     jsDate(created),
		Modified:    jsDate(fi.ModTime()),
		Accessed:    jsDate(accessed),
		IsDirectory: fi.IsDir(),
		IsFile:      fi.Mode().IsRegular(),
		Permissions: fmt.Sprintf("%03o", fi.Mode().Perm()),
	}
	text := fmt.Sprintf("size: %d\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %t\nisFile: %t\npermissions: %s",
		info.Size, info.Created, info.Modified, info.Accessed, info.IsDirectory, info.IsFile, info.Permissions)
	info.Content = text
	return &Output{Text: text, Message: text, Data: true, Details: info}, nil
}

// jsDate writes t as JavaScript's Date.prototype.toString does, in local
// time — the reference server's get_file_info shows its times so.
func jsDate(t time.Time) string {
	t = t.Local()
	zone, _ := t.Zone()
	if zone == "UTC" {
		zone = "Coordinated Universal Time"
	}
	return t.Format("Mon Jan 02 2006 15:04:05 GMT-0700") + " (" + zone + ")"
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
	fsys, _ := env.FS(false, "move_file")
	defer fsys.Done()
	unlock, err := fsys.Lock(from, to)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := fsys.Move(from, to); err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Successfully moved %s to %s", source, destination)
	return &Output{Text: text, Message: text, Details: &FSMove{Source: from, Destination: to, Content: text}}, nil // the reference's result: no opId
}

// AllowedDirectories names the one directory the tools may touch.
func AllowedDirectories(env *Env) *Output {
	dir := filepath.ToSlash(env.Workspace.Dir())
	text := "Allowed directories:\n" + dir
	return &Output{Text: text, Message: text, Data: true, Details: &FSAllowed{Directories: []string{dir}, Content: text}}
}
