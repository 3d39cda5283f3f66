package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// ewThreads is the threadgroup width of the element-wise kernels: wide
// enough to hide latency, and a multiple of every SIMD width.
const ewThreads = 256

// elementwise launches fn over m rows of n, one thread per element.
func elementwise(fn string) launcher {
	return func(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
		a := plan.DecodeRows(d)
		n, m := uint32(a.N), uint32(a.M)
		if n == 0 || m == 0 {
			return dst, nil
		}
		w := min(ewThreads, roundUp(n, t.SIMDWidth))
		return append(dst, Launch{
			Function: fn,
			Groups:   [3]uint32{(n + w - 1) / w, m, 1},
			Threads:  [3]uint32{w, 1, 1},
		}), nil
	}
}

func roundUp(n, k uint32) uint32 { return (n + k - 1) / k * k }

func launchCopy(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	var fn string
	switch d.Type {
	case ggml.F32:
		fn = "copy_f32"
	case ggml.F16:
		fn = "copy_f16"
	case ggml.BF16:
		fn = "copy_bf16"
	default:
		return dst, fmt.Errorf("shaders: copy to %s is not supported (f32, f16 or bf16)", d.Type)
	}
	return elementwise(fn)(d, t, dst)
}

// launchSoftmax runs one threadgroup per row; short rows get fewer threads.
func launchSoftmax(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeSoftmax(d)
	n, m := uint32(a.N), uint32(a.M)
	if n == 0 || m == 0 {
		return dst, nil
	}
	w := min(ewThreads, roundUp(n, t.SIMDWidth))
	return append(dst, Launch{Function: "softmax", Groups: [3]uint32{m, 1, 1}, Threads: [3]uint32{w, 1, 1}}), nil
}

func init() {
	register(plan.Add, elementwise("add"))
	register(plan.Scale, elementwise("scale"))
	register(plan.GELU, elementwise("gelu"))
	register(plan.SiLUMul, elementwise("silu_mul"))
	register(plan.GELUMul, elementwise("gelu_mul"))
	register(plan.Copy, launchCopy)
	register(plan.Softmax, launchSoftmax)
}
