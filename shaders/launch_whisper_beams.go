package shaders

import "github.com/harkapp/hark/engine/plan"

// launchWhisperBeams runs one threadgroup: a thread per candidate, pair
// of beams and token column, strided.
func launchWhisperBeams(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	return append(dst, Launch{Function: "whisper_beams", Groups: [3]uint32{1, 1, 1},
		Threads: [3]uint32{simdThreads(256, 256, t), 1, 1}}), nil
}

func init() { register(plan.WhisperBeams, launchWhisperBeams) }
