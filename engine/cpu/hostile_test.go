package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/plan"
)

// TestHostileParamsNeverPanic mutates the parameters and offsets of a real
// plan at random: every run must either succeed or return an error.
func TestHostileParamsNeverPanic(t *testing.T) {
	h, _ := decodePlan(t)
	orig := append([]plan.Dispatch(nil), h.pass.Ops...)
	r := rand.New(rand.NewPCG(42, 43))
	values := []uint32{0, 1, 2, 3, 7, 16, 64, 65, 1000, 1 << 20, 1 << 31, math.MaxUint32}
	iters := 3000
	if testing.Short() {
		iters = 600
	}
	var ran, failed int
	for it := 0; it < iters; it++ {
		i := r.IntN(len(orig))
		d := orig[i]
		for n := 1 + r.IntN(3); n > 0; n-- {
			v := values[r.IntN(len(values))]
			if r.IntN(3) == 0 {
				v = uint32(r.IntN(300))
			}
			if r.IntN(5) == 0 {
				b := r.IntN(int(d.NBind))
				if d.Bind[b].Buf != plan.NoBuf {
					d.Bind[b].Off = uint64(v)
				}
				continue
			}
			d.P[r.IntN(14)] = v // raw words on purpose: values no record would hold
		}
		h.pass.Ops = []plan.Dispatch{d}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("iteration %d: %s panicked: %v\nparams %v binds %v", it, d.Kernel, p, d.P, d.Bind[:d.NBind])
				}
			}()
			ex, err := h.be.Load(&h.p)
			if err != nil {
				return
			}
			if ex.Run(0, &plan.Vars{plan.VarPos: int64(r.IntN(40)), plan.VarKVLen: int64(r.IntN(40)), plan.VarSlot: int64(r.IntN(40))}) == nil {
				ran++
			} else {
				failed++
			}
		}()
	}
	// both outcomes must be common, or the mutations test nothing
	t.Logf("%d ran, %d rejected at run, %d rejected at load", ran, failed, iters-ran-failed)
	if ran < iters/20 || failed < iters/5 {
		t.Fatalf("mutations too tame or too wild: %d ran, %d failed", ran, failed)
	}
}
