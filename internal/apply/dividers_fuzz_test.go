package apply

import (
	"strings"
	"testing"

	"github.com/hunk-dev/hunk/internal/patchparse"
)

// FuzzBlockDividers writes Markdown-like files full of lines that read as a
// block's divider (headings underlined with =, merge conflicts), picks
// a region and its replacement, writes them as aider's block (seven-
// character markers, as models write them), and requires that applying it
// gives exactly the file meant, or a refusal: never another tree. (A block
// whose SEARCH or REPLACE cuts a merge conflict in two, where a reading
// resolving it whole fits too, is read as that one: the documented rule.)
func FuzzBlockDividers(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08"), uint8(1), uint8(2), uint8(3))
	f.Add([]byte("\x00\x00\x01\x01\x02\x02\x03\x03\x04"), uint8(0), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, from, n, news uint8) {
		words := []string{"Title", "=======", "", "text", "=====", "<<<<<<< HEAD", ">>>>>>> main", "ours", "theirs", "Usage"}
		pick := func(i int) string {
			if len(data) == 0 {
				return "x"
			}
			return words[int(data[i%len(data)])%len(words)]
		}
		var file []string
		for i := 0; i < 4+len(data)%12; i++ {
			file = append(file, pick(i))
		}
		lo := int(from) % len(file)
		hi := min(len(file), lo+1+int(n)%4)
		var repl []string
		for i := 0; i < int(news)%4; i++ {
			repl = append(repl, pick(int(news)+3*i+1))
		}
		search := file[lo:hi]
		if strings.TrimSpace(strings.Join(search, "")) == "" {
			return // an empty SEARCH creates a file
		}
		want := append(append(append([]string(nil), file[:lo]...), repl...), file[hi:]...)
		text := "f.md\n<<<<<<< SEARCH\n" + joinLines(search) + "=======\n" + joinLines(repl) + ">>>>>>> REPLACE\n"
		p, err := patchparse.Parse(text, patchparse.Options{Strip: patchparse.DefaultStrip})
		if err != nil || len(p.Files) != 1 || p.Files[0].Kind != patchparse.Update {
			return
		}
		got, err := ApplyChunks("f.md", []byte(joinLines(file)), p.Files[0].Chunks, Options{format: p.Format})
		if err != nil {
			return // refusing is allowed
		}
		if string(got) != joinLines(want) && !cutsConflict(search, repl) {
			t.Fatalf("wrong tree\nfile:\n%s\nblock:\n%s\ngot:\n%s\nwant:\n%s", joinLines(file), text, got, joinLines(want))
		}
	})
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// cutsConflict reports whether a side holds half a merge conflict.
func cutsConflict(sides ...[]string) bool {
	for _, side := range sides {
		depth := 0
		for _, l := range side {
			switch {
			case strings.HasPrefix(l, "<<<<<<<"):
				depth++
			case strings.HasPrefix(l, ">>>>>>>"):
				depth--
			}
			if depth < 0 {
				return true
			}
		}
		if depth != 0 {
			return true
		}
	}
	return false
}
