package apply

import (
	"bytes"

	"github.com/hunk-dev/hunk/internal/placeholder"
	"github.com/hunk-dev/hunk/internal/result"
	"github.com/hunk-dev/hunk/internal/textfile"
)

// shortWhole: a whole file's content under half the lines of a file of at
// least this many reads as a part of it (a snippet), not the file.
const shortWhole = 10

// wholeFile plans a whole file's content (aider's whole format) over the
// file there: written in the file's line endings (and without a final
// newline where it has none), its mode kept; refused where the content
// leaves the file's lines out behind a placeholder, or is too short to be
// the whole file (a snippet would drop the rest).
func (v *overlay) wholeFile(o *op, s *state, fr *FileResult) (before, after []byte, noDiff bool, err error) {
	disp := v.opt.display(o.name)
	if before, err = v.read(o.name, s); err != nil {
		return nil, nil, false, err
	}
	if err := textfile.CheckText(disp, before); err != nil {
		return nil, nil, false, err
	}
	after = addContent(o.src)
	if bytes.Count(before, []byte("\r\n"))*2 > bytes.Count(before, []byte("\n")) {
		after = toCRLF(after)
	}
	if len(before) > 0 && before[len(before)-1] != '\n' {
		after = bytes.TrimSuffix(bytes.TrimSuffix(after, []byte("\n")), []byte("\r"))
	}
	if !v.opt.AllowPlaceholders {
		if err := placeholder.InText(disp, "the file's whole content", string(before), string(after)); err != nil {
			return nil, nil, false, err
		}
	}
	if was, now := bytes.Count(before, []byte("\n")), bytes.Count(after, []byte("\n")); was >= shortWhole && now*2 < was {
		return nil, nil, false, result.Errorf(result.LazyEdit, "%s: the whole-file content has %d lines where the file has %d: it reads as a part of the file, and writing it would drop the rest; nothing was written", disp, now, was).
			WithHint("give the file's entire content, or change only some lines with SEARCH/REPLACE blocks; a file meant to shrink so is written with 'hunk write'").At(o.name)
	}
	fr.Action = "modify"
	if bytes.Equal(before, after) {
		fr.Action = "unchanged"
		return before, before, true, nil
	}
	s.data, s.parts, s.touched, s.asLink = after, nil, true, false
	return before, after, false, nil
}
