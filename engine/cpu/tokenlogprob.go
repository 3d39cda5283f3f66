package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// tokenLogprob (plan.TokenLogprobArgs): each row's log-softmax at its
// token, with the host decoder's log-sum-exp (plan.LogSumExp), so word
// probabilities keep the host's values bit for bit.
func (e *Exec) tokenLogprob(d *plan.Dispatch) error {
	a := plan.DecodeTokenLogprob(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	if a.M == 0 {
		return nil
	}
	x, err := e.f32(d, plan.SlotTokenLogprobX, extent(a.M, a.Ldx, a.N))
	if err != nil {
		return err
	}
	ids, err := typedSlice[int32](e, d, plan.SlotTokenLogprobIds, a.M)
	if err != nil {
		return err
	}
	out, err := e.f32(d, plan.SlotTokenLogprobOut, a.M)
	if err != nil {
		return err
	}
	for t, id := range ids {
		if id < 0 || int(id) >= a.N {
			out[t] = float32(math.Inf(-1))
			continue
		}
		row := x[t*a.Ldx : t*a.Ldx+a.N]
		out[t] = row[id] - plan.LogSumExp(row)
	}
	return nil
}
