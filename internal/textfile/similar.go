package textfile

import (
	"sort"
	"strings"
)

// Similarity is the one measure of how alike two lines are, from 0 to 1,
// behind every "N% similar" hunk prints (apply-patch's closest region and
// edit's closest candidates): 1 for equal lines, 0.95 for lines equal but
// for surrounding whitespace, else the Sørensen–Dice coefficient of their
// byte bigrams (whitespace trimmed). ab and bb are Bigrams(a) and
// Bigrams(b), which a caller comparing one line with many computes once.
func Similarity(a, b string, ab, bb []uint32) float64 {
	if a == b {
		return 1
	}
	if strings.TrimSpace(a) == strings.TrimSpace(b) {
		return 0.95
	}
	if len(ab) == 0 || len(bb) == 0 {
		return 0
	}
	// Sorted multisets: count the common bigrams by merging.
	common, i, j := 0, 0, 0
	for i < len(ab) && j < len(bb) {
		switch {
		case ab[i] == bb[j]:
			common++
			i++
			j++
		case ab[i] < bb[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(ab)+len(bb))
}

// Bigrams returns the sorted byte bigrams of s, whitespace trimmed (a
// one-byte line is its one byte).
func Bigrams(s string) []uint32 {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		if s == "" {
			return nil
		}
		return []uint32{uint32(s[0])}
	}
	b := make([]uint32, 0, len(s)-1)
	for i := 0; i+1 < len(s); i++ {
		b = append(b, uint32(s[i])<<8|uint32(s[i+1]))
	}
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return b
}
