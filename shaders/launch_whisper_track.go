package shaders

import "github.com/harkapp/hark/engine/plan"

// launchWhisperTrack runs one threadgroup over the vocabulary; its
// repetition guard needs a thread per unit length (at most 32).
func launchWhisperTrack(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeWhisperTrack(d)
	if a.N == 0 {
		return dst, nil
	}
	return append(dst, Launch{Function: "whisper_track", Groups: [3]uint32{1, 1, 1},
		Threads: [3]uint32{simdThreads(uint32(max(a.N, plan.TrackRepeatMaxUnit)), 1024, t), 1, 1}}), nil
}

func init() { register(plan.WhisperTrack, launchWhisperTrack) }
