package patchparse

import "strings"

// aider's "whole" edit format: a file's path alone on a line, then the
// file's entire new content in a fence:
//
//	path/to/file.py
//	```python
//	the whole file
//	```
//
// It is read as the search-replace format's (aider's) when the text has no
// SEARCH/REPLACE block, and only when every fence in it is such a file:
// prose with an example in a fence is no patch. Each file is an Add that
// may replace the file there (FileOp.Whole): apply keeps the file's line
// endings and mode, and refuses content that leaves out the file's lines
// behind a placeholder ("# ... rest of the code ...").

// wholeFile is one file of the format: its path, content and lines.
type wholeFile struct {
	path                string
	content             []string
	line, pathAt, close int // 0-based indexes of the opening fence, the path line and the closing fence
}

// wholeFiles finds the format's files in [in.tlo, in.thi): ok is false
// when a fence is not one (no path line above it, a diff inside, no
// closing fence), or there is none.
func wholeFiles(in *input) (files []wholeFile, ok bool) {
	L := in.L
	for i := in.tlo; i < in.thi; i++ {
		t := strings.TrimSpace(L.at(i))
		if !isFence(t) {
			continue
		}
		j := i - 1
		for j >= in.tlo && strings.TrimSpace(L.at(j)) == "" {
			j--
		}
		if j < in.tlo {
			return nil, false
		}
		path, named := wholePath(strings.TrimSpace(L.at(j)))
		if !named || (len(files) > 0 && j <= files[len(files)-1].close) {
			return nil, false
		}
		closing := closingFence(t)
		k := i + 1
		for k < in.thi && strings.TrimRight(L.at(k), " \t\r") != closing && strings.TrimSpace(L.at(k)) != closing {
			k++
		}
		if k >= in.thi {
			return nil, false
		}
		f := wholeFile{path: path, line: i, pathAt: j, close: k}
		for n := i + 1; n < k; n++ {
			f.content = append(f.content, strings.TrimSuffix(L.at(n), "\r"))
		}
		if len(f.content) > 0 && looksLikePatch(f.content[0]) {
			return nil, false
		}
		files = append(files, f)
		i = k
	}
	return files, len(files) > 0
}

// wholePath reads a path line: one word with a dot or a slash in it (a
// file's name: "main.go", "src/app.py", "Makefile" with a directory),
// maybe in backticks or bold, after a heading's hashes, before a colon.
func wholePath(t string) (string, bool) {
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	t = strings.Trim(strings.TrimSuffix(t, ":"), "*`'\"")
	if t == "" || strings.ContainsAny(t, " \t<>|") || len(t) > 4096 || !strings.ContainsAny(t, "./") ||
		!strings.ContainsFunc(t, isWordChar) || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "/") {
		return "", false
	}
	return t, true
}

// closingFence is the line that closes the fence opened by t: its run of
// backticks or tildes alone, or the tag's closing one.
func closingFence(t string) string {
	if t[0] == '`' || t[0] == '~' {
		n := 0
		for n < len(t) && t[n] == t[0] {
			n++
		}
		return t[:n]
	}
	tag := strings.TrimPrefix(t, "<")
	tag, _, _ = strings.Cut(tag, ">")
	tag, _, _ = strings.Cut(tag, " ")
	return "</" + tag + ">"
}

// looksLikePatch reports whether a fence's first line begins a patch (a
// diff, a Codex patch), which is not a file's content.
func looksLikePatch(l string) bool {
	for _, p := range []string{"*** Begin Patch", "diff --git ", "--- ", "@@ ", "Index: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// wholePatch is the files as Adds that may replace the file there.
func wholePatch(files []wholeFile) (*Patch, error) {
	p := &Patch{Format: SearchReplace}
	seen := map[string]int{}
	for _, f := range files {
		if at, dup := seen[f.path]; dup {
			return nil, hunkError(f.pathAt, "give each file's whole content once", "%s: the file's whole content is given twice (lines %d and %d)", f.path, at+1, f.pathAt+1)
		}
		seen[f.path] = f.pathAt
		p.Files = append(p.Files, &FileOp{Kind: Add, Path: f.path, Line: f.line + 1, Content: f.content, Whole: true})
	}
	return p, nil
}
