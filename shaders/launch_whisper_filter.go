package shaders

import "github.com/harkapp/hark/engine/plan"

// launchWhisperFilter runs one threadgroup per row (sequence).
func launchWhisperFilter(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeWhisperFilter(d)
	n, m := uint32(a.N), uint32(a.M)
	if n == 0 || m == 0 {
		return dst, nil
	}
	return append(dst, Launch{Function: "whisper_filter", Groups: [3]uint32{m, 1, 1},
		Threads: [3]uint32{simdThreads(n, 1024, t), 1, 1}}), nil
}

func init() { register(plan.WhisperFilter, launchWhisperFilter) }
