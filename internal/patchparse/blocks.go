package patchparse

import (
	"strconv"
	"strings"
)

// Blocks of one file, the file named by the caller (`hunk edit PATH
// --blocks`), as Cline and Roo Code write them:
//
//	------- SEARCH            (Cline; its legacy form <<<<<<< SEARCH)
//	lines to find
//	=======
//	lines to put in their place
//	+++++++ REPLACE           (legacy >>>>>>> REPLACE)
//
//	<<<<<<< SEARCH            (Roo Code's apply_diff)
//	:start_line:12
//	:end_line:14
//	-------
//	lines to find
//	=======
//	lines to put in their place
//	>>>>>>> REPLACE
//
// Markers have 3 or more characters and may end in ">". A content line
// that is a marker is written with a backslash before it (`\=======`), as
// Roo escapes them; the backslash is dropped. Roo's :start_line: is the
// chunk's line hint: among places where the block matches equally, the
// nearest is taken (never a place where it does not match). Text around
// the blocks (prose, fences) is passed over.

// The formats of file-less blocks (ParseBlocks).
const (
	Cline Format = "cline" // Cline's ------- SEARCH / +++++++ REPLACE, or the <<<<<<< / >>>>>>> markers without a path
	Roo   Format = "roo"   // Roo Code's apply_diff, with :start_line: hints and a ------- line
)

// ParseBlocks reads SEARCH/REPLACE blocks that name no file as the edit of
// path: one Update whose chunks are the blocks (an Add when the one block
// has an empty SEARCH). JSON arguments around the text ({"diff": ...}) are
// unwrapped, as Parse does.
func ParseBlocks(text, path string) (*Patch, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	text, unwrapped := unwrapJSON(text)
	L := splitLines(text)
	p := &Patch{Format: Cline, Unwrapped: unwrapped}
	f := &FileOp{Kind: Update, Path: path, Line: 1}
	var empty *Chunk
	for i := 0; i < L.len(); i++ {
		t := strings.TrimSpace(L.at(i))
		if !blockStart(t) {
			if blockEnd(t) {
				return nil, hunkError(i, clineBlocks.shape, "%q without a SEARCH line before it", t)
			}
			continue
		}
		c := &Chunk{Line: i + 1}
		j := i + 1
		// Roo's hints and separator.
		for ; j < L.len(); j++ {
			h := strings.TrimSpace(L.at(j))
			if n, ok := hintLine(h, ":start_line:"); ok {
				c.OldStart = n
				p.Format = Roo
				continue
			}
			if n, ok := hintLine(h, ":end_line:"); ok {
				if c.OldStart > 0 && n >= c.OldStart {
					c.OldLines = n - c.OldStart + 1
				}
				p.Format = Roo
				continue
			}
			if isRun(h, '-') && strings.HasPrefix(strings.TrimSpace(L.at(i)), "<") {
				p.Format = Roo
				j++
			}
			break
		}
		reads, k, err := clineBlocks.body(L, i, j, L.len())
		if err != nil {
			return nil, err
		}
		read := blockChunk(reads, c.Line)
		c.lines, c.src, c.Guessed, c.Splits = read.lines, read.src, read.Guessed, read.Splits
		if emptySearch(reads[0].search) {
			empty = c
		}
		f.Chunks = append(f.Chunks, c)
		i = k
	}
	switch {
	case len(f.Chunks) == 0:
		return nil, noFiles("give blocks: ------- SEARCH, the lines to find, =======, the lines to put in their place, +++++++ REPLACE")
	case empty != nil && len(f.Chunks) > 1:
		return nil, hunkError(empty.Line-1, "give a new file one block with an empty SEARCH and the whole content as its REPLACE", "a block with an empty SEARCH writes the whole file, and there are other blocks")
	case empty != nil:
		add := &FileOp{Kind: Add, Path: path, Line: 1}
		add.Content = empty.New()
		p.Files = []*FileOp{add}
		return p, nil
	}
	p.Files = []*FileOp{f}
	return p, nil
}

// blockStart and blockEnd recognise the markers around a file-less block.
func blockStart(t string) bool {
	t = strings.TrimSuffix(t, ">")
	w, ok := strings.CutSuffix(t, " SEARCH")
	return ok && (isRun(w, '-') || isRun(w, '<'))
}

func blockEnd(t string) bool {
	t = strings.TrimSuffix(t, ">")
	w, ok := strings.CutSuffix(t, " REPLACE")
	return ok && (isRun(w, '+') || isRun(w, '>'))
}

// isRun reports whether t is three or more of c and nothing else.
func isRun(t string, c byte) bool {
	if len(t) < 3 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != c {
			return false
		}
	}
	return true
}

// hintLine reads a Roo hint line (":start_line:12").
func hintLine(t, key string) (int, bool) {
	rest, ok := strings.CutPrefix(t, key)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	return n, err == nil && n > 0
}

// unescapeMarker drops the backslash before a content line that would
// otherwise read as a marker (\=======, \<<<<<<< SEARCH, \-------).
func unescapeMarker(l string) string {
	t := strings.TrimSpace(l)
	if !strings.HasPrefix(t, `\`) {
		return l
	}
	u := t[1:]
	if blockStart(u) || blockEnd(u) || isRun(u, '=') || isRun(u, '-') || strings.HasPrefix(u, ":start_line:") || strings.HasPrefix(u, ":end_line:") {
		i := strings.IndexByte(l, '\\')
		return l[:i] + l[i+1:]
	}
	return l
}
