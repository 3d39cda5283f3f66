package plan

// RepeatCut is Whisper's repetition guard, written once for the host
// decoder and the CPU's WhisperTrack: a loop is a unit of at most maxUnit
// tokens repeated at least minRepeats times, minSpan tokens in all, at the
// end of toks; tokens from tsBegin on (timestamps) compare equal to each
// other, since they advance with every repeat. It returns the length that
// keeps the loop's first occurrence (the smallest such unit's), or -1 when
// toks does not end in a loop.
func RepeatCut(toks []int32, tsBegin int32, maxUnit, minRepeats, minSpan int) int {
	n := len(toks)
	same := func(a, b int32) bool { return a == b || (a >= tsBegin && b >= tsBegin) }
	for unit := 1; unit <= maxUnit && minRepeats*unit <= n; unit++ {
		reps := 1
		for (reps+1)*unit <= n {
			match := true
			for i := 1; i <= unit; i++ {
				if !same(toks[n-i], toks[n-i-reps*unit]) {
					match = false
					break
				}
			}
			if !match {
				break
			}
			reps++
		}
		if reps >= minRepeats && reps*unit >= minSpan {
			return n - (reps-1)*unit
		}
	}
	return -1
}
