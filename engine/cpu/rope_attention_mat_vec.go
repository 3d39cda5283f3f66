package cpu

import "github.com/harkapp/hark/engine/plan"

// ropeAttentionMatVec (plan.RopeAttentionMatVecArgs): RopeAttention into
// the att row, then the output product onto out, the two dispatches it
// stands for run as they would have been, bit for bit (a GPU folds the
// product into the attention launch; the CPU gains nothing from it).
func (e *Exec) ropeAttentionMatVec(d *plan.Dispatch) error {
	p := plan.DecodeRopeAttentionMatVec(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	ra := p.RopeAttention().Dispatch()
	if err := e.ropeAttention(&ra); err != nil || p.M == 0 || p.NHead == 0 {
		return err
	}
	mv := p.MatVec().Dispatch()
	return e.matProduct(&mv)
}

// productOf is the product dispatch d runs: d itself, or a
// RopeAttentionMatVec's output product (packProducts packs its weights
// as a MatVec's).
func productOf(d *plan.Dispatch) (plan.Dispatch, bool) {
	switch d.Kernel {
	case plan.MatVec, plan.MatMul, plan.RMSNormMatVec, plan.LayerNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec:
		return *d, true
	case plan.RopeAttentionMatVec:
		p := plan.DecodeRopeAttentionMatVec(d)
		return p.MatVec().Dispatch(), true
	}
	return plan.Dispatch{}, false
}
