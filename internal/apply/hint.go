package apply

import (
	"sort"
	"strings"

	"github.com/hunk-dev/hunk/internal/textfile"
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
		ob[j] = textfile.Bigrams(s)
	}
	fb := make(map[int][]uint32)
	fbig := func(i int) []uint32 {
		b, ok := fb[i]
		if !ok {
			b = textfile.Bigrams(file[i])
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
			total += textfile.Similarity(old[j], file[s+j], ob[j], fbig(s+j))
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
