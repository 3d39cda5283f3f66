package shaders

import "github.com/harkapp/hark/engine/plan"

// Kernels that run one threadgroup per row of n logits (a reduction over
// the row), up to 1024 threads: token_logprob.
func init() {
	register(plan.TokenLogprob, rowLauncher("token_logprob", func(d *plan.Dispatch) (int, int) { a := plan.DecodeTokenLogprob(d); return a.N, a.M }))
}

// rowLauncher is the launch rule of such a kernel fn, whose row length n
// and row count m dims decodes; nothing for an empty product.
func rowLauncher(fn string, dims func(*plan.Dispatch) (n, m int)) launcher {
	return func(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
		n, m := dims(d)
		if n == 0 || m == 0 {
			return dst, nil
		}
		return append(dst, Launch{Function: fn, Groups: [3]uint32{uint32(m), 1, 1}, Threads: [3]uint32{simdThreads(uint32(n), 1024, t), 1, 1}}), nil
	}
}
