package edit

import (
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
	"github.com/hunk-dev/hunk/internal/workspace"
)

// Insert inserts text after line `after` (1-based; 0 inserts at the start)
// of the file name, under the same lock, checks and atomic write as Run. The
// text takes the file's line endings and becomes whole lines: a line break
// is added after it, except at the end of a file that has no final line
// break (which keeps having none).
func Insert(files workspace.FS, name string, after int, text string, opt Options) (*Result, error) {
	if after < 0 {
		return nil, result.Errorf(result.InvalidArgument, "insert line must be 0 (the start) or more, not %d", after)
	}
	return change(files, name, opt, func(content []byte) ([][]byte, *Result, error) {
		return insert(name, content, after, text, opt)
	})
}

func insert(name string, content []byte, after int, text string, opt Options) ([][]byte, *Result, error) {
	if err := textfile.CheckText(name, content); err != nil {
		return nil, nil, err
	}
	bom, body := splitBOM(content)
	f := newFile(body)
	lines := f.lines()
	if after > len(lines.Lines) {
		return nil, nil, result.Errorf(result.InvalidArgument, "%s: cannot insert after line %d: the file has %s", name, after, result.Count(len(lines.Lines), "line")).
			WithHint("give a line from 0 (the start of the file) to the number of lines").
			WithDetail("totalLines", len(lines.Lines))
	}
	res := &Result{Path: name, Edits: []EditResult{}, Match: []Rule{}}
	if text == "" {
		res.Notes = append(res.Notes, "The text to insert is empty; nothing was inserted.")
		return [][]byte{content}, res, nil
	}
	t := f.toEOL(text)
	f.scanEOL()
	eol := f.eol
	if eol == "" { // a file of one line or none: the text's own, or LF
		eol = "\n"
		if ok, k := endsWithBreak([]byte(t)); ok {
			eol = t[len(t)-k:]
		}
	}
	at := 0
	if after > 0 {
		at = lines.End(after - 1)
	}
	bodyBreak, _ := endsWithBreak(body)
	endsOpen := at == len(body) && len(body) > 0 && !bodyBreak
	hasBreak, k := endsWithBreak([]byte(t))
	switch {
	case endsOpen:
		// After the last line, which has no line break: it gets one, and
		// the inserted text ends the file without one, as the file did.
		if hasBreak {
			t = t[:len(t)-k]
		}
		t = eol + t
	case !hasBreak:
		t += eol
	}
	reps := []replacement{{start: at, end: at, repl: []byte(t), line: after + 1}}
	parts, changed := [][]byte{[]byte(t)}, true // an empty file gets whole lines
	if len(body) > 0 {
		parts, changed = f.assemble(0, len(body), reps)
	}
	if bom {
		parts = append([][]byte{content[:len(textfile.BOM)]}, parts...)
	}
	res.Changed = changed
	res.Replacements = 1
	res.Edits = []EditResult{{Match: Inserted, Replacements: 1, Lines: []int{after + 1}}}
	res.Match = []Rule{Inserted}
	if !opt.Brief {
		res.FirstChangedLine = after + 1
		if endsOpen {
			res.FirstChangedLine = after
		}
		res.Diff = f.diff(name, reps)
	}
	return parts, res, nil
}
