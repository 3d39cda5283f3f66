package metal

import "github.com/harkapp/hark/engine/plan"

// arenaBuf is the pseudo buffer id of the per-dispatch scratch arena in
// hazard tracking (plan ids never reach it). Metal may overlap the
// dispatches of a concurrent compute encoder until a barrier, so the
// encoder places one where plan.Hazards says a dispatch depends on those
// before it.
const arenaBuf = plan.NoBuf - 1
