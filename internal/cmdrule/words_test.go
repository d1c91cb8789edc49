package cmdrule

import (
	"slices"
	"testing"
)

// TestWords: a --verify line is one plain command; what a shell would do
// besides is refused.
func TestWords(t *testing.T) {
	for line, want := range map[string][]string{
		"go test ./...":            {"go", "test", "./..."},
		`python3 -c 'print(1)'`:    {"python3", "-c", "print(1)"},
		`gofmt -l "a b.go"`:        {"gofmt", "-l", "a b.go"},
		"go test | tee out":        nil,
		"go vet; go test":          nil,
		"go test > out":            nil,
		"X=1 go test":              nil,
		"go test $PKG":             nil,
		"gofmt -l *.go":            nil,
		"go test $(go list ./...)": nil,
		"":                         nil,
	} {
		got, ok := Words(line)
		if ok != (want != nil) || !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}
