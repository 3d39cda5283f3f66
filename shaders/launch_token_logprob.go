package shaders

import "github.com/harkapp/hark/engine/plan"

// launchTokenLogprob runs one threadgroup per row.
func launchTokenLogprob(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeTokenLogprob(d)
	n, m := uint32(a.N), uint32(a.M)
	if n == 0 || m == 0 {
		return dst, nil
	}
	return append(dst, Launch{Function: "token_logprob", Groups: [3]uint32{m, 1, 1},
		Threads: [3]uint32{simdThreads(n, 1024, t), 1, 1}}), nil
}

func init() { register(plan.TokenLogprob, launchTokenLogprob) }
