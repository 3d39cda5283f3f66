package shaders

import "github.com/harkapp/hark/engine/plan"

// Launch rules of rms_norm and layer_norm (norm.metal): one threadgroup per
// row, threads striding over the row.

func init() {
	register(plan.RMSNorm, launchNorm)
	register(plan.LayerNorm, launchNorm)
}

func launchNorm(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeNorm(d)
	dim, rows := uint32(a.Dim), uint32(a.Rows)
	if rows == 0 || dim == 0 {
		return dst, nil
	}
	return append(dst, Launch{
		Function: d.Kernel.String(),
		Groups:   [3]uint32{rows, 1, 1},
		Threads:  [3]uint32{simdThreads(dim, normKnob(t.NormThreads, 256), t), 1, 1},
	}), nil
}

// simdThreads is n rounded up to whole SIMD-groups, at most limit (itself
// rounded down to whole SIMD-groups, and at most the pipeline's maximum).
func simdThreads(n, limit uint32, t *Tuning) uint32 {
	w := normKnob(t.SIMDWidth, 32)
	limit = min(limit, normKnob(t.MaxThreads, 1024))
	limit = max(w, limit/w*w)
	n = (n + w - 1) / w * w
	return max(w, min(n, limit))
}

// normKnob is a tuning value, or def where the family table leaves it 0.
func normKnob(v, def uint32) uint32 {
	if v == 0 {
		return def
	}
	return v
}
