package merge

// xdiff's Myers algorithm (xdiffi.c): a middle snake found from both ends,
// divide and conquer, and its heuristics that stop an expensive search at
// a good enough point. The numbers are xdiff's; they decide where a long
// diff's changes fall, so they are not ours to tune.
const (
	maxCostMin = 256 // XDL_MAX_COST_MIN
	heurMinCos = 256 // XDL_HEUR_MIN_COST
	snakeCnt   = 20  // XDL_SNAKE_CNT
	kHeur      = 4   // XDL_K_HEUR
	lineMax    = int(^uint(0) >> 1)
)

// myers holds one diff's diagonals (kvdf and kvdb, indexed from fo and bo:
// a diagonal may be negative) and its cost bound.
type myers struct {
	x1, x2 *side
	kv     []int
	fo, bo int
	mxcost int
}

func (m *myers) h1(i int) int { return m.x1.class[m.x1.ref[i]] }
func (m *myers) h2(i int) int { return m.x2.class[m.x2.ref[i]] }

// split is a point where the box's shortest edit path crosses (spl), and
// whether each half must be searched to its minimum.
type split struct {
	i1, i2       int
	minLo, minHi bool
}

// doDiff marks the changed lines of both sides (xdl_do_diff, Myers).
func doDiff(x1, x2 *side) {
	ndiags := len(x1.ref) + len(x2.ref) + 3
	m := &myers{x1: x1, x2: x2, kv: make([]int, 2*ndiags+2)}
	m.fo = len(x2.ref) + 1
	m.bo = ndiags + len(x2.ref) + 1
	m.mxcost = max(bogosqrt(ndiags), maxCostMin)
	m.recsCmp(0, len(x1.ref), 0, len(x2.ref), false)
}

// recsCmp marks what changed in the box [off1, lim1) x [off2, lim2)
// (xdl_recs_cmp).
func (m *myers) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	for off1 < lim1 && off2 < lim2 && m.h1(off1) == m.h2(off2) {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && m.h1(lim1-1) == m.h2(lim2-1) {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			m.x2.changed[m.x2.ref[off2]] = true
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			m.x1.changed[m.x1.ref[off1]] = true
		}
	default:
		spl := m.split(off1, lim1, off2, lim2, needMin)
		m.recsCmp(off1, spl.i1, off2, spl.i2, spl.minLo)
		m.recsCmp(spl.i1, lim1, spl.i2, lim2, spl.minHi)
	}
}

func (m *myers) f(d int) *int { return &m.kv[m.fo+d] }
func (m *myers) b(d int) *int { return &m.kv[m.bo+d] }

// split finds where to divide the box (xdl_split): the middle snake, or,
// past the cost bound, the furthest reaching point.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) split {
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	*m.f(fmid) = off1
	*m.b(bmid) = lim1
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*m.f(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*m.f(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *m.f(d - 1) >= *m.f(d + 1) {
				i1 = *m.f(d - 1) + 1
			} else {
				i1 = *m.f(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && m.h1(i1) == m.h2(i2) {
				i1++
				i2++
			}
			if i1-prev1 > snakeCnt {
				gotSnake = true
			}
			*m.f(d) = i1
			if odd && bmin <= d && d <= bmax && *m.b(d) <= i1 {
				return split{i1, i2, true, true}
			}
		}
		if bmin > dmin {
			bmin--
			*m.b(bmin - 1) = lineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*m.b(bmax + 1) = lineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *m.b(d - 1) < *m.b(d + 1) {
				i1 = *m.b(d - 1)
			} else {
				i1 = *m.b(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && m.h1(i1-1) == m.h2(i2-1) {
				i1--
				i2--
			}
			if prev1-i1 > snakeCnt {
				gotSnake = true
			}
			*m.b(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *m.f(d) {
				return split{i1, i2, true, true}
			}
		}
		if needMin {
			continue
		}
		if gotSnake && ec > heurMinCos {
			if spl, ok := m.interesting(off1, lim1, off2, lim2, fmin, fmax, bmin, bmax, ec); ok {
				return spl
			}
		}
		if ec >= m.mxcost {
			return m.furthest(off1, lim1, off2, lim2, fmin, fmax, bmin, bmax)
		}
	}
}

// interesting samples the diagonals for one that has gone far along a good
// snake (xdl_split's XDL_K_HEUR heuristic), forward first.
func (m *myers) interesting(off1, lim1, off2, lim2, fmin, fmax, bmin, bmax, ec int) (split, bool) {
	fmid, bmid := off1-off2, lim1-lim2
	var spl split
	best := 0
	for d := fmax; d >= fmin; d -= 2 {
		dd := abs(d - fmid)
		i1 := *m.f(d)
		i2 := i1 - d
		v := (i1 - off1) + (i2 - off2) - dd
		if v > kHeur*ec && v > best && off1+snakeCnt <= i1 && i1 < lim1 && off2+snakeCnt <= i2 && i2 < lim2 {
			for k := 1; m.h1(i1-k) == m.h2(i2-k); k++ {
				if k == snakeCnt {
					best = v
					spl.i1, spl.i2 = i1, i2
					break
				}
			}
		}
	}
	if best > 0 {
		spl.minLo, spl.minHi = true, false
		return spl, true
	}
	for d := bmax; d >= bmin; d -= 2 {
		dd := abs(d - bmid)
		i1 := *m.b(d)
		i2 := i1 - d
		v := (lim1 - i1) + (lim2 - i2) - dd
		if v > kHeur*ec && v > best && off1 < i1 && i1 <= lim1-snakeCnt && off2 < i2 && i2 <= lim2-snakeCnt {
			for k := 0; m.h1(i1+k) == m.h2(i2+k); k++ {
				if k == snakeCnt-1 {
					best = v
					spl.i1, spl.i2 = i1, i2
					break
				}
			}
		}
	}
	if best > 0 {
		spl.minLo, spl.minHi = false, true
		return spl, true
	}
	return spl, false
}

// furthest is the furthest reaching point of either search, taken when the
// cost bound is met (xdl_split's "enough is enough").
func (m *myers) furthest(off1, lim1, off2, lim2, fmin, fmax, bmin, bmax int) split {
	fbest, fbest1 := -1, -1
	for d := fmax; d >= fmin; d -= 2 {
		i1 := min(*m.f(d), lim1)
		i2 := i1 - d
		if lim2 < i2 {
			i1, i2 = lim2+d, lim2
		}
		if fbest < i1+i2 {
			fbest, fbest1 = i1+i2, i1
		}
	}
	bbest, bbest1 := lineMax, lineMax
	for d := bmax; d >= bmin; d -= 2 {
		i1 := max(off1, *m.b(d))
		i2 := i1 - d
		if i2 < off2 {
			i1, i2 = off2+d, off2
		}
		if i1+i2 < bbest {
			bbest, bbest1 = i1+i2, i1
		}
	}
	if (lim1+lim2)-bbest < fbest-(off1+off2) {
		return split{fbest1, fbest - fbest1, true, false}
	}
	return split{bbest1, bbest - bbest1, false, true}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
