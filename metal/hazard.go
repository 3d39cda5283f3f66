package metal

import "github.com/harkapp/hark/engine/plan"

// hazards decides where a concurrent compute encoder needs a memory
// barrier. Metal may overlap dispatches of such an encoder until a
// barrier, so a dispatch that reads what an earlier one writes (or writes
// what it reads or writes) must follow a barrier; independent dispatches
// (the Q, K and V projections of one layer, writing disjoint columns) run
// side by side. It keeps the accesses since the last barrier.
type hazards struct {
	pending []access
}

func (h *hazards) reset() { h.pending = h.pending[:0] }

// add records the accesses of the next dispatch and reports whether a
// barrier must precede it (in which case the pending set restarts with it).
func (h *hazards) add(acc []access) bool {
	conflict := false
	for _, a := range acc {
		for _, q := range h.pending {
			if a.buf == q.buf && (a.write || q.write) && a.lo < q.hi && q.lo < a.hi {
				conflict = true
				break
			}
		}
		if conflict {
			break
		}
	}
	if conflict {
		h.pending = h.pending[:0]
	}
	h.pending = append(h.pending, acc...)
	return conflict
}

// arenaBuf is the pseudo buffer id of the per-dispatch scratch arena in
// hazard tracking (plan ids never reach it).
const arenaBuf = plan.NoBuf - 1
