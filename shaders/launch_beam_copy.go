package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// launchBeamCopy runs one thread per (element, position), each moving
// that element of every sequence: grid (ceil(width/threads), n).
func launchBeamCopy(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	var fn string
	switch d.Type {
	case ggml.F32:
		fn = "beam_copy_4"
	case ggml.F16, ggml.BF16:
		fn = "beam_copy_2"
	default:
		return dst, fmt.Errorf("shaders: beam copy of a %s cache is not supported (f32, f16 or bf16)", d.Type)
	}
	a := plan.DecodeBeamCopy(d)
	w, n := uint32(a.Width), uint32(a.N)
	if w == 0 || n == 0 || a.Seqs == 0 {
		return dst, nil
	}
	tg := min(ewThreads, roundUp(w, t.SIMDWidth))
	return append(dst, Launch{Function: fn, Groups: [3]uint32{(w + tg - 1) / tg, n, 1}, Threads: [3]uint32{tg, 1, 1}}), nil
}

func init() { register(plan.BeamCopy, launchBeamCopy) }
