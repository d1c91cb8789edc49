package merge

// group is a run of changed lines [start, end) of one side, or an empty
// one (start == end) above line start (xdiff's struct xdlgroup).
type group struct{ start, end int }

func (s *side) groupInit() group {
	g := group{}
	for s.isChanged(g.end) {
		g.end++
	}
	return g
}

// next moves g to the next (possibly empty) group; false at the end.
func (s *side) next(g *group) bool {
	if g.end == s.n() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; s.isChanged(g.end); g.end++ {
	}
	return true
}

// previous moves g to the previous group; false at the beginning.
func (s *side) previous(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; s.isChanged(g.start - 1); g.start-- {
	}
	return true
}

// slideDown moves g one line down when the line after it equals its first,
// joining a group it meets (group_slide_down).
func (s *side) slideDown(g *group) bool {
	if g.end < s.n() && s.class[g.start] == s.class[g.end] {
		s.changed[g.start] = false
		g.start++
		s.changed[g.end] = true
		g.end++
		for s.isChanged(g.end) {
			g.end++
		}
		return true
	}
	return false
}

// slideUp moves g one line up when the line before it equals its last
// (group_slide_up).
func (s *side) slideUp(g *group) bool {
	if g.start > 0 && s.class[g.start-1] == s.class[g.end-1] {
		g.start--
		s.changed[g.start] = true
		g.end--
		s.changed[g.end] = false
		for s.isChanged(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact slides each group of changed lines of x as far down as it goes,
// joining groups that meet, and back up to line up with a change of the
// other side o where one is in reach (xdl_change_compact without the
// indent heuristic, which git apply's merge does not ask for).
func compact(x, o *side) {
	g, og := x.groupInit(), o.groupInit()
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther int
			for {
				size := g.end - g.start
				endMatchingOther = -1
				for x.slideUp(&g) {
					mustMove(o.previous(&og), "sliding up")
				}
				earliestEnd = g.end
				if og.end > og.start {
					endMatchingOther = g.end
				}
				for x.slideDown(&g) {
					mustMove(o.next(&og), "sliding down")
					if og.end > og.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliestEnd && endMatchingOther != -1 {
				for og.end == og.start {
					mustMove(x.slideUp(&g), "sliding to match")
					mustMove(o.previous(&og), "sliding to match")
				}
			}
		}
		if !x.next(&g) {
			break
		}
		mustMove(o.next(&og), "moving to the next group")
	}
}

// mustMove is xdiff's BUG(): the two sides' groups always move together.
func mustMove(ok bool, what string) {
	if !ok {
		panic("merge: group sync broken " + what)
	}
}

// buildScript collects the changed lines into changes, first to last
// (xdl_build_script).
func buildScript(x1, x2 *side) []change {
	var rev []change
	for i1, i2 := x1.n(), x2.n(); i1 >= 0 || i2 >= 0; i1, i2 = i1-1, i2-1 {
		if x1.isChanged(i1-1) || x2.isChanged(i2-1) {
			l1, l2 := i1, i2
			for x1.isChanged(i1 - 1) {
				i1--
			}
			for x2.isChanged(i2 - 1) {
				i2--
			}
			rev = append(rev, change{i1: i1, i2: i2, chg1: l1 - i1, chg2: l2 - i2})
		}
	}
	script := make([]change, len(rev))
	for i, c := range rev {
		script[len(rev)-1-i] = c
	}
	return script
}
