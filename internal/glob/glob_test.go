package glob

import "testing"

func TestMinimatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a/b/x.go", false}, // minimatch: the whole path
		{"*.go", "x.go", true},
		{".*", ".env", true},
		{"*", ".hidden", true}, // dot: true
		{"**", "a/.git/config", true},
		{"*.{go,md}", "x.md", true},
		{"*.{go,md}", "x.py", false},
		{"{src,lib}/**/*.{js,ts}", "lib/a/b.ts", true},
		{"{a,{b,c}}", "c", true},
		{"{a", "{a", true},
		{"[!x]*", "yes", true},
		{"[!x]*", "xno", false},
		{"!*.go", "x.py", true},
		{"!*.go", "x.go", false},
		{"node_modules", "node_modules", true},
		{"*.go", "a/b/x.py", false},
		{"**/*.go", "x.go", true},
		{"**/*.go", "a/b/x.go", true},
		{"src/**", "src/a/b", true},
		{"src/*/x.go", "src/a/x.go", true},
		{"src/*/x.go", "src/a/b/x.go", false},
		{"a/**/b/*.txt", "a/b/c.txt", true},
		{"", "a", false},
		{"{,,,,,,,,,,,,,,,,,,,,,,,,,,,,}{,,,,,,,,,,,,,,,,,,,,,,,,,,,,}{,,,,,,,,,,,,,,,,,,,,,,,,,,,,}{,,,,,,,,,,,,,,,,,,,,,,,,,,,,}z", "y", false},
		{"[", "a", false},
		{"**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/z", "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y", false},
	} {
		if got := Minimatch(c.pattern, c.path); got != c.want {
			t.Errorf("Minimatch(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func FuzzMinimatch(f *testing.F) {
	for _, s := range [][2]string{{"**/*.go", "a/b.go"}, {"a/**/**/b", "a/x/y/b"}, {"[a-", "a"}, {"/**/", "//"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		Minimatch(pattern, path)
	})
}
