package undo

import (
	"fmt"
	"strings"

	"github.com/hunk-dev/hunk/internal/diff"
	"github.com/hunk-dev/hunk/internal/history"
	"github.com/hunk-dev/hunk/internal/result"
)

// EntryDiff renders what e changed, file by file: its pre-images against
// its post-images, as far as the history (or the file, where it still
// holds the post-image) has them. A file the path policy keeps from being
// read is named, not shown. list is the history, where a post-image may be
// stored as a later operation's pre-image.
func EntryDiff(ws Workspace, store *history.Store, list []*history.Entry, e *history.Entry) string {
	byHash := map[string]*history.Image{}
	for _, o := range list {
		for _, f := range o.Files {
			if f.Pre.Stored() {
				byHash[f.Pre.Hash] = f.Pre
			}
		}
	}
	var b strings.Builder
	for _, f := range e.Files {
		if f.Pre != nil && f.Pre.Dir {
			f.Pre = nil // a file in a directory's place: shown as new
		}
		if f.Post != nil && f.Post.Dir {
			f.Post = nil // a directory in a file's place: the file shown deleted
		}
		if f.Pre == nil && f.Post == nil {
			continue
		}
		if err := ws.CheckRead(f.Path); err != nil {
			fmt.Fprintf(&b, "# %s: not shown (%v)\n", f.Path, result.As(err).Msg)
			continue
		}
		oldData, okOld := imageData(ws, store, byHash, f.Path, f.Pre)
		newData, okNew := imageData(ws, store, byHash, f.Path, f.Post)
		if !okOld || !okNew {
			fmt.Fprintf(&b, "# %s: not shown (the history no longer holds its content)\n", f.Path)
			continue
		}
		if f.Post == nil {
			b.WriteString(deletion(f.Path, oldData))
			continue
		}
		b.WriteString(fileDiff(f.Path, oldData, newData, f.Pre == nil))
	}
	return b.String()
}

// imageData is im's content: a link's target, a blob, or the workspace's
// file when it still holds im.
func imageData(ws Workspace, store *history.Store, byHash map[string]*history.Image, name string, im *history.Image) ([]byte, bool) {
	switch {
	case im == nil:
		return nil, true
	case im.Link != "":
		return []byte(im.Link), true
	}
	for _, c := range []*history.Image{im, byHash[im.Hash]} {
		if c == nil {
			continue
		}
		if data, err := store.Blob(c); err == nil {
			return data, true
		}
	}
	if data, err := ws.ReadFileRaw(name); err == nil && history.Hash(data) == im.Hash {
		return data, true
	}
	return nil, false
}

func fileDiff(name string, old, new []byte, created bool) string {
	return diff.File(name, old, new, created)
}
func deletion(name string, old []byte) string { return diff.Deletion(name, old) }

// Message says what the undo did (or, dry, would do).
func (res *Result) Message(dryRun bool) string {
	ids := strings.Join(res.Undone, ", ")
	if mv := res.Moved; mv != nil {
		if dryRun {
			return fmt.Sprintf("Would undo %s: move %s back to %s (dry run: nothing was written).", ids, mv.Path, mv.From)
		}
		return fmt.Sprintf("Undid %s: moved %s back to %s.", ids, mv.Path, mv.From)
	}
	var b strings.Builder
	switch {
	case dryRun:
		fmt.Fprintf(&b, "Would undo %s (dry run: nothing was written).", ids)
	case len(res.Added)+len(res.Modified)+len(res.Deleted) == 0:
		fmt.Fprintf(&b, "Undid %s: the files were as before it already; nothing was written.", ids)
	default:
		fmt.Fprintf(&b, "Undid %s. Updated the following files:", ids)
	}
	for _, p := range res.Added {
		b.WriteString("\nA " + p)
	}
	for _, p := range res.Modified {
		b.WriteString("\nM " + p)
	}
	for _, p := range res.Deleted {
		b.WriteString("\nD " + p)
	}
	if len(res.Forced) > 0 {
		b.WriteString("\nnote: --force: restored over later changes to " + strings.Join(res.Forced, "; "))
	}
	if len(res.Kept) > 0 {
		b.WriteString("\nnote: left as they are, changed since: " + strings.Join(res.Kept, "; "))
	}
	return b.String()
}

// Changes are the paths e added, modified and deleted (a move: its new
// path added, its old one deleted).
func Changes(e *history.Entry) (added, modified, deleted []string) {
	added, modified, deleted = []string{}, []string{}, []string{}
	for _, f := range e.Files {
		switch {
		case f.From != "":
			added, deleted = append(added, f.Path), append(deleted, f.From)
		case f.Pre == nil || f.Pre.Dir && f.Post != nil && !f.Post.Dir: // a file in a directory's place is new
			added = append(added, f.Path)
		case f.Post == nil || f.Post.Dir && !f.Pre.Dir: // a directory in a file's place: the file is gone
			deleted = append(deleted, f.Path)
		default:
			modified = append(modified, f.Path)
		}
	}
	return added, modified, deleted
}
