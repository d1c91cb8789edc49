package apply

import (
	"sort"
	"strings"
)

// closeMatch is the file region most like a chunk's old lines.
type closeMatch struct {
	line    int // 0-based first line
	percent int // mean line similarity, 0..100
	diffAt  int // first old line (index) that differs; -1 if none
}

// maxHintPairs bounds the work of the closest-region search (line pairs
// compared); beyond it only windows around lines that match exactly are
// scored.
const maxHintPairs = 400_000

// closest finds the window of len(old) file lines with the highest mean
// similarity to old (Dice coefficient of character bigrams, whitespace
// trimmed). ok is false when nothing scores above 40%.
func closest(file, old []string) (closeMatch, bool) {
	m := len(old)
	if m == 0 || len(file) == 0 {
		return closeMatch{}, false
	}
	ob := make([][]uint32, m)
	for j, s := range old {
		ob[j] = bigrams(s)
	}
	fb := make(map[int][]uint32)
	fbig := func(i int) []uint32 {
		b, ok := fb[i]
		if !ok {
			b = bigrams(file[i])
			fb[i] = b
		}
		return b
	}
	var starts []int
	last := len(file) - m
	if last < 0 {
		last = 0
	}
	if len(file)*m <= maxHintPairs {
		for s := 0; s <= last; s++ {
			starts = append(starts, s)
		}
	} else {
		seen := map[int]bool{}
		for j, o := range old {
			t := strings.TrimSpace(o)
			if t == "" {
				continue
			}
			for i, f := range file {
				if strings.TrimSpace(f) == t {
					s := i - j
					if s >= 0 && s <= last && !seen[s] {
						seen[s] = true
						starts = append(starts, s)
					}
				}
			}
			if len(starts) > 2000 {
				break
			}
		}
		sort.Ints(starts)
	}
	best := closeMatch{line: -1}
	bestScore := -1.0
	for _, s := range starts {
		total := 0.0
		for j := 0; j < m; j++ {
			if s+j >= len(file) {
				break
			}
			total += similarity(old[j], file[s+j], ob[j], fbig(s+j))
		}
		score := total / float64(m)
		if score > bestScore {
			bestScore, best.line = score, s
		}
	}
	if best.line < 0 || bestScore < 0.4 {
		return closeMatch{}, false
	}
	best.percent = int(bestScore*100 + 0.5)
	if best.percent == 100 {
		best.percent = 99 // it did not match, after all
	}
	best.diffAt = -1
	for j := 0; j < m && best.line+j < len(file); j++ {
		if file[best.line+j] != old[j] {
			best.diffAt = j
			break
		}
	}
	return best, true
}

func similarity(a, b string, ab, bb []uint32) float64 {
	if a == b {
		return 1
	}
	ta, tb := strings.TrimSpace(a), strings.TrimSpace(b)
	if ta == tb {
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

// bigrams returns the sorted byte bigrams of s, whitespace trimmed.
func bigrams(s string) []uint32 {
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
