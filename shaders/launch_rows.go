package shaders

// rowLaunch is the launch of a kernel that runs one threadgroup per row of
// n logits (whisper_filter, token_logprob: a reduction over the row), up to
// 1024 threads; nothing for an empty product.
func rowLaunch(fn string, n, m uint32, t *Tuning, dst []Launch) []Launch {
	if n == 0 || m == 0 {
		return dst
	}
	return append(dst, Launch{Function: fn, Groups: [3]uint32{m, 1, 1}, Threads: [3]uint32{simdThreads(n, 1024, t), 1, 1}})
}
