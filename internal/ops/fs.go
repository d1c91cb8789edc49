package ops

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/edit"
	"github.com/hunk-dev/hunk/internal/fsquery"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// The filesystem operations below serve the reference MCP filesystem
// server's tools (hunk mcp --tools filesystem) with hunk's guarantees: every
// path confined to the workspace, text refused when it is binary, writes
// atomic. Their result text follows the reference server's wording, which
// models know.

// ReadText returns a text file whole, or its first head or last tail lines
// (fsquery.HeadTail).
func ReadText(env *Env, p string, headN, tailN float64) (*Output, error) {
	if headN != 0 && tailN != 0 {
		return nil, result.Usagef("Cannot specify both head and tail parameters simultaneously")
	}
	name, data, err := fsquery.Text(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	env.Reads.Saw(name, data)
	text, err := fsquery.HeadTail(data, headN, tailN)
	if err != nil {
		return nil, err
	}
	return &Output{Text: text, Message: text, Data: true, Details: &FSText{Path: name, Content: text}}, nil
}

// ReadMany reads several text files; one that fails is reported in its
// place without failing the others.
func ReadMany(env *Env, paths []string) (*Output, error) {
	if len(paths) == 0 {
		return nil, result.Usagef("no paths given")
	}
	parts := make([]string, len(paths))
	for i, p := range paths {
		name, data, err := fsquery.Text(env.Workspace, p)
		if err != nil {
			parts[i] = fmt.Sprintf("%s: Error - %s", p, result.As(err).Msg)
			continue
		}
		env.Reads.Saw(name, data)
		parts[i] = fmt.Sprintf("%s:\n%s\n", p, data)
	}
	text := strings.Join(parts, "\n---\n")
	return &Output{Text: text, Message: text, Data: true, Details: &FSText{Content: text}}, nil
}

// ReadMedia returns an image or audio file as a base64 content block (any
// other file as an embedded resource, as the reference sends it).
func ReadMedia(env *Env, p string) (*Output, error) {
	m, data, err := fsquery.ReadMedia(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	env.Reads.Saw(m.Path, data)
	item := m.Content[0]
	block := result.Content{Type: item.Type, MimeType: item.MimeType, Data: item.Data}
	if r := item.Resource; r != nil {
		block = result.Content{Type: "resource", URI: r.URI, MimeType: r.MimeType, Data: r.Blob}
	}
	text := fmt.Sprintf("%s: %s, %d bytes", m.Path, m.MimeType, m.Bytes)
	// The block alone is the result, as the reference sends it: Text is
	// for a person at the terminal.
	return &Output{Text: text, Message: text, Media: true, Images: []result.Content{block}, Details: m}, nil
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
		_, data, err := fsquery.Text(env.Workspace, name)
		if err == nil {
			err = textfile.CheckText(name, data)
		}
		if err != nil {
			return nil, err
		}
		res = &edit.Result{Path: name, Old: data, New: data, Match: []edit.Rule{}, Edits: []edit.EditResult{}}
	} else if res, err = edit.Run(files, name, es, opt); err != nil {
		return nil, err
	}
	d := diff.JSPatch(env.Workspace.Abs(name), res.Old, res.New)
	text := diff.Fenced(d) + "\n"
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

// List lists a directory as "[DIR] name" and "[FILE] name" lines.
func List(env *Env, p string) (*Output, error) {
	name, ents, err := fsquery.List(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	text := fsquery.ListText(ents)
	return &Output{Text: text, Message: text, Data: true, Details: &FSList{Path: name, Entries: ents, Content: text}}, nil
}

// ListWithSizes lists a directory with file sizes, sorted by name or size.
func ListWithSizes(env *Env, p, sortBy string) (*Output, error) {
	if _, err := fsquery.SizesText(nil, sortBy); err != nil {
		return nil, err
	}
	name, ents, err := fsquery.List(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	text, _ := fsquery.SizesText(ents, sortBy)
	return &Output{Text: text, Message: text, Data: true, Details: &FSList{Path: name, Entries: ents, Content: text}}, nil
}

// Tree returns a directory's tree as JSON, leaving out what exclude names
// (fsquery.Tree).
func Tree(env *Env, p string, exclude []string) (*Output, error) {
	name, text, err := fsquery.Tree(env.Workspace, p, exclude)
	if err != nil {
		return nil, err
	}
	return &Output{Text: text, Message: text, Data: true, Details: &FSText{Path: name, Content: text}}, nil
}

// SearchFiles finds the paths under p that match a glob (fsquery.Search), as
// absolute paths a line each.
func SearchFiles(env *Env, p, pattern string, exclude []string) (*Output, error) {
	matches, err := fsquery.Search(env.Workspace, p, pattern, exclude)
	if err != nil {
		return nil, err
	}
	text := fsquery.SearchText(matches)
	return &Output{Text: text, Message: text, Data: true, Details: &FSSearch{Matches: matches, Content: text}}, nil
}

// Info describes a file or directory: size, times, type and permissions.
func Info(env *Env, p string) (*Output, error) {
	info, err := fsquery.Stats(env.Workspace, p)
	if err != nil {
		return nil, err
	}
	return &Output{Text: info.Content, Message: info.Content, Data: true, Details: info}, nil
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
