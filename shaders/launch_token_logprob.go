package shaders

import "github.com/harkapp/hark/engine/plan"

// launchTokenLogprob runs one threadgroup per row.
func launchTokenLogprob(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeTokenLogprob(d)
	return rowLaunch("token_logprob", uint32(a.N), uint32(a.M), t, dst), nil
}

func init() { register(plan.TokenLogprob, launchTokenLogprob) }
