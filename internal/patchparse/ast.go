// Package patchparse turns patch text — OpenAI Codex's "*** Begin Patch"
// format and its variants, or unified diffs — into one AST, with errors that
// carry Codex's wording and the patch line number.
package patchparse

import (
	"io/fs"
	"iter"
	"slices"
	"strings"

	"github.com/hunk-dev/hunk/internal/result"
)

// Format is the syntax a patch was written in.
type Format string

// The formats hunk reads.
const (
	Codex         Format = "codex"
	Unified       Format = "unified"
	SearchReplace Format = "search-replace" // aider's SEARCH/REPLACE blocks (searchreplace.go)
)

// Kind is what a FileOp does to its path.
type Kind string

// The file operations.
const (
	Add    Kind = "add"
	Delete Kind = "delete"
	Update Kind = "update" // also a pure move (Update with MoveTo and no chunks)
)

// Patch is a parsed patch: file operations in patch order.
type Patch struct {
	Format Format
	Files  []*FileOp
	// Notes say what the parser recovered from (text around a Codex
	// patch's markers, a missing '*** End Patch'), for the result's details.
	Notes []string
	// Unwrapped says what the patch was found inside, outermost first
	// (JSON "input", a shell heredoc), for the result's details.
	Unwrapped []string
}

// FileOp is one file's operation. Paths are as written in the patch (after
// -p stripping for unified diffs); resolving them is the workspace's job.
type FileOp struct {
	Kind   Kind
	Path   string
	MoveTo string // Update only: the new path ("" when not moved)
	// AltPath, for an Update from a plain (non-git) unified diff whose
	// "---" and "+++" names differ (diff -u a.go a.go.new): the other name.
	// The one that exists is patched, as GNU patch does.
	AltPath string
	// Removed, for a Delete from a unified diff, is how many lines its hunk
	// removes (for --stat; a Codex Delete does not say).
	Removed int
	// Mode, from git's "new file mode" or "new mode" header, is the
	// permission the file gets (0755, 0644); 0 leaves it as it is. OldMode,
	// from "old mode" or "deleted file mode", is the one it had (for -R).
	Mode, OldMode fs.FileMode
	// Add: the new file's lines, without line endings. Delete, when Full:
	// the deleted file's lines (a unified diff holds them). NoFinalNewline
	// is set when a unified diff says "\ No newline at end of file" for
	// the last of them.
	Content []string
	// ContentEOL, from a unified diff that is not CRLF throughout, is each
	// Content line's ending as the patch gives it ("\n" or "\r\n"): a new
	// file is written with exactly these. nil: unknown (the file's own).
	ContentEOL []Ending
	// from and fromOp: a unified diff's Add (or full Delete) keeps no
	// lines of its own; its content is the fromOp lines of these hunks,
	// made when asked (Lines): a diff of a tree's new files holds hundreds
	// of thousands of lines, which the collector would walk on every cycle
	// while they wait.
	from           []*Chunk
	fromOp         byte
	NoFinalNewline bool
	Full           bool // Delete only: Content is the whole deleted file
	// Whole: an Add that replaces the file when there is one (aider's
	// whole-file format), keeping its line endings and mode.
	Whole  bool
	Chunks []*Chunk // Update, and an Add that copies
	// CopyFrom, for an Add from git's "copy from": the file whose content
	// (as it was before the patch, as git reads it) the new file starts
	// from; Chunks then change it.
	CopyFrom string
	// Binary, from a GIT binary patch, replaces the whole content (of an
	// Add, an Update or the check of a Delete); Chunks and Content are unused.
	Binary *Binary
	// Link: the file is a symbolic link (git's mode 120000) whose target is
	// its content (one line, no final newline). Gitlink: a submodule
	// (160000), which in a plain work tree is an empty directory: created,
	// removed when empty, its commit changes nothing on disk.
	Link, Gitlink bool
	// OldHash, NewHash: the blob ids of git's "index" line (hex, maybe
	// abbreviated; "" without one). A binary patch is checked against
	// them; a text diff whose old id names the file as it is was made by
	// git from it (apply.MadeFrom).
	OldHash, NewHash string
	Line             int // 1-based patch line of the op's header
}

// Chunk is one hunk of an Update: where it goes and its lines.
type Chunk struct {
	// Context is the text after "@@ " in a Codex chunk header ("" for none):
	// a line to find first; the chunk is searched after it.
	Context string
	// Line-number hints from "@@ -a,b +c,d @@" headers (1-based); 0 when the
	// header carries none. They are hints only: a wrong number must not
	// prevent a unique match elsewhere.
	OldStart, OldLines, NewStart, NewLines int
	lines                                  []ChunkLine // (Lines)
	src                                    string      // where the lines' texts lie
	// from: a unified diff's hunk keeps no lines, only where they lie in
	// the patch: its text's bytes [off,stop), patch lines from first on
	// ("\" lines included), n of them hunk lines. Lines reads them from
	// there when asked. A big diff then holds the chunk lines of the files
	// in flight, not a million.
	from                *hunkText
	first, off, stop, n int32
	EndOfFile           bool // "*** End of File": the chunk ends at the end of the file
	// Unified "\ No newline at end of file" after the last old / new line.
	OldNoNewline, NewNoNewline bool
	// NoHeader is set for a Codex first chunk written without "@@".
	NoHeader bool
	// Guessed: a block's lines were told apart — context, removed, added —
	// by one of several equally good readings (BlockLines), so which line
	// is removed beside an equal context line is not known: only the
	// strict passes may place it, no recovery that keeps lines of the file.
	Guessed bool
	// Splits: a SEARCH/REPLACE block whose text holds divider lines its
	// grammar cannot tell from its own divider (a Markdown underline, a
	// merge conflict's =======) has a reading per divider left; Lines is
	// the first's. The file decides (the engine), or the block is refused.
	Splits []Split
	// DotsBefore, DotsAfter: a piece of a block split at aider's "..."
	// lines (DotPieces) begins or ends at one: a blank line there is a
	// line of the file, not the end of the block's text.
	DotsBefore, DotsAfter bool
	Line                  int // 1-based patch line of the chunk header (or first line)
}

// Split is one reading of a block: the divider line it takes (1-based
// patch line, and its text trimmed) and the chunk that leaves.
type Split struct {
	Divider int
	Mark    string
	Lines   []Line
	Guessed bool
}

// ChunkLine is one line of a chunk: Op is ' ' (context), '-' (removed) or '+'
// (added); its text (Chunk.Text) has no marker and no line ending.
//
// A chunk line holds no string, only where its text lies in its chunk's
// (the patch's own text, for a chunk read from one): 16 bytes with no
// pointer for the collector to scan, and a big diff holds a million.
type ChunkLine struct {
	Op byte
	// EOL, in a unified diff that is not CRLF throughout, is the line's
	// ending as the patch gives it; Unknown in a Codex patch or a CRLF
	// patch.
	EOL   Ending
	Line  int32 // 1-based patch line (a patch has at most 256 MiB)
	at, n int32 // its text: the chunk's src[at:at+n]
}

// Line is a chunk line with its text, as the block grammar works on them
// and as a chunk is made of them (Chunk.SetLines, Chunk.TextLines).
type Line struct {
	Op   byte
	EOL  Ending
	Line int32
	Text string
}

// Ending is a line's ending as a patch gives it.
type Ending uint8

const (
	Unknown Ending = iota // the patch does not say (the file's own is used)
	LF                    // "\n"
	CRLF                  // "\r\n"
)

// String is the ending's bytes ("" for Unknown).
func (e Ending) String() string {
	switch e {
	case LF:
		return "\n"
	case CRLF:
		return "\r\n"
	}
	return ""
}

// Lines is an Add's (or a full Delete's) lines and their endings
// (ContentEOL's rule): Content, or the lines of its hunks, made now.
func (f *FileOp) Lines() ([]string, []Ending) {
	if f.from == nil {
		return f.Content, f.ContentEOL
	}
	n := f.NumLines()
	lines, eols := make([]string, 0, n), make([]Ending, 0, n)
	for _, c := range f.from {
		for l := range c.All() {
			if l.Op != f.fromOp {
				continue
			}
			lines = append(lines, c.Text(l))
			if l.EOL != Unknown {
				eols = append(eols, l.EOL)
			}
		}
	}
	if len(eols) != len(lines) {
		eols = nil
	}
	return lines, eols
}

// NumLines is how many lines Lines holds.
func (f *FileOp) NumLines() int {
	if f.from == nil {
		return len(f.Content)
	}
	n := 0
	for _, c := range f.from {
		for l := range c.All() {
			if l.Op == f.fromOp {
				n++
			}
		}
	}
	return n
}

// Text is line l's text (no marker, no line ending).
func (c *Chunk) Text(l ChunkLine) string { return c.src[l.at : l.at+l.n] }

// Lines are the chunk's lines. A unified diff's hunk reads them from the
// patch each time they are asked for: hold the slice while it is needed;
// change a chunk's lines with SetLines only.
func (c *Chunk) Lines() []ChunkLine {
	if c.from == nil {
		return c.lines
	}
	return slices.AppendSeq(make([]ChunkLine, 0, c.n), c.All())
}

// All yields the chunk's lines, as Lines gives them, without making a
// slice of them.
func (c *Chunk) All() iter.Seq[ChunkLine] {
	if c.from == nil {
		return slices.Values(c.lines)
	}
	return func(yield func(ChunkLine) bool) { c.from.each(c, yield) }
}

// Any reports whether a line of the chunk is f.
func (c *Chunk) Any(f func(ChunkLine) bool) bool {
	for l := range c.All() {
		if f(l) {
			return true
		}
	}
	return false
}

// Len is the number of the chunk's lines.
func (c *Chunk) Len() int {
	if c.from == nil {
		return len(c.lines)
	}
	return int(c.n)
}

// SetLines makes the chunk's lines ls, their texts copied into one string.
func (c *Chunk) SetLines(ls []Line) {
	c.from = nil
	n := 0
	for _, l := range ls {
		n += len(l.Text)
	}
	var b strings.Builder
	b.Grow(n)
	c.lines = make([]ChunkLine, len(ls))
	for i, l := range ls {
		c.lines[i] = ChunkLine{Op: l.Op, EOL: l.EOL, Line: l.Line, at: int32(b.Len()), n: int32(len(l.Text))}
		b.WriteString(l.Text)
	}
	c.src = b.String()
}

// TextLines returns the chunk's lines with their texts.
func (c *Chunk) TextLines() []Line {
	ls := c.Lines()
	out := make([]Line, len(ls))
	for i, l := range ls {
		out[i] = Line{Op: l.Op, EOL: l.EOL, Line: l.Line, Text: c.Text(l)}
	}
	return out
}

// Old returns the lines the chunk expects in the file (context and removed).
func (c *Chunk) Old() []string {
	out := make([]string, 0, c.Len())
	for l := range c.All() {
		if l.Op != '+' {
			out = append(out, c.Text(l))
		}
	}
	return out
}

// Blocks reports whether f is a SEARCH/REPLACE block format (aider's,
// Cline's, Roo's), whose blocks apply in order.
func (f Format) Blocks() bool { return f == SearchReplace || f == Cline || f == Roo }

// New returns the lines the chunk leaves in the file (context and added).
func (c *Chunk) New() []string {
	out := make([]string, 0, c.Len())
	for l := range c.All() {
		if l.Op != '-' {
			out = append(out, c.Text(l))
		}
	}
	return out
}

// Reverse returns the patch that undoes p (patch -R, git apply -R): every
// chunk's added and removed lines swap, a move goes back, a mode change
// goes back to the old mode, an added file is deleted, and a deleted file
// whose whole content the patch holds (a unified diff's) comes back with
// its mode. A deletion without its content (a Codex patch's) cannot be
// reversed: that is an error naming it. p is not changed.
func Reverse(p *Patch) (*Patch, error) {
	r := &Patch{Format: p.Format, Files: make([]*FileOp, 0, len(p.Files))}
	for _, f := range p.Files {
		g := *f
		var bin *Binary
		if f.Binary != nil {
			if f.Binary.Reverse == nil && f.Kind != Add {
				return nil, result.Errorf(result.InvalidPatch, "cannot reverse the binary patch of %s: it holds no reverse hunk", f.Path).
					WithHint("make the diff with git diff --binary, which writes both directions").At(f.Path)
			}
			bin = &Binary{Forward: f.Binary.Reverse, Reverse: f.Binary.Forward}
		}
		switch f.Kind {
		case Add:
			if f.CopyFrom != "" {
				return nil, result.Errorf(result.InvalidPatch, "cannot reverse the copy of %s to %s", f.CopyFrom, f.Path).
					WithHint("git apply -R refuses it too ('already exists'); delete " + f.Path + " instead").At(f.Path)
			}
			g = FileOp{Kind: Delete, Path: f.Path, Line: f.Line, OldMode: f.Mode, Content: f.Content, ContentEOL: f.ContentEOL, from: f.from, fromOp: f.fromOp, NoFinalNewline: f.NoFinalNewline, Full: true, Removed: f.NumLines(),
				Binary: bin, OldHash: f.NewHash, NewHash: f.OldHash, Link: f.Link, Gitlink: f.Gitlink}
		case Delete:
			if f.Full {
				g = FileOp{Kind: Add, Path: f.Path, Line: f.Line, Mode: f.OldMode, Content: f.Content, ContentEOL: f.ContentEOL, from: f.from, fromOp: f.fromOp, NoFinalNewline: f.NoFinalNewline,
					Binary: bin, OldHash: f.NewHash, NewHash: f.OldHash, Link: f.Link, Gitlink: f.Gitlink}
				break
			}
			return nil, result.Errorf(result.InvalidPatch, "cannot reverse the deletion of %s: the patch does not hold its content", f.Path).
				WithHint("reverse a patch that deletes files with git apply -R on a diff made with its full content, or restore the file another way").
				At(f.Path)
		case Update:
			if f.MoveTo != "" {
				g.Path, g.MoveTo = f.MoveTo, f.Path
				g.AltPath = ""
			}
			g.Mode, g.OldMode = f.OldMode, f.Mode // 0: the mode it had is not in the patch
			g.OldHash, g.NewHash, g.Binary = f.NewHash, f.OldHash, bin
			g.Chunks = make([]*Chunk, len(f.Chunks))
			for i, c := range f.Chunks {
				rc := *c
				rc.OldStart, rc.NewStart = c.NewStart, c.OldStart
				rc.OldLines, rc.NewLines = c.NewLines, c.OldLines
				rc.OldNoNewline, rc.NewNoNewline = c.NewNoNewline, c.OldNoNewline
				rc.lines, rc.from = reverseLines(c.Lines()), nil
				rc.Splits = nil
				for _, s := range c.Splits {
					rc.Splits = append(rc.Splits, Split{Divider: s.Divider, Mark: s.Mark, Lines: reverseTextLines(s.Lines), Guessed: s.Guessed})
				}
				g.Chunks[i] = &rc
			}
			if p.Format.Blocks() {
				// Blocks apply in order, each on the result of the ones
				// before it: they are undone last first.
				slices.Reverse(g.Chunks)
			}
		}
		r.Files = append(r.Files, &g)
	}
	// Operations that touch a path another one touches depend on their
	// order, and are undone in the opposite one: git writes a change of
	// type as the old file's deletion, then the new one's addition;
	// reversed, the new one goes first, then the old one comes back. (The
	// whole list is reversed then: reversing twice gives the patch back.)
	seen := map[string]bool{}
	for _, f := range r.Files {
		shared := false
		for _, n := range []string{f.Path, f.MoveTo, f.CopyFrom} {
			if n != "" {
				shared = shared || seen[n]
				seen[n] = true
			}
		}
		if shared {
			slices.Reverse(r.Files)
			break
		}
	}
	return r, nil
}

// FileStat is one file's line counts, as git apply --numstat gives them.
type FileStat struct {
	Path    string `json:"path"`
	MoveTo  string `json:"moveTo,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Stat counts the lines each file of p adds and removes.
func (p *Patch) Stat() []FileStat {
	out := make([]FileStat, 0, len(p.Files))
	for _, f := range p.Files {
		st := FileStat{Path: f.Path, MoveTo: f.MoveTo}
		switch f.Kind {
		case Add:
			st.Added = f.NumLines()
		case Delete:
			st.Removed = f.Removed
		case Update:
			for _, c := range f.Chunks {
				for l := range c.All() {
					switch l.Op {
					case '+':
						st.Added++
					case '-':
						st.Removed++
					}
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// reverseLines is a chunk's lines with what they remove and add swapped.
func reverseLines(lines []ChunkLine) []ChunkLine {
	out := make([]ChunkLine, len(lines))
	for k, l := range lines {
		l.Op = swapOp(l.Op)
		out[k] = l
	}
	return out
}

// reverseTextLines is reverseLines of lines with their texts.
func reverseTextLines(lines []Line) []Line {
	out := make([]Line, len(lines))
	for k, l := range lines {
		l.Op = swapOp(l.Op)
		out[k] = l
	}
	return out
}

func swapOp(op byte) byte {
	switch op {
	case '+':
		return '-'
	case '-':
		return '+'
	}
	return op
}
