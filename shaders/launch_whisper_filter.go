package shaders

import "github.com/harkapp/hark/engine/plan"

// launchWhisperFilter runs one threadgroup per row (sequence).
func launchWhisperFilter(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeWhisperFilter(d)
	return rowLaunch("whisper_filter", uint32(a.N), uint32(a.M), t, dst), nil
}

func init() { register(plan.WhisperFilter, launchWhisperFilter) }
