package apply

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"

	"github.com/hunk-dev/hunk/internal/gitobj"
	"github.com/hunk-dev/hunk/internal/patchparse"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// addContent is an Add File's content: its lines, each ending in a newline
// (none after the last when a unified diff says "\ No newline at end of file").
func addContent(f *patchparse.FileOp) []byte {
	lines, eols := f.Lines()
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b := make([]byte, 0, n+len(eols))
	for i, l := range lines {
		if eols != nil {
			// The endings the patch gives (a new CRLF file stays CRLF); a
			// last line without one keeps its "\r" as text, as git does.
			b = append(append(b, l...), eols[i].String()...)
			continue
		}
		b = append(b, strings.TrimSuffix(l, "\r")...)
		b = append(b, '\n')
	}
	if f.NoFinalNewline && len(b) > 0 {
		b = b[:len(b)-1]
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// codexIO wraps a filesystem error with Codex's context wording.
func codexIO(err error, context string) error {
	re := result.As(err)
	if re.Code == result.OutsideWorkspace {
		return err
	}
	e := *re
	e.Msg = context + ": " + re.Msg
	return &e
}

// changeContent is what f's hunks make of cur: its binary patch (checked
// against the index line's blob ids, as git does), its chunks (under
// --3way, merged with cur from the blob the diff was made from where the
// repository has it: said in fr), or cur itself when it has neither (a
// rename or a mode change).
func changeContent(name string, cur []byte, f *patchparse.FileOp, opt Options, fr *FileResult) ([]byte, []string, error) {
	switch {
	case f.Binary != nil:
		parts, err := binaryParts(name, cur, f, opt)
		if err != nil {
			return nil, nil, err
		}
		return bytes.Join(parts, nil), []string{"binary"}, nil
	case len(f.Chunks) > 0 && opt.ThreeWay != nil && fr != nil:
		out, conflicts, why, ok := threeWay(name, cur, f, opt)
		if ok {
			fr.Merge, fr.Conflicts = MergeClean, conflicts
			if conflicts > 0 {
				fr.Merge = MergeConflicts
			}
			return out, []string{"3way"}, nil
		}
		fr.Merge = "direct: " + why
		return applyChunks(name, cur, f.Chunks, opt)
	case len(f.Chunks) > 0:
		return applyChunks(name, cur, f.Chunks, opt)
	}
	return cur, nil, nil
}

// change is what f makes of cur: changeContent's, or a binary patch's
// parts (after nil), never joined.
func change(name string, cur []byte, f *patchparse.FileOp, opt Options, fr *FileResult) (after []byte, parts [][]byte, matches []string, err error) {
	if f.Binary != nil {
		parts, err = binaryParts(name, cur, f, opt)
		return nil, parts, []string{"binary"}, err
	}
	after, matches, err = changeContent(name, cur, f, opt, fr)
	return after, nil, matches, err
}

// binaryParts is what f's binary patch makes of cur, checked against the
// index line's blob ids as git does: as parts to write one after the
// other (BinaryHunk.Parts), for a small delta can make a big file.
func binaryParts(name string, cur []byte, f *patchparse.FileOp, opt Options) ([][]byte, error) {
	if err := checkBlob(name, cur, f.OldHash, "the file", opt); err != nil {
		return nil, err
	}
	parts, err := f.Binary.Forward.Parts(cur)
	if err != nil {
		return nil, result.Errorf(result.NoMatch, "%s: the binary patch does not apply: %v", opt.display(name), err).
			WithHint("the file is not the one the patch was made from").At(name)
	}
	if err := checkBlobParts(name, parts, f.NewHash, "the binary patch's result", opt); err != nil {
		return nil, err
	}
	return parts, nil
}

// checkBlob checks data against a git blob id from an "index" line (a
// full or abbreviated SHA-1 or SHA-256; "" or all zeros for an absent
// file): a binary patch applies only to the content it was made from.
func checkBlob(name string, data []byte, id, what string, opt Options) error {
	return checkBlobParts(name, [][]byte{data}, id, what, opt)
}

// checkBlobParts is checkBlob of the content parts make.
func checkBlobParts(name string, parts [][]byte, id, what string, opt Options) error {
	if id == "" || strings.Trim(id, "0") == "" {
		return nil
	}
	if got := gitobj.BlobIDParts(parts, len(id) > 40); strings.HasPrefix(got, strings.ToLower(id)) {
		return nil
	}
	return result.Errorf(result.NoMatch, "%s: %s is not the content the binary patch expects (blob %s)", opt.display(name), what, id).
		WithHint("the patch was made from another version of the file: make it again against this one").At(name)
}

// MadeFrom reports whether f's "index" line names the content its file
// has now (seven hex digits or more of git's blob id): the diff is git's,
// made from this very file.
func MadeFrom(fsys workspace.FS, f *patchparse.FileOp) bool {
	id, ok := indexID(f.OldHash)
	if !ok {
		return false
	}
	n, err := fsys.Resolve(f.Path)
	if err != nil {
		return false
	}
	data, err := fsys.ReadFile(n)
	return err == nil && strings.HasPrefix(gitBlobID(data, len(id) > 40), id)
}

// indexID is an "index" line's blob id, lowercase, when it names one: seven
// hex digits or more, not all zeros (git's for an absent file).
func indexID(h string) (string, bool) {
	id := strings.ToLower(h)
	return id, len(id) >= 7 && strings.Trim(id, "0") != "" && strings.Trim(id, "0123456789abcdef") == ""
}

// gitBlobID is the id git gives a blob of data (gitobj.BlobID).
func gitBlobID(data []byte, sha256Repo bool) string { return gitobj.BlobID(data, sha256Repo) }

// readSource reads the source of a copy as it is on disk (as git reads it:
// before the patch), through a link that stays inside the workspace.
func readSource(fsys workspace.FS, name string, opt Options) ([]byte, fs.FileMode, error) {
	t, err := fsys.FollowLinks(name)
	if err != nil {
		return nil, 0, err
	}
	fi, err := fsys.Lstat(t)
	if err != nil {
		return nil, 0, result.Errorf(result.NotFound, "%s: the file to copy does not exist", opt.display(name)).At(name)
	}
	if fi.IsDir() {
		return nil, 0, result.Errorf(result.IsDirectory, "%s: the file to copy is a directory", opt.display(name)).At(name)
	}
	data, err := fsys.ReadFile(t)
	return data, fi.Mode() & fs.ModePerm, err
}

// linkTarget is the target of the symbolic link at name as the patch has
// left it so far (the overlay's, or the disk's, read and never followed).
func linkTarget(fsys workspace.FS, name string, s *state, opt Options) (string, error) {
	if s.touched {
		if !s.asLink {
			return "", result.Errorf(result.NoMatch, "%s: is not a symbolic link", opt.display(name)).At(name)
		}
		return string(s.data), nil
	}
	if !s.link {
		return "", result.Errorf(result.NoMatch, "%s: is not a symbolic link, but the patch changes one there", opt.display(name)).
			WithHint("the patch was made where this path is a symbolic link (mode 120000)").At(name)
	}
	return fsys.Readlink(name)
}

// deletesContent reports whether a text Delete names what it deletes (a
// unified diff's lines or index line): it removes the file only when the
// file holds that. A Codex Delete File names nothing, and deletes.
func deletesContent(f *patchparse.FileOp) bool {
	_, hashed := indexID(f.OldHash)
	return !f.Link && !f.Gitlink && f.Binary == nil && (f.Full || hashed)
}

// checkDeleted refuses to delete name unless it holds what f deletes: the
// blob its index line names (git diff -D holds nothing else), else its
// lines (line endings aside: a CRLF checkout of the diff's LF lines is the
// same text), as git apply and GNU patch check.
func checkDeleted(name string, data []byte, f *patchparse.FileOp, opt Options) error {
	disp := opt.display(name)
	if id, ok := indexID(f.OldHash); ok {
		if strings.HasPrefix(gitBlobID(data, len(id) > 40), id) {
			return nil
		}
		if !f.Full { // only the blob says what it was
			return result.Errorf(result.NoMatch, "%s: the file is not what the diff deletes (its index line names blob %s)", disp, id).
				WithHint("the file changed since the diff was made: look at it, and delete it yourself if it is to go").At(name)
		}
	}
	want := bytes.ReplaceAll(addContent(f), []byte("\r\n"), []byte("\n"))
	got := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if bytes.Equal(got, want) {
		return nil
	}
	line := 1 + bytes.Count(got[:commonPrefix(got, want)], []byte("\n"))
	msg := fmt.Sprintf("%s: the file is not what the diff deletes (line %d differs)", disp, line)
	if id, ok := indexID(f.OldHash); ok {
		msg = fmt.Sprintf("%s: the file is not what the diff deletes (its index line names blob %s; line %d differs)", disp, id, line)
	}
	return result.Errorf(result.NoMatch, "%s", msg).
		WithHint("the file changed since the diff was made: look at it, and delete it yourself if it is to go").At(name)
}

// commonPrefix is how many leading bytes a and b share.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
